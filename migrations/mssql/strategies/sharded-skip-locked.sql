-- sharded-skip-locked: a sharded poller whose claim inside its shards is production's
-- skip-locked claim (UPDLOCK, READPAST; without the per-queue cap): during a move's
-- overlap the old and the new owner skip each other's locked rows as any two
-- skip-locked workers do.
-- A shard is a queue; the shard map is the table ShardOwners (queue, worker id), which
-- claimbench writes before the trial and at each shard move. The claim reads each of
-- its shards apart (CROSS APPLY per ShardOwners row, each its shard's first @Limit rows
-- in fetch order), then keeps the first @Limit of them all: with the queue-fetch-order
-- layout each shard is one index seek. Rows a shard's read locked (UPDLOCK) but the
-- batch left out stay locked until the statement's transaction ends.
-- @P1 batch limit, @P2 worker id.
DECLARE @Limit int = @P1, @WorkerId varchar(100) = @P2;
WITH Picked AS (
    SELECT TOP (@Limit) j.[Id]
    FROM [{SCHEMA}].[ShardOwners] o
    CROSS APPLY (
        SELECT TOP (@Limit) h.[Id], h.[Priority],
               ISNULL(h.[ScheduledAtUtc], h.[CreatedAtUtc]) AS SortUtc
        FROM [{SCHEMA}].[JobsHot] h WITH (UPDLOCK, READPAST)
        LEFT JOIN [{SCHEMA}].[Queues] q ON h.[Queue] = q.[Name]
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
FROM [{SCHEMA}].[JobsHot] h WITH (UPDLOCK, READPAST)
INNER JOIN Picked p ON p.[Id] = h.[Id];
