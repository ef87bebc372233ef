-- A declared table's reset (docs/strategies.md, Your own table), on the workload role's
-- connection after its ddl and seed steps ran.
-- step: foreign
-- What the ddl and seed steps made or changed beyond the declared table: relations of
-- the run's schema other than claimbench's and the declared one ($1 the names allowed),
-- and triggers on claimbench's own tables ($2), each as a phrase. Empty: it kept to
-- its table.
SELECT format('a %s %s', CASE c.relkind WHEN 'v' THEN 'view' WHEN 'm' THEN 'materialized view'
                                         WHEN 'f' THEN 'foreign table' ELSE 'table' END,
              c.relname)
FROM pg_class c
JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = current_schema()
  AND c.relkind IN ('r', 'p', 'v', 'm', 'f')
  AND NOT c.relispartition
  AND c.relname <> ALL ($1::text[])
UNION ALL
SELECT format('a trigger %s on claimbench''s %s', t.tgname, c.relname)
FROM pg_trigger t
JOIN pg_class c ON c.oid = t.tgrelid
JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = current_schema()
  AND NOT t.tgisinternal
  AND c.relname = ANY ($2::text[])
-- step: present
-- Whether the declared table ($1) exists in the run's schema.
SELECT EXISTS (SELECT 1 FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
               WHERE n.nspname = current_schema() AND c.relname = $1
                 AND c.relkind IN ('r', 'p'))
-- step: empty-hot
-- claimbench's seeded rows, copied into the declared table by its seed step: gone, so
-- that nothing else claims or counts them; and the schema says its jobs live in a
-- declared table (evidence/completed_by_queue.sql counts them from the effects).
TRUNCATE jobs_hot;
UPDATE claimbench_schema SET storage = 'declared-table'
-- step: table-stats
-- The declared table ($1) after a trial, as evidence/table_stats.sql reads jobs_hot.
SELECT sum(pg_stat_get_live_tuples(t.relid))::bigint, sum(pg_stat_get_dead_tuples(t.relid))::bigint,
       sum(pg_table_size(t.relid))::bigint, sum(pg_indexes_size(t.relid))::bigint
FROM (SELECT relid FROM pg_partition_tree($1::text::regclass) UNION SELECT $1::text::regclass) t
-- step: serials
-- The declared table's ($1) columns that take their values from a sequence (serial or
-- identity), and that sequence: after the seed step wrote ids of its own, each is
-- moved past them, so that the enqueue step's inserts take new ones.
SELECT a.attname::text, pg_get_serial_sequence(quote_ident($1), a.attname)
FROM pg_attribute a
WHERE a.attrelid = $1::text::regclass AND a.attnum > 0 AND NOT a.attisdropped
  AND pg_get_serial_sequence(quote_ident($1), a.attname) IS NOT NULL
-- step: advance
-- $1 the sequence: past the largest {column} of {table}.
SELECT setval($1::text::regclass, COALESCE((SELECT max({column}) FROM {table}), 0) + 1, false)
-- step: clear
-- Before a model state is copied in by the seed step (prove's model check): the
-- declared table ({table}) emptied, row by row, so that its triggers see it.
DELETE FROM {table}
-- step: new-ids
-- $1 ids for a producer's new jobs, from the run's own sequence (jobs_hot's identity,
-- moved past the seeded ids by keys.sql): the enqueue step of a declared table whose
-- ids claimbench hands out (`:ids`; a uuid or text id writes them in its own type).
SELECT nextval(pg_get_serial_sequence('jobs_hot', 'id')) FROM generate_series(1, $1::int)
-- step: hold
-- A claim in flight on the declared table ({table}), as prove's model check has its
-- other session take it without a declared hold step: the rows of $1's ids (in the
-- table's id type), by a column named id, and the advisory locks an advisory claim takes
-- on them, keyed by their numbers ($2, bigint[]: a uuid or text id is not a lock key).
WITH held AS (SELECT id FROM {table} WHERE id = ANY($1) ORDER BY id FOR UPDATE)
SELECT (SELECT count(*) FROM held)
       + (SELECT count(pg_advisory_xact_lock(k)) FROM unnest($2::bigint[]) AS k)
