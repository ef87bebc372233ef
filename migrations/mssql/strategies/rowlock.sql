-- rowlock: production's statement with ROWLOCK added to its lock hints
-- (`WITH (UPDLOCK, READPAST, ROWLOCK)`), as reviewers often ask for. @P1 batch, @P2 worker.
--
-- Where it comes from: the advice to pin row locks so READPAST always has rows to skip.
-- SQL Server already takes row locks for a claim this size; ROWLOCK stops it choosing
-- page locks for a larger scan, but not escalation to a table lock past about 5,000
-- locks in one statement (LOCK_ESCALATION decides that). Promises what production
-- does. Under READ_COMMITTED_SNAPSHOT, READCOMMITTEDLOCK is added as for production.
-- A batch comes back short or empty only as production's does.
DECLARE @Limit int = @P1, @WorkerId varchar(100) = @P2;
WITH ActiveCounts AS (
    SELECT [Queue], COUNT(1) AS CurrentActive
    FROM [{SCHEMA}].[JobsHot]
    WHERE [Status] IN (1, 2)
    GROUP BY [Queue]
),
Candidates AS (
    SELECT
        h.[Id],
        h.[Priority],
        ISNULL(h.[ScheduledAtUtc], h.[CreatedAtUtc]) AS SortUtc,
        q.[MaxWorkers],
        ISNULL(ac.CurrentActive, 0) AS CurrentActive,
        ROW_NUMBER() OVER (
            PARTITION BY h.[Queue]
            ORDER BY h.[Priority] DESC,
                     ISNULL(h.[ScheduledAtUtc], h.[CreatedAtUtc]) ASC
        ) AS QueueRank
    FROM [{SCHEMA}].[JobsHot] h WITH (UPDLOCK, READPAST, ROWLOCK)
    LEFT JOIN [{SCHEMA}].[Queues] q ON h.[Queue] = q.[Name]
    LEFT JOIN ActiveCounts ac ON h.[Queue] = ac.[Queue]
    WHERE h.[Status] = 0
      AND (q.[IsPaused] IS NULL OR q.[IsPaused] = 0)
      AND (q.[IsActive] IS NULL OR q.[IsActive] = 1)
      AND (h.[ScheduledAtUtc] IS NULL OR h.[ScheduledAtUtc] <= SYSUTCDATETIME())
),
Picked AS (
    SELECT TOP (@Limit) [Id]
    FROM Candidates
    WHERE [MaxWorkers] IS NULL
       OR ([CurrentActive] + [QueueRank]) <= [MaxWorkers]
    ORDER BY [Priority] DESC, [SortUtc] ASC
)
UPDATE h
SET h.[Status] = 1,                    -- Fetched
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
FROM [{SCHEMA}].[JobsHot] h WITH (UPDLOCK, READPAST, ROWLOCK)
INNER JOIN Picked p ON p.[Id] = h.[Id];
