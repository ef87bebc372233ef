-- The simulated handler's side effect, witnessed by the database: attempt, start time and
-- token come from the row this worker owns (same worker, processing, same token), not
-- from the worker. When the worker no longer owns it, the row is still written, with
-- Owned = 0 and the worker's own attempt and start time.
-- @P1 job id, @P2 attempt (AttemptCount at claim), @P3 worker id, @P4 outcome (0 ok,
-- 1 failed), @P5 start time the worker was given (µs since the epoch), @P6 token.
-- Returns the finish time (µs since the epoch) and whether the row was owned.
INSERT INTO [{SCHEMA}].[Effects]
    ([JobId], [Attempt], [WorkerId], [Outcome], [StartedAtUtc], [FinishedAtUtc], [Owned], [Token])
OUTPUT DATEDIFF_BIG(microsecond, '19700101', INSERTED.[FinishedAtUtc]),
       CAST(INSERTED.[Owned] AS int)
SELECT @P1, ISNULL(h.[AttemptCount], @P2), @P3, @P4,
       ISNULL(h.[StartedAtUtc], DATEADD(microsecond, @P5 % 1000000,
                                        DATEADD(second, @P5 / 1000000, CAST('19700101' AS datetime2(6))))),
       CAST(SYSUTCDATETIME() AS datetime2(6)),
       CASE WHEN h.[Id] IS NULL THEN 0 ELSE 1 END, h.[ExecToken]
FROM (SELECT 1 AS [One]) AS one
LEFT JOIN [{SCHEMA}].[JobsHot] h
       ON h.[Id] = @P1 AND h.[WorkerId] = @P3 AND h.[Status] = 2 AND h.[ExecToken] = @P6;
