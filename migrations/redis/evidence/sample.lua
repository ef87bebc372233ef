-- sample: what the sampler reads a few times a second. The oldest job not yet delivered
-- is the first entry after the group's last-delivered id (every entry is added at the
-- tail, so arrival order is id order).
-- Returns {now µs, due µs of the oldest undelivered job or nil, entries in the stream,
-- deliveries pending (claimed, not yet acknowledged), executions started}.
local now = now_us()
local last = '0-0'
for _, g in ipairs(redis.call('XINFO', 'GROUPS', JOBS)) do
  local f = fields_of(g)
  if f.name == GROUP then last = f['last-delivered-id'] end
end
local first = redis.call('XRANGE', JOBS, '(' .. last, '+', 'COUNT', 1)
local due = false
if #first > 0 then due = tonumber(fields_of(first[1][2]).due) end
local pending = redis.call('XPENDING', JOBS, GROUP)[1]
return {now, due, redis.call('XLEN', JOBS), pending, redis.call('HLEN', EXEC)}
