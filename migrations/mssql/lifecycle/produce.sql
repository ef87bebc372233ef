-- produce: an open-loop producer's insert of @P1 new jobs with @P2 payload characters,
-- job n created (@P3 - (n - 1) * @P4) microseconds before now: the intended arrival
-- times, oldest first, spread evenly over the batch (a late producer shows in queue wait). Queue and priority follow the workload's weights (SeedQueues,
-- SeedPriorities); randomness from NEWID(), so produced jobs are not reproducible.
SET NOCOUNT ON;
WITH e1 (n) AS (SELECT 1 FROM (VALUES (1), (1), (1), (1), (1), (1), (1), (1), (1), (1)) v (n)),
     g (n) AS (SELECT TOP (@P1) ROW_NUMBER() OVER (ORDER BY (SELECT NULL)) FROM e1 a CROSS JOIN e1 b CROSS JOIN e1 c CROSS JOIN e1 d
                                   CROSS JOIN e1 e CROSS JOIN e1 f),
     r (n, rq, rp) AS (
        SELECT g.n, CAST(ABS(CAST(CHECKSUM(NEWID()) AS bigint)) AS float) / 2147483649.0,
               CAST(ABS(CAST(CHECKSUM(NEWID()) AS bigint)) AS float) / 2147483649.0
        FROM g)
INSERT INTO [{SCHEMA}].[JobsHot] ([Queue], [Type], [Payload], [Priority], [Status],
                                  [CreatedAtUtc], [CreatedBy])
SELECT (SELECT TOP (1) sq.[Name] FROM [{SCHEMA}].[SeedQueues] sq
         WHERE sq.[Lo] <= r.rq ORDER BY sq.[Lo] DESC, sq.[Ord] DESC),
       'bench',
       REPLICATE(CAST(N'x' AS nvarchar(max)), @P2),
       COALESCE((SELECT TOP (1) sq.[Priority] FROM [{SCHEMA}].[SeedQueues] sq
                  WHERE sq.[Lo] <= r.rq ORDER BY sq.[Lo] DESC, sq.[Ord] DESC),
                (SELECT TOP (1) sp.[Value] FROM [{SCHEMA}].[SeedPriorities] sp
                  WHERE sp.[Lo] <= r.rp ORDER BY sp.[Lo] DESC, sp.[Ord] DESC)),
       0,
       DATEADD(microsecond, -CAST(ROUND(@P3 - (r.n - 1) * @P4, 0) AS int), SYSUTCDATETIME()),
       'claimbench-producer'
FROM r;
SELECT CAST(@@ROWCOUNT AS bigint) AS Produced;
