-- paglock: production's statement with page locks (`WITH (UPDLOCK, PAGLOCK, READPAST)`).
-- @P1 batch, @P2 worker.
--
-- Where it comes from: reports of claims that "block with a handful of jobs". A page
-- lock covers every row on the page, and READPAST skips the whole page another claim
-- holds: with a small backlog on one or two pages, every other claimer skips every
-- pending row and comes back empty while one claim is open; where READPAST cannot
-- skip (a lock it does not honour, or escalation), claimers wait instead. It promises
-- no duplicates and applies max workers, but a batch comes back empty whenever the
-- pages holding the eligible rows are locked by other claims, even with rows unclaimed.
-- Under READ_COMMITTED_SNAPSHOT, READCOMMITTEDLOCK is added as for production.
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
    FROM [{SCHEMA}].[JobsHot] h WITH (UPDLOCK, PAGLOCK, READPAST)
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
FROM [{SCHEMA}].[JobsHot] h WITH (UPDLOCK, PAGLOCK, READPAST)
INNER JOIN Picked p ON p.[Id] = h.[Id];
