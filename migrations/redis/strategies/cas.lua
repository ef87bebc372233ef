-- redis-cas: compare-and-set on a record's version, the claim of a key-value store
-- without transactions across keys (the layout `hash-by-due`, models/hash-by-due.lua).
-- Two calls, as a store's client makes them: an unlocked read of up to a batch of the
-- pending jobs due by now, in the production claim's order (priority, due time, id),
-- with their versions, then one conditional write of them, which takes each job only
-- while its version is still the one read. Between the two,
-- other workers read the same head of the queue and write first: each job whose
-- version moved is a lost race (the loser's write rejected), never a duplicate.
-- No per-queue limits or pauses (docs/strategies.md).
--
-- ARGV[1] `read`: ARGV[2] batch. Returns now (µs), then per candidate: id, version,
-- attempts before this one, due (µs).
-- ARGV[1] `cas`: ARGV[2] consumer, then pairs of (id, version read). Returns the ids
-- taken, in the order given.
local now = now_us()
if ARGV[1] == 'read' then
  local out = {now}
  for _, job in ipairs(eligible(now, tonumber(ARGV[2]))) do
    local r = record(job)
    if r then
      out[#out + 1] = job
      out[#out + 1] = r.v
      out[#out + 1] = r.a
      out[#out + 1] = r.due
    end
  end
  return out
end
local won = {}
for i = 3, #ARGV, 2 do
  if take_if(ARGV[i], ARGV[i + 1], ARGV[2], now) then won[#won + 1] = tonumber(ARGV[i]) end
end
return won
