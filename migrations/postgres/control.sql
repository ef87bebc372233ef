-- The control connection's own questions: the server's version, who it is, and whether
-- the schema a run would recreate is claimbench's (see src/backend/ownership.rs).

-- step: version
SELECT version()

-- step: version-num
-- The server version as a number (150004), for the statements that changed between
-- versions (the pristine copies' FILE_COPY and FORCE).
SELECT current_setting('server_version_num')::int

-- step: schema-facts
-- $1 the run's schema, $2 the marker table: whether the schema exists, and whether it
-- holds claimbench's marker.
SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1),
       to_regclass(format('%I.%I', $1::text, $2::text)) IS NOT NULL

-- step: backend-pid
-- One server process serving this backend, for reading the server's CPU on this host.
SELECT pg_backend_pid()

-- step: clear-stats-snapshot
-- The statistics views answer from one snapshot per transaction: drop it, so that the
-- counters read next are current.
SELECT pg_stat_clear_snapshot()

-- The durability a block asks for (`[[matrix]] durability`), on the embedded server only:
-- ALTER SYSTEM refuses to run in a transaction block, so one statement per step, then a
-- reload. claimbench's own defaults for these three are in postgresql.conf, which
-- ALTER SYSTEM's postgresql.auto.conf outranks; RESET returns to them.
-- step: durability-production-fsync
ALTER SYSTEM SET fsync = on
-- step: durability-production-synchronous-commit
ALTER SYSTEM SET synchronous_commit = on
-- step: durability-production-full-page-writes
ALTER SYSTEM SET full_page_writes = on
-- step: durability-embedded-fsync
ALTER SYSTEM RESET fsync
-- step: durability-embedded-synchronous-commit
ALTER SYSTEM RESET synchronous_commit
-- step: durability-embedded-full-page-writes
ALTER SYSTEM RESET full_page_writes
-- step: reload
SELECT pg_reload_conf()
-- step: durability-now
SELECT current_setting('fsync'), current_setting('synchronous_commit'), current_setting('full_page_writes')

-- step: give-shards
-- $1 queues, $2 worker ids, pairwise: each worker now owns that shard too (a `sharded`
-- strategy's map; a move gives the new owner its shard before the old one loses it).
INSERT INTO shard_owners (queue, worker_id)
SELECT * FROM unnest($1::text[], $2::text[])
ON CONFLICT DO NOTHING

-- step: take-shards
-- $1 queues, $2 worker ids, pairwise: those workers no longer own those shards (a
-- move's overlap has ended).
DELETE FROM shard_owners o
USING unnest($1::text[], $2::text[]) AS g(queue, worker_id)
WHERE o.queue = g.queue AND o.worker_id = g.worker_id
