-- effect: the handler's side effect, one EFFECTS entry per run whether or not the
-- worker still holds the job (a side effect happens either way; `o` says which).
-- ARGV[1] job, ARGV[2] attempt, ARGV[3] failed (0 or 1), ARGV[4] start µs, ARGV[5]
-- token, ARGV[6] consumer. Returns {finish µs, owned (0 or 1)}.
local owned = 0
local id = held_by(ARGV[1], ARGV[6])
if id and redis.call('HGET', EXEC, ARGV[1]) == ARGV[5] then owned = 1 end
local now = now_us()
redis.call('XADD', EFFECTS, '*', 'j', ARGV[1], 'a', ARGV[2], 'f', ARGV[3], 's', ARGV[4], 'e', int(now), 'o', owned)
return {now, owned}
