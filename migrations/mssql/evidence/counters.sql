-- Cumulative counters; the runner keeps the delta over a trial.
-- Deadlocks and lock-wait (LCK_M_*) statistics are server-wide; row lock waits and lock
-- promotions (escalations) are the hot table's own, from its indexes' operational stats.
-- Needs VIEW SERVER STATE (VIEW SERVER PERFORMANCE STATE on SQL Server 2022).
SET NOCOUNT ON;
SELECT
    (SELECT CAST(ISNULL(SUM(cntr_value), 0) AS bigint) FROM sys.dm_os_performance_counters
      WHERE counter_name = 'Number of Deadlocks/sec' AND instance_name = '_Total') AS Deadlocks,
    (SELECT CAST(ISNULL(SUM(waiting_tasks_count), 0) AS bigint) FROM sys.dm_os_wait_stats
      WHERE wait_type LIKE 'LCK[_]M[_]%') AS LockWaits,
    (SELECT CAST(ISNULL(SUM(wait_time_ms), 0) AS bigint) FROM sys.dm_os_wait_stats
      WHERE wait_type LIKE 'LCK[_]M[_]%') AS LockWaitMs,
    (SELECT CAST(ISNULL(SUM(row_lock_wait_count), 0) AS bigint)
       FROM sys.dm_db_index_operational_stats(DB_ID(), OBJECT_ID(@P1), NULL, NULL)) AS RowLockWaits,
    (SELECT CAST(ISNULL(SUM(row_lock_wait_in_ms), 0) AS bigint)
       FROM sys.dm_db_index_operational_stats(DB_ID(), OBJECT_ID(@P1), NULL, NULL)) AS RowLockWaitMs,
    (SELECT CAST(ISNULL(SUM(index_lock_promotion_count), 0) AS bigint)
       FROM sys.dm_db_index_operational_stats(DB_ID(), OBJECT_ID(@P1), NULL, NULL)) AS LockPromotions;
