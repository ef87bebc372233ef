-- The control connection's own questions: the server's version, where its pid file is,
-- whether the database a run would recreate is claimbench's (src/backend/ownership.rs),
-- and the counters SHOW GLOBAL STATUS lacks on some servers.

-- step: version
SELECT VERSION()

-- step: schema-facts
-- ? the database of the run, ? the marker table: whether the database exists, and whether
-- it holds the claimbench marker.
SELECT EXISTS (SELECT 1 FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = a.db),
       EXISTS (SELECT 1 FROM information_schema.TABLES
                WHERE TABLE_SCHEMA = a.db AND TABLE_NAME = a.marker)
FROM (SELECT ? AS db, ? AS marker) a

-- step: deadlocks-metric
-- MySQL 8 has no Innodb_deadlocks status variable; its metrics table counts them.
SELECT COUNT FROM information_schema.INNODB_METRICS WHERE NAME = 'lock_deadlocks'

-- step: pid-file
SELECT @@pid_file

-- step: current-user
-- The account workload SQL runs as (workers connect as the control connection does).
SELECT CURRENT_USER()

-- step: grants
-- Its grants, one statement a row: src/backend/mysql/mod.rs reads the global ones
-- (ON *.*) for the rights that reach the server's host (FILE, SUPER, SHUTDOWN, ALL).
SHOW GRANTS

-- step: analyze-hot
-- Refreshes the row and size estimates table_stats.sql reads.
ANALYZE TABLE jobs_hot

-- step: causal-reads
-- On a Galera cluster, the control connection's reads wait until its node has applied
-- every write set committed anywhere before them, so a count after a trial includes
-- what workers on the other nodes committed. Only this session: workers keep the
-- server's own setting.
SET SESSION wsrep_sync_wait = 1

-- step: give-shards
-- ? queues, ? worker ids, as JSON arrays, pairwise: each worker now owns that shard too
-- (a `sharded` strategy's map; a move gives the new owner its shard before the old one
-- loses it).
INSERT IGNORE INTO shard_owners (queue, worker_id)
SELECT q.v, w.v
FROM JSON_TABLE(?, '$[*]' COLUMNS (i FOR ORDINALITY, v VARCHAR(200) PATH '$')) q
JOIN JSON_TABLE(?, '$[*]' COLUMNS (i FOR ORDINALITY, v VARCHAR(200) PATH '$')) w
  ON w.i = q.i

-- step: take-shards
-- ? queues, ? worker ids, as JSON arrays, pairwise: those workers no longer own those
-- shards (a move's overlap has ended).
DELETE o
FROM shard_owners o
JOIN JSON_TABLE(?, '$[*]' COLUMNS (i FOR ORDINALITY, v VARCHAR(200) PATH '$')) q
JOIN JSON_TABLE(?, '$[*]' COLUMNS (i FOR ORDINALITY, v VARCHAR(200) PATH '$')) w
  ON w.i = q.i
WHERE o.queue = q.v AND o.worker_id = w.v

-- step: durability-production
-- A block's durability on the MariaDB claimbench started (over root): the redo log
-- flushed at every commit, as a production server runs.
SET GLOBAL innodb_flush_log_at_trx_commit = 1

-- step: durability-embedded
-- The embedded default's shortcut (src/embedded/mariadb.rs): written at commit, flushed
-- about once a second.
SET GLOBAL innodb_flush_log_at_trx_commit = 2

-- step: durability-now
-- What new sessions now run with, as run.json records it per cell.
SELECT CAST(@@GLOBAL.innodb_flush_log_at_trx_commit AS CHAR)
