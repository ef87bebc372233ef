-- rescue: the visibility timeout. XAUTOCLAIM takes every delivery idle for longer than
-- the lease (a worker that died, hung, or stopped heartbeating) to the rescuer, which
-- puts each back at the stream's tail as its next attempt, due when it was due.
-- ARGV[1] lease (ms), ARGV[2] the rescuer's consumer name. Returns the ids rescued.
local out, cursor = {}, '0-0'
repeat
  local r = redis.call('XAUTOCLAIM', JOBS, GROUP, ARGV[2], ARGV[1], cursor, 'COUNT', 100)
  cursor = r[1]
  for _, e in ipairs(r[2]) do
    local f = fields_of(e[2])
    settle(f.j, e[1])
    enqueue(f.j, f.q, tonumber(f.a) + 1, f.due, f.p)
    out[#out + 1] = tonumber(f.j)
  end
until cursor == '0-0'
return out
