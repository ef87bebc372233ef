-- naive: read, then write. Two round trips and no lock: the read-then-write race.
-- Two workers that read between each other's SELECT and UPDATE both take the same rows,
-- and the UPDATE does not check that the rows are still pending, so both "own" them.
-- The same eligibility filters and order as production; no per-queue capacity check.
-- step: select
-- @P1 batch limit. Returns id, attempt count and queue wait (µs), as read.
SELECT TOP (@P1) h.[Id], h.[AttemptCount],
       DATEDIFF_BIG(MICROSECOND, ISNULL(h.[ScheduledAtUtc], h.[CreatedAtUtc]), SYSUTCDATETIME()) AS QueueWaitUs
FROM [{SCHEMA}].[JobsHot] h
LEFT JOIN [{SCHEMA}].[Queues] q ON h.[Queue] = q.[Name]
WHERE h.[Status] = 0
  AND (q.[IsPaused] IS NULL OR q.[IsPaused] = 0)
  AND (q.[IsActive] IS NULL OR q.[IsActive] = 1)
  AND (h.[ScheduledAtUtc] IS NULL OR h.[ScheduledAtUtc] <= SYSUTCDATETIME())
ORDER BY h.[Priority] DESC, ISNULL(h.[ScheduledAtUtc], h.[CreatedAtUtc]) ASC;
-- step: update
-- @P1 worker id, @P2 the ids read above as a JSON array. Unconditional: no status check.
-- Returns the ids it changed: a row completed (deleted) since the read is not claimed.
UPDATE h
SET h.[Status] = 1,
    h.[WorkerId] = @P1,
    h.[LastUpdatedUtc] = SYSUTCDATETIME()
OUTPUT INSERTED.[Id]
FROM [{SCHEMA}].[JobsHot] h
WHERE h.[Id] IN (SELECT CAST([value] AS bigint) FROM OPENJSON(@P2));
