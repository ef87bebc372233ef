-- Where every job ended up, and the effects table's count of duplicate executions:
-- rows beyond one per (job, attempt).
SET NOCOUNT ON;
SELECT
    (SELECT COUNT_BIG(*) FROM [{SCHEMA}].[JobsHot] WHERE [Status] = 0) AS Pending,
    (SELECT COUNT_BIG(*) FROM [{SCHEMA}].[JobsHot] WHERE [Status] = 1) AS Fetched,
    (SELECT COUNT_BIG(*) FROM [{SCHEMA}].[JobsHot] WHERE [Status] = 2) AS Processing,
    (SELECT COUNT_BIG(*) FROM [{SCHEMA}].[JobsArchive]) AS Completed,
    (SELECT COUNT_BIG(*) FROM [{SCHEMA}].[JobsDLQ]) AS DeadLettered,
    (SELECT COUNT_BIG(*) FROM [{SCHEMA}].[Effects]) AS EffectRows,
    (SELECT ISNULL(SUM(runs.n - 1), 0)
       FROM (SELECT COUNT_BIG(*) AS n FROM [{SCHEMA}].[Effects]
             GROUP BY [JobId], [Attempt]) runs) AS DuplicateExecutions,
    (SELECT COUNT_BIG(DISTINCT [JobId]) FROM [{SCHEMA}].[Effects]) AS DistinctExecuted;
