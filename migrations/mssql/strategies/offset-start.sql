-- offset-start: a skip-locked claim (UPDLOCK, READPAST) that starts at a random offset
-- among the first @Window eligible rows, so pollers do not all fight over the oldest;
-- production's eligibility and fetch order, no per-queue cap. When the rows from the
-- start on run short of the batch, it takes the rest from the head.
-- The start is read without locks, once, into variables: OFFSET inside the locking read
-- would lock (UPDLOCK) every row it skips. The locking reads then take ranges of the
-- fetch order by the start's key (priority, due time, id), which the fetch-order index
-- seeks to: `After` from the start on, `Before` the rows ahead of it (all of them when
-- the offset passed the last eligible row and there is no start).
-- @P1 batch limit, @P2 worker id, @P3 the window (K of offset-start-K).
DECLARE @Limit int = @P1, @WorkerId varchar(100) = @P2, @Window int = @P3;
DECLARE @Skip int = FLOOR(RAND() * @Window);
DECLARE @StartPriority int, @StartDue datetime2(7), @StartId bigint;
SELECT @StartPriority = s.[Priority], @StartDue = s.[DueUtc], @StartId = s.[Id]
FROM (
    SELECT h.[Priority], ISNULL(h.[ScheduledAtUtc], h.[CreatedAtUtc]) AS DueUtc, h.[Id]
    FROM [{SCHEMA}].[JobsHot] h
    LEFT JOIN [{SCHEMA}].[Queues] q ON h.[Queue] = q.[Name]
    WHERE h.[Status] = 0
      AND (q.[IsPaused] IS NULL OR q.[IsPaused] = 0)
      AND (q.[IsActive] IS NULL OR q.[IsActive] = 1)
      AND (h.[ScheduledAtUtc] IS NULL OR h.[ScheduledAtUtc] <= SYSUTCDATETIME())
    ORDER BY h.[Priority] DESC, ISNULL(h.[ScheduledAtUtc], h.[CreatedAtUtc]) ASC, h.[Id] ASC
    OFFSET @Skip ROWS FETCH NEXT 1 ROWS ONLY
) s;
WITH After AS (
    SELECT TOP (@Limit) h.[Id], 0 AS [Part], h.[Priority], h.[DueUtc]
    FROM [{SCHEMA}].[JobsHot] h WITH (UPDLOCK, READPAST)
    LEFT JOIN [{SCHEMA}].[Queues] q ON h.[Queue] = q.[Name]
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
    FROM [{SCHEMA}].[JobsHot] h WITH (UPDLOCK, READPAST)
    LEFT JOIN [{SCHEMA}].[Queues] q ON h.[Queue] = q.[Name]
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
FROM [{SCHEMA}].[JobsHot] h WITH (UPDLOCK, READPAST)
INNER JOIN Picked p ON p.[Id] = h.[Id];
