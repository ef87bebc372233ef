-- produce (and the seed): new jobs, each with the next id, put where the model puts
-- a new job (the stream's tail; pending by priority and due time).
-- ARGV[1] payload, then triples of (queue, age µs, priority): a job created that long
-- before now, its intended arrival (a negative age: due that long after now). Returns
-- how many were added.
local now = now_us()
local n = 0
for i = 2, #ARGV, 3 do
  local job = redis.call('INCR', NEXT_ID)
  redis.call('HSET', QUEUE, job, ARGV[i])
  enqueue(job, ARGV[i], 0, now - tonumber(ARGV[i + 1]), ARGV[1], ARGV[i + 2])
  n = n + 1
end
return n
