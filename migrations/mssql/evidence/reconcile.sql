-- Where every job ended up, and the effects table's own count of duplicate executions:
-- a handler run of a job that overlaps an earlier run of that job in time, or that
-- follows an earlier run which succeeded (so nothing legitimately released the job for
-- another run), whatever attempt number each had. The ledger counts the same rule from
-- the workers' records (src/ledger.rs); the two must agree.
SET NOCOUNT ON;
SELECT
    (SELECT COUNT_BIG(*) FROM [{SCHEMA}].[JobsHot] WHERE [Status] = 0) AS Pending,
    (SELECT COUNT_BIG(*) FROM [{SCHEMA}].[JobsHot] WHERE [Status] = 1) AS Fetched,
    (SELECT COUNT_BIG(*) FROM [{SCHEMA}].[JobsHot] WHERE [Status] = 2) AS Processing,
    (SELECT COUNT_BIG(*) FROM [{SCHEMA}].[JobsArchive]) AS Completed,
    (SELECT COUNT_BIG(*) FROM [{SCHEMA}].[JobsDLQ]) AS DeadLettered,
    (SELECT COUNT_BIG(*) FROM [{SCHEMA}].[Effects]) AS EffectRows,
    (SELECT COUNT_BIG(*)
       FROM (SELECT [StartedAtUtc],
                    MAX([FinishedAtUtc]) OVER (PARTITION BY [JobId]
                        ORDER BY [StartedAtUtc], [FinishedAtUtc], [Id]
                        ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS EarlierEnd,
                    MAX(CASE WHEN [Outcome] = 0 THEN 1 ELSE 0 END) OVER (PARTITION BY [JobId]
                        ORDER BY [StartedAtUtc], [FinishedAtUtc], [Id]
                        ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS EarlierOk
               FROM [{SCHEMA}].[Effects]) runs
      WHERE runs.EarlierEnd > runs.[StartedAtUtc] OR runs.EarlierOk = 1) AS DuplicateExecutions,
    (SELECT COUNT_BIG(DISTINCT [JobId]) FROM [{SCHEMA}].[Effects]) AS DistinctExecuted,
    (SELECT COUNT_BIG(*) FROM [{SCHEMA}].[Effects] WHERE [Owned] = 0) AS UnownedExecutions;
