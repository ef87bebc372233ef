-- A trial's reset, around schema.sql, seed.sql, history.sql, keys.sql and the layout's
-- file: run in one transaction from recreate-schema to the indexes (with wal_level =
-- minimal, the embedded default, a table created and filled in the transaction that
-- created it skips the WAL), then vacuum and analyze, each in a call of its own.

-- step: recreate-schema
-- {schema} the run's schema, quoted; claimbench checked it is its own first.
DROP SCHEMA IF EXISTS {schema} CASCADE; CREATE SCHEMA {schema}; SET LOCAL search_path TO {schema};

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
