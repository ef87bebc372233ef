-- A trial's reset: recreate-schema on the server connection (which never touches what is
-- inside the schema), then, on the control connection of the schema's owner, one
-- transaction from enter-schema through schema.sql, seed.sql, history.sql, keys.sql and
-- the layout's file (with wal_level = minimal, the embedded default, a table created and
-- filled in the transaction that created it skips the WAL), then vacuum and analyze,
-- each in a call of its own.

-- step: recreate-schema
-- {schema} the run's schema, quoted; claimbench checked it is its own first. {owner}
-- the role that will own it and everything in it: claimbench_workload on a server
-- claimbench started, else CURRENT_USER. DROP ... CASCADE fires no trigger or rule of
-- the objects it drops (only event triggers, which only a superuser can make).
DROP SCHEMA IF EXISTS {schema} CASCADE; CREATE SCHEMA {schema} AUTHORIZATION {owner}

-- step: enter-schema
-- {schema} the run's schema, quoted: the first statement of the reset's transaction.
SET LOCAL search_path TO {schema}

-- step: storage
-- $1 the workload's storage model (archive-move, update-in-place, delete): the evidence
-- read after the trial (evidence/) looks here for where the finished jobs went.
INSERT INTO claimbench_schema (storage) VALUES ($1)

-- step: queues
-- $1 names, $2 paused, $3 active, $4 max workers: one array each, in the workload's order.
INSERT INTO queues (name, is_paused, is_active, max_workers)
SELECT * FROM unnest($1::text[], $2::bool[], $3::bool[], $4::int[])

-- step: setseed
-- $1 the workload's seed scaled into [-1, 1]: random() in seed.sql repeats per seed.
SELECT setseed($1)

-- step: vacuum
-- VACUUM refuses to run inside a transaction block: one statement per call.
VACUUM ANALYZE jobs_hot

-- step: analyze
ANALYZE queues
