-- claimbench capture (docs/cli.md): what it reads of a live queue table, every step in
-- one READ ONLY transaction on the --db connection. Catalogs and statistics only: no
-- row's contents are read, only counts and sizes (the exact count by state is the one
-- query of the table itself, and only when its statistics say it is small).
-- step: enter
-- The table's schema first on the search path, so that pg_get_indexdef, format_type and
-- the column defaults name what is in it unqualified, as the captured DDL must.
-- $1 schema.
SELECT set_config('search_path', quote_ident($1) || ', pg_catalog', true)
-- step: table
-- $1 schema, $2 name: the relation, its kind, the planner's row estimate (-1: never
-- analyzed), its bytes and its autovacuum options.
SELECT c.oid, c.relkind::text, c.reltuples::float8, pg_table_size(c.oid),
       pg_indexes_size(c.oid), COALESCE(array_to_string(c.reloptions, ', '), '')
FROM pg_class c
JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = $1 AND c.relname = $2
-- step: columns
-- $1 the table's oid: each column in order, its type as written, NOT NULL, default,
-- identity and generated kind, the type's kind (e for an enum) and oid, and from the
-- planner's statistics its average width, distinct count and most common values with
-- their frequencies (no row's contents: the statistics' summary).
SELECT a.attname::text, format_type(a.atttypid, a.atttypmod), a.attnotnull,
       pg_get_expr(d.adbin, d.adrelid), a.attidentity::text, a.attgenerated::text,
       t.typtype::text, t.oid, s.avg_width, s.n_distinct::float8,
       (s.most_common_vals::text)::text[], s.most_common_freqs::float8[],
       t.typcategory::text
FROM pg_attribute a
JOIN pg_type t ON t.oid = a.atttypid
JOIN pg_class c ON c.oid = a.attrelid
JOIN pg_namespace n ON n.oid = c.relnamespace
LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
LEFT JOIN pg_stats s
       ON s.schemaname = n.nspname AND s.tablename = c.relname AND s.attname = a.attname
      AND NOT s.inherited
WHERE a.attrelid = $1 AND a.attnum > 0 AND NOT a.attisdropped
ORDER BY a.attnum
-- step: enums
-- $1 enum types' oids: each one's name as the table's schema sees it, and its labels in
-- order.
SELECT format_type(t.oid, NULL), array_agg(e.enumlabel::text ORDER BY e.enumsortorder)
FROM pg_type t
JOIN pg_enum e ON e.enumtypid = t.oid
WHERE t.oid = ANY ($1::oid[])
GROUP BY t.oid
ORDER BY 1
-- step: constraints
-- $1 the table's oid: primary key, unique, check and exclusion constraints as written;
-- the columns of the primary key; foreign keys are counted apart (they name other
-- tables, which a capture does not copy).
SELECT k.conname::text, k.contype::text, pg_get_constraintdef(k.oid),
       ARRAY(SELECT a.attname::text FROM unnest(k.conkey) WITH ORDINALITY AS u(n, o)
             JOIN pg_attribute a ON a.attrelid = k.conrelid AND a.attnum = u.n
             ORDER BY u.o)
FROM pg_constraint k
WHERE k.conrelid = $1
ORDER BY k.contype, k.conname
-- step: indexes
-- $1 the table's oid: every index no constraint owns, as pg_get_indexdef writes it.
SELECT c.relname::text, pg_get_indexdef(i.indexrelid)
FROM pg_index i
JOIN pg_class c ON c.oid = i.indexrelid
WHERE i.indrelid = $1
  AND NOT EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conindid = i.indexrelid
                                                  AND k.conrelid = i.indrelid)
ORDER BY c.relname
-- step: sequences
-- $1 the table's oid: the sequences its columns own (serial columns' defaults name them).
SELECT s.relname::text
FROM pg_depend d
JOIN pg_class s ON s.oid = d.objid AND s.relkind = 'S'
WHERE d.refobjid = $1 AND d.deptype IN ('a', 'i')
ORDER BY 1
-- step: activity
-- $1 the table's oid: rows inserted so far, dead rows, and the autovacuum runs, from the
-- statistics (read twice, --sample-s apart, for the arrival rate).
SELECT COALESCE(pg_stat_get_tuples_inserted($1), 0), COALESCE(pg_stat_get_dead_tuples($1), 0),
       COALESCE(pg_stat_get_autovacuum_count($1), 0), clock_timestamp()
-- step: statements-readable
-- The schema pg_stat_statements is installed in (NULL: it is not), and whether this role may read other
-- roles' statement texts.
SELECT (SELECT n.nspname::text FROM pg_extension e
          JOIN pg_namespace n ON n.oid = e.extnamespace
         WHERE e.extname = 'pg_stat_statements'),
       pg_has_role(current_user, 'pg_read_all_stats', 'MEMBER')
-- step: statements
-- $1 the table's name: the statements that name it, most called first, as candidates
-- for its lifecycle steps (a person confirms them).
SELECT query, calls, mean_exec_time::float8
FROM {extension_schema}.pg_stat_statements
WHERE query ILIKE '%' || $1 || '%'
ORDER BY calls DESC
LIMIT 12
