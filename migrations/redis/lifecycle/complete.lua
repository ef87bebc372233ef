-- complete: the worker's own claim settled (XACK and XDEL; the record deleted), and a
-- DONE entry (its id is the completion's time on the server's clock). ARGV[1] job,
-- ARGV[2] consumer.
-- Returns {1} completed, {0} when the worker no longer held it.
local id = held_by(ARGV[1], ARGV[2])
if not id then return {0} end
settle(ARGV[1], id)
redis.call('XADD', DONE, '*', 'j', ARGV[1], 'q', redis.call('HGET', QUEUE, ARGV[1]))
return {1}
