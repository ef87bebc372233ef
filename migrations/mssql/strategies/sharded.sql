-- sharded: every worker claims only inside its own shards, with the conditional claim
-- kept anyway (the usual advice for sharded pollers): when a shard's ownership moves,
-- the old and the new owner both believe they own it for a while, and only the UPDATE's
-- check stops them both taking a job.
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
