-- release: fetched, unstarted jobs go back with their attempt count and due time
-- unchanged (to the stream's tail; to their place among the records by due time).
-- ARGV[1] consumer, ARGV[2..] job ids. Returns the ids released.
local out = {}
for i = 2, #ARGV do
  local job = ARGV[i]
  local id = held_by(job, ARGV[1])
  if id and redis.call('HEXISTS', EXEC, job) == 0 then
    local f = fields(job, id)
    settle(job, id)
    enqueue(job, f.q, f.a, f.due, f.p, f.pr)
    out[#out + 1] = tonumber(job)
  end
end
return out
