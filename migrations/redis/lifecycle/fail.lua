-- fail: the worker's claim ends; the job is put back for another attempt, due after the
-- retry delay, or goes to DEAD after its last. The records' model holds the retry back
-- until then; a stream has no delayed delivery (a workload with a retry delay is refused
-- on `stream` before it runs). ARGV[1] job, ARGV[2] consumer, ARGV[3] max attempts,
-- ARGV[4] retry delay (µs). Returns {retried, dead-lettered}, {0, 0} when the worker no
-- longer held it.
local id = held_by(ARGV[1], ARGV[2])
if not id then return {0, 0} end
local f = fields(ARGV[1], id)
settle(ARGV[1], id)
local attempt = tonumber(f.a) + 1
if attempt >= tonumber(ARGV[3]) then
  redis.call('HSET', DEAD, ARGV[1], f.q)
  return {0, 1}
end
enqueue(ARGV[1], f.q, attempt, now_us() + tonumber(ARGV[4]), f.p, f.pr)
return {1, 0}
