-- @P1 batch limit, @P2 worker id. Returns id, attempt count and queue wait (µs), as read.
SELECT TOP (@P1) j.[Id], j.[AttemptCount], j.[QueueWaitUs]
FROM [claimbench].[ShardOwners] o
CROSS APPLY (
    SELECT TOP (@P1) h.[Id], h.[AttemptCount], h.[Priority],
           ISNULL(h.[ScheduledAtUtc], h.[CreatedAtUtc]) AS SortUtc,
           DATEDIFF_BIG(MICROSECOND, ISNULL(h.[ScheduledAtUtc], h.[CreatedAtUtc]), SYSUTCDATETIME()) AS QueueWaitUs
    FROM [claimbench].[JobsHot] h
    LEFT JOIN [claimbench].[Queues] q ON h.[Queue] = q.[Name]
    WHERE h.[Queue] = o.[Queue]
      AND h.[Status] = 0
      AND (q.[IsPaused] IS NULL OR q.[IsPaused] = 0)
      AND (q.[IsActive] IS NULL OR q.[IsActive] = 1)
      AND (h.[ScheduledAtUtc] IS NULL OR h.[ScheduledAtUtc] <= SYSUTCDATETIME())
    ORDER BY h.[Priority] DESC, ISNULL(h.[ScheduledAtUtc], h.[CreatedAtUtc]) ASC, h.[Id] ASC
) j
WHERE o.[WorkerId] = @P2
ORDER BY j.[Priority] DESC, j.[SortUtc] ASC, j.[Id] ASC;
