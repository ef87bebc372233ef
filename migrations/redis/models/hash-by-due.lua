-- The model of versioned records (layout `hash-by-due`), a key-value store's queue
-- without transactions across keys: each job is a record in the hash JOBS, with a
-- version; pending jobs wait in the sorted set INDEX in the production claim's order,
-- priority (highest first), then due time, then id; claimed ones sit in LEASES by the
-- time they were claimed or last heartbeaten (members: ids zero-padded to 20 digits). A
-- claim is a compare-and-set on the version (strategies/cas.lua); every version comes
-- from one counter, so a record put back (failed, released, rescued) never matches a
-- version read before.
--
-- A record is `version state owner attempts due priority payload`, tab-separated,
-- payload last: state `p` pending or `c` claimed; owner the claiming consumer, empty
-- while pending. The queue stays in QUEUE, so no workload value is ever parsed out of a
-- record.
--
-- INDEX's members all score 0 and sort as strings: `PPPPPPPPPP:DDDDDDDDDDDDDDDD:IIII…`,
-- the priority counted down from 2^31 - 1 (so the highest sorts first), the due time
-- (µs) and the id, each zero-padded. One priority's jobs are one run of members sorted by
-- due time, so the jobs due by now are a prefix of each run.

local TOP = 2147483647

local function pad(job)
  return string.format('%020d', tonumber(job))
end

local function member(priority, due, job)
  return string.format('%010d:%016d:%020d', TOP - tonumber(priority), tonumber(due), tonumber(job))
end

-- A member's id, and its due time.
local function job_of(m)
  return tostring(tonumber(string.sub(m, 29)))
end

local function due_of(m)
  return tonumber(string.sub(m, 12, 27))
end

local function record(job)
  local r = redis.call('HGET', JOBS, job)
  if not r then return nil end
  local v, s, o, a, due, pr, p = string.match(r, '^(%d+)\t(%a)\t([^\t]*)\t(%d+)\t(%d+)\t(%-?%d+)\t(.*)$')
  return {v = v, s = s, o = o, a = a, due = due, pr = pr, p = p}
end

local function store(job, r)
  redis.call('HSET', JOBS, job, table.concat({r.v, r.s, r.o, r.a, r.due, r.pr, r.p}, '\t'))
end

-- The record's version while `consumer` holds `job`, else nil.
local function held_by(job, consumer)
  local r = record(job)
  if not r or r.s ~= 'c' or r.o ~= consumer then return nil end
  return r.v
end

-- The fields of `job`: q (queue), a (attempts before), due (µs), pr (priority), p.
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
local function enqueue(job, queue, attempt, due_us, payload, priority)
  local v = redis.call('INCR', VERSION)
  local pr = priority or 0
  store(job, {v = v, s = 'p', o = '', a = attempt, due = int(due_us), pr = pr, p = payload})
  redis.call('ZADD', INDEX, 0, member(pr, due_us, job))
  return v
end

-- The first member of each priority's run, highest priority first: each run's earliest
-- due job. Calls `visit(head, first)` with the run's 10-character priority prefix.
local function runs(visit)
  local from = '-'
  while true do
    local first = redis.call('ZRANGEBYLEX', INDEX, from, '+', 'LIMIT', 0, 1)
    if #first == 0 then return end
    local head = string.sub(first[1], 1, 10)
    if visit(head, first[1]) then return end
    from = '(' .. head .. ':~'
  end
end

-- Up to `n` pending jobs due by `now`, in the claim's order (priority, due time, id).
local function eligible(now, n)
  local out = {}
  runs(function(head, _)
    local upto = '(' .. head .. ':' .. string.format('%016d', now) .. ':~'
    for _, m in ipairs(redis.call('ZRANGEBYLEX', INDEX, '[' .. head .. ':', upto, 'LIMIT', 0, n - #out)) do
      out[#out + 1] = job_of(m)
    end
    return #out >= n
  end)
  return out
end

-- The compare-and-set: `job` becomes `consumer`'s when its version is still `v`.
-- The version alone is checked, as a store's conditional write checks it: every way
-- out of pending bumps it, so an unchanged version is a job still pending.
local function take_if(job, v, consumer, now)
  local r = record(job)
  if not r or r.v ~= v then return false end
  redis.call('ZREM', INDEX, member(r.pr, r.due, job))
  r.v, r.s, r.o = redis.call('INCR', VERSION), 'c', consumer
  store(job, r)
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

-- What the sampler reads: the due time of the oldest job due by now or false (a job
-- scheduled ahead or a retry held back by its delay is not eligible yet; the earliest
-- of each priority's run), the jobs not finished (records), and the claims held
-- (leases).
local function queue_state()
  local now = now_us()
  local due = false
  runs(function(_, first)
    local d = due_of(first)
    if d <= now and (not due or d < due) then due = d end
    return false
  end)
  return due, redis.call('HLEN', JOBS), redis.call('ZCARD', LEASES)
end
