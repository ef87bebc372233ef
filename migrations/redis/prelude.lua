-- claimbench on Redis: what every script begins with, then its data model's file
-- (models/*.lua: the same helpers over a stream or over versioned records), then its
-- own body. The lifecycle scripts are written once against the helpers; the layout
-- chooses the model.
--
-- KEYS, in this order for every script (src/backend/redis/scripts.rs), all under the
-- run's prefix (`--schema`, `claimbench` by default); the last two only for the model
-- of versioned records:
--   JOBS     where the queue is: the stream of jobs to run (stream), or a hash of job
--            id -> its record (hash-by-due)
--   INDEX    the model's way to a job: job id -> its entry id in JOBS (stream), or the
--            sorted set of pending jobs by due time (hash-by-due)
--   QUEUE    hash: job id -> queue, for every job ever enqueued (where each job belongs)
--   EXEC     hash: job id -> the token of the execution that started it (the SQL
--            engines' exec_token): an effect or completion checks it
--   EFFECTS  stream: one entry per handler run, the ground truth of duplicates
--   DONE     stream: one entry per completion (its id is the server's ms clock)
--   DEAD     hash: job id -> queue, for jobs past their last attempt
--   NEXT_ID  counter: the last job id given out
--   LEASES   sorted set: claimed jobs by the server time they were claimed or last
--            heartbeaten (hash-by-due)
--   VERSION  counter: the last version given to a record (hash-by-due)
local JOBS, INDEX, QUEUE, EXEC = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local EFFECTS, DONE, DEAD, NEXT_ID = KEYS[5], KEYS[6], KEYS[7], KEYS[8]
local LEASES, VERSION = KEYS[9], KEYS[10]
local GROUP = 'workers'

-- The server's clock, µs since the epoch (a double holds it exactly until 2255).
local function now_us()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000000 + tonumber(t[2])
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
