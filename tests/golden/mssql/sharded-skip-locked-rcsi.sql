DECLARE @Limit int = @P1, @WorkerId varchar(100) = @P2;
WITH Picked AS (
    SELECT TOP (@Limit) j.[Id]
    FROM [claimbench].[ShardOwners] o
    CROSS APPLY (
        SELECT TOP (@Limit) h.[Id], h.[Priority],
               ISNULL(h.[ScheduledAtUtc], h.[CreatedAtUtc]) AS SortUtc
        FROM [claimbench].[JobsHot] h WITH (UPDLOCK, READPAST, READCOMMITTEDLOCK)
        LEFT JOIN [claimbench].[Queues] q ON h.[Queue] = q.[Name]
        WHERE h.[Queue] = o.[Queue]
          AND h.[Status] = 0
          AND (q.[IsPaused] IS NULL OR q.[IsPaused] = 0)
          AND (q.[IsActive] IS NULL OR q.[IsActive] = 1)
          AND (h.[ScheduledAtUtc] IS NULL OR h.[ScheduledAtUtc] <= SYSUTCDATETIME())
        ORDER BY h.[Priority] DESC, ISNULL(h.[ScheduledAtUtc], h.[CreatedAtUtc]) ASC, h.[Id] ASC
    ) j
    WHERE o.[WorkerId] = @WorkerId
    ORDER BY j.[Priority] DESC, j.[SortUtc] ASC, j.[Id] ASC
)
UPDATE h
SET h.[Status] = 1,
    h.[WorkerId] = @WorkerId,
    h.[LastUpdatedUtc] = SYSUTCDATETIME()
OUTPUT
    INSERTED.[Id], INSERTED.[Queue], INSERTED.[Type],
    INSERTED.[Payload], INSERTED.[Tags], INSERTED.[IdempotencyKey],
    INSERTED.[Priority], INSERTED.[Status], INSERTED.[AttemptCount],
    INSERTED.[WorkerId], INSERTED.[HeartbeatUtc],
    INSERTED.[ScheduledAtUtc], INSERTED.[CreatedAtUtc],
    INSERTED.[StartedAtUtc], INSERTED.[LastUpdatedUtc],
    INSERTED.[CreatedBy], INSERTED.[LastModifiedBy],
    DATEDIFF_BIG(MICROSECOND, ISNULL(INSERTED.[ScheduledAtUtc], INSERTED.[CreatedAtUtc]), SYSUTCDATETIME()) AS QueueWaitUs
FROM [claimbench].[JobsHot] h WITH (UPDLOCK, READPAST, READCOMMITTEDLOCK)
INNER JOIN Picked p ON p.[Id] = h.[Id];
