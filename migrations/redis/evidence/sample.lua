-- sample: what the sampler reads a few times a second (the model's `queue_state`).
-- Returns {now µs, due µs of the oldest job not yet claimed or nil, jobs not finished,
-- claims held (claimed, not yet finished), executions started}.
local now = now_us()
local due, unfinished, held = queue_state()
return {now, due, unfinished, held, redis.call('HLEN', EXEC)}
