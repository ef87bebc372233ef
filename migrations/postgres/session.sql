-- What a session sends besides the claim and the lifecycle: its search path, the
-- listening strategy's channel, advisory unlocks, settings, the held snapshot, the
-- injected kill and the plan sample's EXPLAIN.

-- step: search-path
-- {schema} the run's schema, quoted.
SET search_path TO {schema}

-- step: current-schema
-- Through a transaction-mode pooler, where a SET would stay on one server connection:
-- the schema the role finds by default (claimbench checks it is the run's).
SELECT current_schema()

-- step: listen
-- notify's idle workers wait on this channel; announce wakes them.
LISTEN claimbench_work

-- step: announce
SELECT pg_notify('claimbench_work', '')

-- step: unlock
-- $1 job ids: gives up the session-level advisory locks an advisory claim took.
SELECT count(pg_advisory_unlock(id)) FROM unnest($1::bigint[]) AS id

-- step: unlock-all
-- Session-level advisory locks outlive a rollback: an advisory claimer that rolls back
-- gives them all up, as its worker would on abandoning its jobs.
SELECT pg_advisory_unlock_all()

-- step: apply
-- $1 setting name, $2 value: set_config binds both, so neither can carry a statement.
SELECT set_config($1, $2, false)

-- step: hold-snapshot
-- A repeatable-read transaction keeps the snapshot of its first statement, until the
-- session ends it.
BEGIN ISOLATION LEVEL REPEATABLE READ; SELECT count(*) FROM queues

-- step: hold-xid
-- A read-committed transaction that takes a transaction id and then sits idle: no
-- snapshot stays open, but its xid holds the horizon back all the same.
BEGIN; SELECT pg_current_xact_id()

-- step: hold-slot
-- An inactive logical replication slot, as a subscriber that went away leaves one. It
-- is temporary, so the server drops it if this session ends any other way (a crash, a
-- Ctrl-C); pgoutput is built in. It keeps the WAL from its restart point and holds the
-- catalogs' horizon (catalog_xmin), not the hot table's.
SELECT pg_create_logical_replication_slot('claimbench_pin_' || pg_backend_pid(), 'pgoutput', true)

-- step: drop-slot
-- The slot hold-slot made, by this session's own pid: never another's.
SELECT pg_drop_replication_slot('claimbench_pin_' || pg_backend_pid())

-- step: scan-held
-- An analytics reader's scan, inside the snapshot hold-snapshot opened: every row
-- version of the hot table, dead or alive, is visited to find the ones it sees.
SELECT count(*) FROM jobs_hot

-- step: kill-workers
-- $1 this run's worker application_name: ends each such connection but this one.
SELECT count(*) FILTER (WHERE pg_terminate_backend(pid)) FROM pg_stat_activity
 WHERE application_name = $1 AND pid <> pg_backend_pid()

-- step: explain-plan
-- {statement} the claim (or a select step) as prepared: its plan alone, nothing runs.
EXPLAIN (FORMAT JSON) {statement}

-- step: explain-analyze
-- The same, run (inside a transaction the caller rolls back), with its buffers.
EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) {statement}
