-- start: the worker still holds the job and nothing started it yet; records the
-- execution's token. ARGV[1] job, ARGV[2] consumer, ARGV[3] token.
-- Returns {start µs}, or {nil} when the worker no longer holds the job.
local id = held_by(ARGV[1], ARGV[2])
if not id or redis.call('HEXISTS', EXEC, ARGV[1]) == 1 then return {false} end
redis.call('HSET', EXEC, ARGV[1], ARGV[3])
return {now_us()}
