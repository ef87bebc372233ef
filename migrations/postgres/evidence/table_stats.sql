-- The hot table after a trial: live and dead rows (statistics, updated asynchronously),
-- heap and index bytes.
SELECT COALESCE(s.n_live_tup, 0), COALESCE(s.n_dead_tup, 0),
       pg_table_size('jobs_hot'::regclass), pg_indexes_size('jobs_hot'::regclass)
FROM (SELECT 1) one
LEFT JOIN pg_stat_user_tables s ON s.relid = 'jobs_hot'::regclass
