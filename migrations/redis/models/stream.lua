-- The stream model (layout `stream`): one stream read by one consumer group. A job is
-- an entry; a claim is a delivery (an entry in the group's pending entries list, owned
-- by one consumer); finishing it is XACK + XDEL. A job put back goes to the tail as a
-- new entry: a stream cannot put an entry back where it was.
local ENTRY = INDEX

-- The entry id of `job` while `consumer` holds its delivery, else nil: ownership is
-- the group's pending entries list, as a Redis Streams worker would ask it (XPENDING).
local function held_by(job, consumer)
  local id = redis.call('HGET', ENTRY, job)
  if not id then return nil end
  if #redis.call('XPENDING', JOBS, GROUP, id, id, 1, consumer) == 0 then return nil end
  return id
end

-- The fields of `job`'s entry `id`: q (queue), a (attempts before), due (µs), p.
local function fields(job, id)
  local r = redis.call('XRANGE', JOBS, id, id)
  if #r == 0 then return nil end
  return fields_of(r[1][2])
end

-- A delivery finished, one way or another: out of the group and out of the stream.
local function settle(job, id)
  redis.call('XACK', JOBS, GROUP, id)
  redis.call('XDEL', JOBS, id)
  redis.call('HDEL', EXEC, job)
end

-- `job` at the stream's tail as a new entry: the field order is what the claim reads
-- by position. A stream has one order, arrival: a priority is not kept.
local function enqueue(job, queue, attempt, due_us, payload, _)
  local id = redis.call('XADD', JOBS, '*', 'j', job, 'q', queue, 'a', attempt, 'due', int(due_us), 'p', payload)
  redis.call('HSET', ENTRY, job, id)
  return id
end

-- A heartbeat: XCLAIM of the consumer's own entry with JUSTID sets its idle time to 0
-- (so XAUTOCLAIM's lease starts again) without counting a delivery.
local function touch(job, id, consumer)
  redis.call('XCLAIM', JOBS, GROUP, consumer, 0, id, 'JUSTID')
end

-- The visibility timeout: XAUTOCLAIM takes every delivery idle for longer than the
-- lease to `rescuer`. Returns {job, id, fields} of each.
local function take_idle(lease_ms, rescuer)
  local out, cursor = {}, '0-0'
  repeat
    local r = redis.call('XAUTOCLAIM', JOBS, GROUP, rescuer, lease_ms, cursor, 'COUNT', 100)
    cursor = r[1]
    for _, e in ipairs(r[2]) do
      local f = fields_of(e[2])
      out[#out + 1] = {f.j, e[1], f}
    end
  until cursor == '0-0'
  return out
end

-- What the sampler reads: the due time of the oldest job not yet delivered (the first
-- entry after the group's last-delivered id: every entry is added at the tail, so
-- arrival order is id order) or false, the jobs not finished (entries in the stream),
-- and the deliveries pending (claimed, not yet acknowledged).
local function queue_state()
  local last = '0-0'
  for _, g in ipairs(redis.call('XINFO', 'GROUPS', JOBS)) do
    local f = fields_of(g)
    if f.name == GROUP then last = f['last-delivered-id'] end
  end
  local first = redis.call('XRANGE', JOBS, '(' .. last, '+', 'COUNT', 1)
  local due = false
  if #first > 0 then due = tonumber(fields_of(first[1][2]).due) end
  return due, redis.call('XLEN', JOBS), redis.call('XPENDING', JOBS, GROUP)[1]
end
