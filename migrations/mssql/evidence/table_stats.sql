-- The hot table after a trial: rows, dead rows, data and index bytes
-- (sys.dm_db_partition_stats). SQL Server has no cheap counterpart of dead tuples (ghost
-- records need a DETAILED index scan), so that column is 0 here.
SET NOCOUNT ON;
SELECT
    CAST(ISNULL(SUM(CASE WHEN index_id IN (0, 1) THEN row_count END), 0) AS bigint),
    CAST(0 AS bigint),
    CAST(ISNULL(SUM(CASE WHEN index_id IN (0, 1) THEN used_page_count END), 0) * 8192 AS bigint),
    CAST(ISNULL(SUM(CASE WHEN index_id > 1 THEN used_page_count END), 0) * 8192 AS bigint)
FROM sys.dm_db_partition_stats
WHERE object_id = OBJECT_ID(N'[{SCHEMA}].[JobsHot]');
