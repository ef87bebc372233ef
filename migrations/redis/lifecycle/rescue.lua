-- rescue: the visibility timeout. Every claim idle for longer than the lease (a worker
-- that died, hung, or stopped heartbeating; the model's `take_idle`) is put back as its
-- next attempt, due when it was due. ARGV[1] lease (ms), ARGV[2] the rescuer's consumer
-- name. Returns the ids rescued.
local out = {}
for _, t in ipairs(take_idle(ARGV[1], ARGV[2])) do
  local job, id, f = t[1], t[2], t[3]
  settle(job, id)
  enqueue(job, f.q, tonumber(f.a) + 1, f.due, f.p, f.pr)
  out[#out + 1] = tonumber(job)
end
return out
