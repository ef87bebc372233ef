-- The hot table after a trial: live and dead rows (statistics, updated asynchronously),
-- heap and index bytes; its partitions' sums under storage = "partitioned"
-- (pg_partition_tree lists a plain table's partitions: none).
SELECT COALESCE(sum(s.n_live_tup), 0)::bigint, COALESCE(sum(s.n_dead_tup), 0)::bigint,
       sum(pg_table_size(t.relid))::bigint, sum(pg_indexes_size(t.relid))::bigint
FROM (SELECT relid FROM pg_partition_tree('jobs_hot') UNION SELECT 'jobs_hot'::regclass) t
LEFT JOIN pg_stat_user_tables s ON s.relid = t.relid
