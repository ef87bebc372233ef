-- The hot table after a trial: live and dead rows (statistics, updated asynchronously),
-- heap and index bytes; its partitions' sums under storage = "partitioned"
-- (pg_partition_tree lists a plain table's partitions: none). The functions behind
-- pg_stat_user_tables, per relation (the view scans every relation when filtered by a
-- list).
SELECT sum(pg_stat_get_live_tuples(t.relid))::bigint, sum(pg_stat_get_dead_tuples(t.relid))::bigint,
       sum(pg_table_size(t.relid))::bigint, sum(pg_indexes_size(t.relid))::bigint
FROM (SELECT relid FROM pg_partition_tree('jobs_hot') UNION SELECT 'jobs_hot'::regclass) t
