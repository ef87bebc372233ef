DECLARE @Limit int = @P1, @WorkerId varchar(100) = @P2, @Window int = @P3;
DECLARE @Skip int = FLOOR(RAND() * @Window);
DECLARE @StartPriority int, @StartDue datetime2(7), @StartId bigint;
SELECT @StartPriority = s.[Priority], @StartDue = s.[DueUtc], @StartId = s.[Id]
FROM (
    SELECT h.[Priority], ISNULL(h.[ScheduledAtUtc], h.[CreatedAtUtc]) AS DueUtc, h.[Id]
    FROM [claimbench].[JobsHot] h
    LEFT JOIN [claimbench].[Queues] q ON h.[Queue] = q.[Name]
    WHERE h.[Status] = 0
      AND (q.[IsPaused] IS NULL OR q.[IsPaused] = 0)
      AND (q.[IsActive] IS NULL OR q.[IsActive] = 1)
      AND (h.[ScheduledAtUtc] IS NULL OR h.[ScheduledAtUtc] <= SYSUTCDATETIME())
    ORDER BY h.[Priority] DESC, ISNULL(h.[ScheduledAtUtc], h.[CreatedAtUtc]) ASC, h.[Id] ASC
    OFFSET @Skip ROWS FETCH NEXT 1 ROWS ONLY
) s;
WITH After AS (
    SELECT TOP (@Limit) h.[Id], 0 AS [Part], h.[Priority], h.[DueUtc]
    FROM [claimbench].[JobsHot] h WITH (UPDLOCK, READPAST)
    LEFT JOIN [claimbench].[Queues] q ON h.[Queue] = q.[Name]
    WHERE h.[Status] = 0
      AND (q.[IsPaused] IS NULL OR q.[IsPaused] = 0)
      AND (q.[IsActive] IS NULL OR q.[IsActive] = 1)
      AND (h.[ScheduledAtUtc] IS NULL OR h.[ScheduledAtUtc] <= SYSUTCDATETIME())
      AND (h.[Priority] < @StartPriority
           OR (h.[Priority] = @StartPriority AND h.[DueUtc] > @StartDue)
           OR (h.[Priority] = @StartPriority AND h.[DueUtc] = @StartDue AND h.[Id] >= @StartId))
    ORDER BY h.[Priority] DESC, h.[DueUtc] ASC, h.[Id] ASC
),
Before AS (
    SELECT TOP (@Limit) h.[Id], 1 AS [Part], h.[Priority], h.[DueUtc]
    FROM [claimbench].[JobsHot] h WITH (UPDLOCK, READPAST)
    LEFT JOIN [claimbench].[Queues] q ON h.[Queue] = q.[Name]
    WHERE h.[Status] = 0
      AND (q.[IsPaused] IS NULL OR q.[IsPaused] = 0)
      AND (q.[IsActive] IS NULL OR q.[IsActive] = 1)
      AND (h.[ScheduledAtUtc] IS NULL OR h.[ScheduledAtUtc] <= SYSUTCDATETIME())
      AND (@StartId IS NULL
           OR h.[Priority] > @StartPriority
           OR (h.[Priority] = @StartPriority AND h.[DueUtc] < @StartDue)
           OR (h.[Priority] = @StartPriority AND h.[DueUtc] = @StartDue AND h.[Id] < @StartId))
    ORDER BY h.[Priority] DESC, h.[DueUtc] ASC, h.[Id] ASC
),
Picked AS (
    SELECT TOP (@Limit) [Id]
    FROM (SELECT * FROM After UNION ALL SELECT * FROM Before) c
    ORDER BY [Part] ASC, [Priority] DESC, [DueUtc] ASC, [Id] ASC
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
FROM [claimbench].[JobsHot] h WITH (UPDLOCK, READPAST)
INNER JOIN Picked p ON p.[Id] = h.[Id];
