-- The hot table after a trial: estimated rows, the undo history length, data and index
-- bytes (InnoDB statistics, refreshed by ANALYZE TABLE first). The undo history length
-- counts versions of changed rows not yet purged, server-wide. It is InnoDB's counterpart of PostgreSQL's dead
-- tuples (reported in that column), though it counts undo records, not table rows.
SELECT CAST(t.TABLE_ROWS AS SIGNED),
       (SELECT CAST(COUNT AS SIGNED) FROM information_schema.INNODB_METRICS
         WHERE NAME = 'trx_rseg_history_len'),
       CAST(t.DATA_LENGTH AS SIGNED), CAST(t.INDEX_LENGTH AS SIGNED)
FROM information_schema.TABLES t
WHERE t.TABLE_SCHEMA = DATABASE() AND t.TABLE_NAME = 'jobs_hot'
