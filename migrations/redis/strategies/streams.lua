-- redis-streams: the claim. XREADGROUP of up to a batch of new entries for this
-- consumer: Redis hands each entry to one consumer of the group and records it in the
-- group's pending entries list, so two workers never receive one entry together; an
-- entry comes back to another consumer only when XAUTOCLAIM takes it after the lease
-- (rescue.lua, the visibility timeout). No filter, no order but arrival: a stream has
-- no priorities, per-queue limits, pauses or future due times (docs/strategies.md).
--
-- Run as one script so the reply carries the server's clock, from which each job's
-- queue wait is read as the SQL engines read theirs; the script adds one call of TIME.
-- ARGV[1] consumer (the worker's id), ARGV[2] batch.
-- Returns: now (µs), then per job: id, attempts before this one, due (µs), payload.
local now = now_us()
local out = {now}
local r = redis.call('XREADGROUP', 'GROUP', GROUP, ARGV[1], 'COUNT', ARGV[2], 'STREAMS', JOBS, '>')
if r then
  for _, e in ipairs(r[1][2]) do
    local f = e[2]
    out[#out + 1] = f[2]
    out[#out + 1] = f[6]
    out[#out + 1] = f[8]
    out[#out + 1] = f[10]
  end
end
return out
