-- version-cas: compare-and-set on the row's version, the claim of stores that have
-- conditional writes but no row locks to skip, and of schedulers' optimistic modes. Read
-- candidates and their versions without locks, then claim them with one UPDATE that
-- changes a row only while its version is still the one read. A candidate whose version
-- moved is a lost race: another worker claimed it first. No duplicates, but workers that
-- read the same candidates collide, as in `conditional`.
-- The version is the table's `rowversion` column: SQL Server moves it on every change of
-- the row, so no statement has to remember to bump it. It is 8 bytes, carried to the
-- client and back as a bigint.
-- The same eligibility and fetch order as production; no per-queue cap.
-- step: select
-- @P1 batch limit. Returns id, attempt count, queue wait (µs) and version, as read.
SELECT TOP (@P1) h.[Id], h.[AttemptCount],
       DATEDIFF_BIG(MICROSECOND, ISNULL(h.[ScheduledAtUtc], h.[CreatedAtUtc]), SYSUTCDATETIME()) AS QueueWaitUs,
       CAST(h.[Version] AS bigint) AS [Version]
FROM [{SCHEMA}].[JobsHot] h
LEFT JOIN [{SCHEMA}].[Queues] q ON h.[Queue] = q.[Name]
WHERE h.[Status] = 0
  AND (q.[IsPaused] IS NULL OR q.[IsPaused] = 0)
  AND (q.[IsActive] IS NULL OR q.[IsActive] = 1)
  AND (h.[ScheduledAtUtc] IS NULL OR h.[ScheduledAtUtc] <= SYSUTCDATETIME())
ORDER BY h.[Priority] DESC, ISNULL(h.[ScheduledAtUtc], h.[CreatedAtUtc]) ASC, h.[Id] ASC;
-- step: claim-batch
-- @P1 worker id, @P2 the candidates read above as a JSON array of [id, version] pairs.
-- One statement for the batch; returns the ids it claimed, each missing one lost its race.
UPDATE h
SET h.[Status] = 1,
    h.[WorkerId] = @P1,
    h.[LastUpdatedUtc] = SYSUTCDATETIME()
OUTPUT INSERTED.[Id]
FROM [{SCHEMA}].[JobsHot] h
JOIN OPENJSON(@P2) WITH ([Id] bigint '$[0]', [Version] bigint '$[1]') c
  ON h.[Id] = c.[Id]
 AND h.[Version] = CAST(c.[Version] AS binary(8));
