-- claimbench on Redis Streams: what every script below begins with. The queue is one
-- stream read by one consumer group, `workers`; a claim is a delivery (an entry in the
-- group's pending entries list, owned by one consumer), and finishing it is XACK + XDEL.
--
-- KEYS, the same eight in this order for every script (src/backend/redis/scripts.rs), all
-- under the run's prefix (`--schema`, `claimbench` by default):
--   JOBS     the stream of jobs to run: fields j (job id), q (queue), a (attempts made
--            before this delivery), due (µs since the epoch the job became due), p (payload)
--   ENTRY    hash: job id -> its entry id in JOBS (a job re-added gets a new entry)
--   QUEUE    hash: job id -> queue, for every job ever enqueued (where each job belongs)
--   EXEC     hash: job id -> the token of the execution that started it (the SQL
--            engines' exec_token): an effect or completion checks it
--   EFFECTS  stream: one entry per handler run, the ground truth of duplicates
--   DONE     stream: one entry per completion (its id is the server's ms clock)
--   DEAD     hash: job id -> queue, for jobs past their last attempt
--   NEXT_ID  counter: the last job id given out
local JOBS, ENTRY, QUEUE, EXEC = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local EFFECTS, DONE, DEAD, NEXT_ID = KEYS[5], KEYS[6], KEYS[7], KEYS[8]
local GROUP = 'workers'

-- The server's clock, µs since the epoch (a double holds it exactly until 2255).
local function now_us()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000000 + tonumber(t[2])
end

-- The entry id of `job` while `consumer` holds its delivery, else nil: ownership is
-- the group's pending entries list, as a Redis Streams worker would ask it (XPENDING).
local function held_by(job, consumer)
  local id = redis.call('HGET', ENTRY, job)
  if not id then return nil end
  if #redis.call('XPENDING', JOBS, GROUP, id, id, 1, consumer) == 0 then return nil end
  return id
end

-- A number as Redis should store it: digits, never the exponent form a double can
-- print as.
local function int(x)
  return string.format('%d', x)
end

-- An entry's fields by name.
local function fields_of(flat)
  local f = {}
  for i = 1, #flat, 2 do f[flat[i]] = flat[i + 1] end
  return f
end

local function fields(id)
  local r = redis.call('XRANGE', JOBS, id, id)
  if #r == 0 then return nil end
  return fields_of(r[1][2])
end

-- A delivery finished, one way or another: out of the group and out of the stream.
local function settle(job, id)
  redis.call('XACK', JOBS, GROUP, id)
  redis.call('XDEL', JOBS, id)
  redis.call('HDEL', EXEC, job)
end

-- `job` at the stream's tail as a new entry (a Redis stream cannot put an entry back
-- where it was): the field order is what claim reads by position.
local function enqueue(job, queue, attempt, due_us, payload)
  local id = redis.call('XADD', JOBS, '*', 'j', job, 'q', queue, 'a', attempt, 'due', int(due_us), 'p', payload)
  redis.call('HSET', ENTRY, job, id)
  return id
end
