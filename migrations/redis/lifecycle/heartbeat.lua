-- heartbeat: a running execution's XCLAIM of its own entry with JUSTID, which sets the
-- entry's idle time to 0 (so XAUTOCLAIM's lease starts again) without counting a
-- delivery. ARGV[1] job, ARGV[2] consumer, ARGV[3] token. Returns {1} held, {0} lost.
local id = held_by(ARGV[1], ARGV[2])
if not id or redis.call('HGET', EXEC, ARGV[1]) ~= ARGV[3] then return {0} end
redis.call('XCLAIM', JOBS, GROUP, ARGV[2], 0, id, 'JUSTID')
return {1}
