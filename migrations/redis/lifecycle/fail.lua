-- fail: the worker's claim ends; the job is put back for another attempt, due at once,
-- or goes to DEAD after its last (neither model delays a retry: a workload with a retry
-- delay is refused on redis before it runs). ARGV[1] job, ARGV[2] consumer, ARGV[3]
-- max attempts. Returns {retried, dead-lettered}, {0, 0} when the worker no longer held it.
local id = held_by(ARGV[1], ARGV[2])
if not id then return {0, 0} end
local f = fields(ARGV[1], id)
settle(ARGV[1], id)
local attempt = tonumber(f.a) + 1
if attempt >= tonumber(ARGV[3]) then
  redis.call('HSET', DEAD, ARGV[1], f.q)
  return {0, 1}
end
enqueue(ARGV[1], f.q, attempt, now_us(), f.p)
return {1, 0}
