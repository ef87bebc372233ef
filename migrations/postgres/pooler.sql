-- PgBouncer's admin console (the `pgbouncer` database of a pooler in front of the
-- server): what claimbench reads there around each trial and, on the pooler it started
-- itself, how a block sets its pool size. The console speaks the simple protocol only
-- and takes no parameters: {size} is a number claimbench checked (1 to 200).

-- step: reachable
-- Through the pooler (not its console): does a client get a server connection?
SELECT 1

-- step: stats
-- Cumulative per database: total_xact_count, total_wait_time (µs clients waited for a
-- server connection).
SHOW STATS

-- step: pools
-- Now, per database and user: sv_active (server connections running a transaction for
-- a client), cl_waiting (clients waiting for one).
SHOW POOLS

-- step: databases
-- Per database: its pool_size and pool_mode (empty: the pooler's default).
SHOW DATABASES

-- step: config
-- The pooler's settings as key and value (default_pool_size, pool_mode).
SHOW CONFIG

-- step: resize
-- claimbench's own pooler only: the pool size of every database from now on.
SET default_pool_size = {size}

-- step: reconnect
-- claimbench's own pooler only: close each server connection as it is released, so
-- the next trial starts on a pool of the new size (and a role's new defaults).
RECONNECT
