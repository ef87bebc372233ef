-- fail: the worker's delivery ends; the job goes back to the stream's tail for another
-- attempt, or to DEAD after its last. A stream has no delayed delivery, so a retry is
-- due at once (a workload with a retry delay is refused on redis before it runs).
-- ARGV[1] job, ARGV[2] consumer, ARGV[3] max attempts.
-- Returns {retried, dead-lettered}, {0, 0} when the worker no longer held it.
local id = held_by(ARGV[1], ARGV[2])
if not id then return {0, 0} end
local f = fields(id)
settle(ARGV[1], id)
local attempt = tonumber(f.a) + 1
if attempt >= tonumber(ARGV[3]) then
  redis.call('HSET', DEAD, ARGV[1], f.q)
  return {0, 1}
end
enqueue(ARGV[1], f.q, attempt, now_us(), f.p)
return {1, 0}
