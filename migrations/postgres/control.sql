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
