-- Server-side population of the hot table: one INSERT ... SELECT from a stacked-CTE
-- numbers table, no client round trip per row. Ids are 1..n in creation order.
-- Deterministic for a given seed: each row's four uniform numbers are 32-bit slices of
-- MD5(seed, row number). @P1 rows, @P2 seed, @P3 payload characters, @P4 share scheduled
-- in the future, @P5 milliseconds within which scheduled jobs become due.
SET NOCOUNT ON;
SET IDENTITY_INSERT [{SCHEMA}].[JobsHot] ON;
WITH e1 (n) AS (SELECT 1 FROM (VALUES (1), (1), (1), (1), (1), (1), (1), (1), (1), (1)) v (n)),
     e3 (n) AS (SELECT 1 FROM e1 a CROSS JOIN e1 b CROSS JOIN e1 c),
     g (n) AS (SELECT TOP (@P1) ROW_NUMBER() OVER (ORDER BY (SELECT NULL))
               FROM e3 a CROSS JOIN e3 b CROSS JOIN e3 c),
     h (n, md5) AS (SELECT n, HASHBYTES('MD5', CONCAT(@P2, ':', n)) FROM g),
     r (n, rq, rp, rs, rw) AS (
        SELECT n,
               CAST(CAST(SUBSTRING(md5, 1, 4) AS int) AS float) / 4294967296.0 + 0.5,
               CAST(CAST(SUBSTRING(md5, 5, 4) AS int) AS float) / 4294967296.0 + 0.5,
               CAST(CAST(SUBSTRING(md5, 9, 4) AS int) AS float) / 4294967296.0 + 0.5,
               CAST(CAST(SUBSTRING(md5, 13, 4) AS int) AS float) / 4294967296.0 + 0.5
        FROM h)
INSERT INTO [{SCHEMA}].[JobsHot] ([Id], [Queue], [Type], [Payload], [Priority], [Status],
                                  [ScheduledAtUtc], [CreatedAtUtc], [CreatedBy])
SELECT r.n,
       (SELECT TOP (1) sq.[Name] FROM [{SCHEMA}].[SeedQueues] sq
         WHERE sq.[Lo] <= r.rq ORDER BY sq.[Lo] DESC, sq.[Ord] DESC),
       'bench',
       REPLICATE(CAST(N'x' AS nvarchar(max)), @P3),
       COALESCE((SELECT TOP (1) sq.[Priority] FROM [{SCHEMA}].[SeedQueues] sq
                  WHERE sq.[Lo] <= r.rq ORDER BY sq.[Lo] DESC, sq.[Ord] DESC),
                (SELECT TOP (1) sp.[Value] FROM [{SCHEMA}].[SeedPriorities] sp
                  WHERE sp.[Lo] <= r.rp ORDER BY sp.[Lo] DESC, sp.[Ord] DESC)),
       0,
       CASE WHEN r.rs < @P4
            THEN DATEADD(MILLISECOND, CAST(r.rw * @P5 AS int), SYSUTCDATETIME()) END,
       SYSUTCDATETIME(),
       'claimbench'
FROM r
ORDER BY r.n;
SELECT CAST(@@ROWCOUNT AS bigint) AS Seeded;
SET IDENTITY_INSERT [{SCHEMA}].[JobsHot] OFF;
