-- conditional: read candidates without locks, then claim each with a conditional UPDATE
-- that puts the expected state in its WHERE clause, and read the affected-row count: 0
-- is a lost race (another worker changed the row first); the worker skips that id.
-- Safe, but one round trip per candidate, and workers that read the same candidates
-- collide. The expected state includes the attempt count read.
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
-- step: claim-one
-- @P1 worker id, @P2 one candidate id, @P3 its attempt count as read. Sent once per
-- candidate; 1 affected row = claimed, 0 = lost the race.
UPDATE [{SCHEMA}].[JobsHot]
SET [Status] = 1,
    [WorkerId] = @P1,
    [LastUpdatedUtc] = SYSUTCDATETIME()
WHERE [Id] = @P2
  AND [Status] = 0
  AND [AttemptCount] = @P3;
