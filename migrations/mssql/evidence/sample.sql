-- One sampler reading, on the sampler's own connection, in one round trip. The hot
-- table is read WITH (NOLOCK): the sampler is passive telemetry (the only use the seed
-- allows NOLOCK for), and a locking read would queue behind the claims it observes.
-- @P1 the workload's priority values as a JSON array, @P2 program_name of this run's
-- worker connections, @P3 queues that have a max workers limit as a JSON array (their
-- active counts come back comma-separated, in the same order), @P4 the workload's queues
-- as a JSON array when it has more than one (each one's oldest due pending age in ms comes
-- back comma-separated in the same order, `-` for none; `[]`: not asked).
SET NOCOUNT ON;
SELECT
    (SELECT CAST(DATEDIFF_BIG(MICROSECOND, MIN(o.Due), SYSUTCDATETIME()) AS float) / 1000.0
       FROM OPENJSON(@P1) pr
       CROSS APPLY (
            SELECT TOP (1) ISNULL(h.[ScheduledAtUtc], h.[CreatedAtUtc]) AS Due
              FROM [{SCHEMA}].[JobsHot] h WITH (NOLOCK)
              LEFT JOIN [{SCHEMA}].[Queues] q WITH (NOLOCK) ON h.[Queue] = q.[Name]
             WHERE h.[Status] = 0
               AND h.[Priority] = CAST(pr.[value] AS int)
               AND ISNULL(h.[ScheduledAtUtc], h.[CreatedAtUtc]) <= SYSUTCDATETIME()
               AND (q.[IsPaused] IS NULL OR q.[IsPaused] = 0)
               AND (q.[IsActive] IS NULL OR q.[IsActive] = 1)
             ORDER BY ISNULL(h.[ScheduledAtUtc], h.[CreatedAtUtc])) o) AS OldestPendingMs,
    (SELECT COUNT_BIG(*)
       FROM sys.dm_exec_requests r
       JOIN sys.dm_exec_sessions s ON s.session_id = r.session_id
      WHERE s.program_name = @P2 AND r.wait_type LIKE 'LCK[_]M[_]%') AS LockWaiting,
    (SELECT COUNT_BIG(*)
       FROM sys.dm_exec_requests r
       JOIN sys.dm_exec_sessions s ON s.session_id = r.session_id
      WHERE s.program_name = @P2) AS Active,
    CASE WHEN EXISTS (SELECT 1
                        FROM [{SCHEMA}].[JobsHot] h WITH (NOLOCK)
                        LEFT JOIN [{SCHEMA}].[Queues] q WITH (NOLOCK) ON h.[Queue] = q.[Name]
                       WHERE (q.[IsPaused] IS NULL OR q.[IsPaused] = 0)
                         AND (q.[IsActive] IS NULL OR q.[IsActive] = 1))
         THEN CAST(1 AS bigint) ELSE CAST(0 AS bigint) END AS WorkLeft,
    (SELECT STRING_AGG(CAST(c.n AS varchar(20)), ',') WITHIN GROUP (ORDER BY c.ord)
       FROM (SELECT CAST(u.[key] AS int) AS ord, COUNT_BIG(h.[Id]) AS n
               FROM OPENJSON(@P3) u
               LEFT JOIN [{SCHEMA}].[JobsHot] h WITH (NOLOCK)
                 ON h.[Queue] = u.[value] AND h.[Status] IN (1, 2)
              GROUP BY CAST(u.[key] AS int)) c) AS QueueActive,
    (SELECT STRING_AGG(ISNULL(CAST(a.Ms AS varchar(30)), '-'), ',') WITHIN GROUP (ORDER BY a.Ord)
       FROM (SELECT CAST(u.[key] AS int) AS Ord,
                    (SELECT CAST(DATEDIFF_BIG(MICROSECOND, MIN(o.Due), SYSUTCDATETIME()) AS float) / 1000.0
                       FROM OPENJSON(@P1) pr
                       CROSS APPLY (
                            SELECT TOP (1) ISNULL(h.[ScheduledAtUtc], h.[CreatedAtUtc]) AS Due
                              FROM [{SCHEMA}].[JobsHot] h WITH (NOLOCK)
                             WHERE h.[Status] = 0
                               AND h.[Priority] = CAST(pr.[value] AS int)
                               AND h.[Queue] = u.[value]
                               AND ISNULL(h.[ScheduledAtUtc], h.[CreatedAtUtc]) <= SYSUTCDATETIME()
                             ORDER BY ISNULL(h.[ScheduledAtUtc], h.[CreatedAtUtc])) o
                      WHERE NOT EXISTS (SELECT 1 FROM [{SCHEMA}].[Queues] q WITH (NOLOCK)
                                         WHERE q.[Name] = u.[value]
                                           AND (q.[IsPaused] = 1 OR q.[IsActive] = 0))) AS Ms
               FROM OPENJSON(@P4) u) a) AS QueueOldestMs;
