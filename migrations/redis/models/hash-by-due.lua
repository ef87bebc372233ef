-- The model of versioned records (layout `hash-by-due`), a key-value store's queue
-- without transactions across keys: each job is a record in the hash JOBS, with a
-- version; pending jobs wait in the sorted set INDEX by due time (members are ids
-- zero-padded to 20 digits, so jobs due at one instant sort by id); claimed ones sit in
-- LEASES by the time they were claimed or last heartbeaten. A claim is a
-- compare-and-set on the version (strategies/cas.lua); every version comes from one
-- counter, so a record put back (failed, released, rescued) never matches a version
-- read before.
--
-- A record is `version state owner attempts due payload`, tab-separated, payload last:
-- state `p` pending or `c` claimed; owner the claiming consumer, empty while pending.
-- The queue stays in QUEUE, so no workload value is ever parsed out of a record.

local function pad(job)
  return string.format('%020d', tonumber(job))
end

local function record(job)
  local r = redis.call('HGET', JOBS, job)
  if not r then return nil end
  local v, s, o, a, due, p = string.match(r, '^(%d+)\t(%a)\t([^\t]*)\t(%d+)\t(%d+)\t(.*)$')
  return {v = v, s = s, o = o, a = a, due = due, p = p}
end

local function store(job, r)
  redis.call('HSET', JOBS, job, table.concat({r.v, r.s, r.o, r.a, r.due, r.p}, '\t'))
end

-- The record's version while `consumer` holds `job`, else nil.
local function held_by(job, consumer)
  local r = record(job)
  if not r or r.s ~= 'c' or r.o ~= consumer then return nil end
  return r.v
end

-- The fields of `job`: q (queue), a (attempts before), due (µs), p.
local function fields(job, _)
  local r = record(job)
  if not r then return nil end
  r.q = redis.call('HGET', QUEUE, job)
  return r
end

-- A claim finished, one way or another: the record, its lease and its token go.
local function settle(job, _)
  redis.call('HDEL', JOBS, job)
  redis.call('ZREM', LEASES, pad(job))
  redis.call('HDEL', EXEC, job)
end

-- `job` pending again (or for the first time), due at `due_us`, with a new version.
local function enqueue(job, queue, attempt, due_us, payload)
  local v = redis.call('INCR', VERSION)
  store(job, {v = v, s = 'p', o = '', a = attempt, due = int(due_us), p = payload})
  redis.call('ZADD', INDEX, int(due_us), pad(job))
  return v
end

-- The compare-and-set: `job` becomes `consumer`'s when its version is still `v`.
-- The version alone is checked, as a store's conditional write checks it: every way
-- out of pending bumps it, so an unchanged version is a job still pending.
local function take_if(job, v, consumer, now)
  local r = record(job)
  if not r or r.v ~= v then return false end
  r.v, r.s, r.o = redis.call('INCR', VERSION), 'c', consumer
  store(job, r)
  redis.call('ZREM', INDEX, pad(job))
  redis.call('ZADD', LEASES, int(now), pad(job))
  return true
end

-- A heartbeat: the lease starts again.
local function touch(job, _, _)
  redis.call('ZADD', LEASES, 'XX', int(now_us()), pad(job))
end

-- The visibility timeout: every claim neither made nor heartbeaten within the lease.
-- Returns {job, version, fields} of each.
local function take_idle(lease_ms, _)
  local out = {}
  local before = now_us() - tonumber(lease_ms) * 1000
  for _, m in ipairs(redis.call('ZRANGEBYSCORE', LEASES, '-inf', '(' .. int(before))) do
    local job = tostring(tonumber(m))
    local f = fields(job)
    if f then out[#out + 1] = {job, f.v, f} end
  end
  return out
end

-- What the sampler reads: the due time of the oldest job due by now or false (a retry
-- held back by its delay is not eligible yet), the jobs not finished (records), and the
-- claims held (leases).
local function queue_state()
  local first = redis.call('ZRANGEBYSCORE', INDEX, '-inf', int(now_us()), 'WITHSCORES', 'LIMIT', 0, 1)
  local due = false
  if #first > 0 then due = tonumber(first[2]) end
  return due, redis.call('HLEN', JOBS), redis.call('ZCARD', LEASES)
end
