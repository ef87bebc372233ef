-- @P1 batch limit. Returns id, attempt count, queue wait (µs) and version, as read.
SELECT TOP (@P1) h.[Id], h.[AttemptCount],
       DATEDIFF_BIG(MICROSECOND, ISNULL(h.[ScheduledAtUtc], h.[CreatedAtUtc]), SYSUTCDATETIME()) AS QueueWaitUs,
       CAST(h.[Version] AS bigint) AS [Version]
FROM [claimbench].[JobsHot] h
LEFT JOIN [claimbench].[Queues] q ON h.[Queue] = q.[Name]
WHERE h.[Status] = 0
  AND (q.[IsPaused] IS NULL OR q.[IsPaused] = 0)
  AND (q.[IsActive] IS NULL OR q.[IsActive] = 1)
  AND (h.[ScheduledAtUtc] IS NULL OR h.[ScheduledAtUtc] <= SYSUTCDATETIME())
ORDER BY h.[Priority] DESC, ISNULL(h.[ScheduledAtUtc], h.[CreatedAtUtc]) ASC, h.[Id] ASC;
