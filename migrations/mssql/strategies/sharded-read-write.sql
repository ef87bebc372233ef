-- sharded-read-write: a sharded poller that trusts its shard map: it reads its own
-- shards' jobs without a lock and updates them by id without a check. True until
-- ownership moves: while the old and the new owner both hold a shard, both read the
-- same jobs and both take them (duplicates, during the move's overlap only).
-- A shard is a queue; the shard map is the table ShardOwners (queue, worker id), which
-- claimbench writes before the trial and at each shard move. The claim reads each of
-- its shards apart (CROSS APPLY per ShardOwners row, each its shard's first @P1 rows in
-- fetch order), then keeps the first @P1 of them all: with the queue-fetch-order layout
-- each shard is one index seek.
-- The same eligibility and fetch order as production; no per-queue cap.
-- step: select
-- @P1 batch limit, @P2 worker id. Returns id, attempt count and queue wait (µs), as read.
SELECT TOP (@P1) j.[Id], j.[AttemptCount], j.[QueueWaitUs]
FROM [{SCHEMA}].[ShardOwners] o
CROSS APPLY (
    SELECT TOP (@P1) h.[Id], h.[AttemptCount], h.[Priority],
           ISNULL(h.[ScheduledAtUtc], h.[CreatedAtUtc]) AS SortUtc,
           DATEDIFF_BIG(MICROSECOND, ISNULL(h.[ScheduledAtUtc], h.[CreatedAtUtc]), SYSUTCDATETIME()) AS QueueWaitUs
    FROM [{SCHEMA}].[JobsHot] h
    LEFT JOIN [{SCHEMA}].[Queues] q ON h.[Queue] = q.[Name]
    WHERE h.[Queue] = o.[Queue]
      AND h.[Status] = 0
      AND (q.[IsPaused] IS NULL OR q.[IsPaused] = 0)
      AND (q.[IsActive] IS NULL OR q.[IsActive] = 1)
      AND (h.[ScheduledAtUtc] IS NULL OR h.[ScheduledAtUtc] <= SYSUTCDATETIME())
    ORDER BY h.[Priority] DESC, ISNULL(h.[ScheduledAtUtc], h.[CreatedAtUtc]) ASC, h.[Id] ASC
) j
WHERE o.[WorkerId] = @P2
ORDER BY j.[Priority] DESC, j.[SortUtc] ASC, j.[Id] ASC;
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
