-- lock-service's give-back: deletes each lease whose value is still the token beside
-- it, so a lease that expired and was taken by another worker is never deleted by its
-- first holder (a compare-and-delete). KEYS: the leases (<schema>:lock:<id>); ARGV[i]:
-- the token this worker set on KEYS[i]. Returns how many it deleted.
local n = 0
for i, key in ipairs(KEYS) do
  if redis.call('GET', key) == ARGV[i] then
    n = n + redis.call('DEL', key)
  end
end
return n
