-- heartbeat: a running execution restarts its claim's lease (the model's `touch`)
-- without counting a delivery. ARGV[1] job, ARGV[2] consumer, ARGV[3] token.
-- Returns {1} held, {0} lost.
local id = held_by(ARGV[1], ARGV[2])
if not id or redis.call('HGET', EXEC, ARGV[1]) ~= ARGV[3] then return {0} end
touch(ARGV[1], id, ARGV[2])
return {1}
