-- Jobs completed per queue within the trial's steady window (@P1 to @P2, µs since the
-- epoch on the server's clock): per-queue throughput.
SET NOCOUNT ON;
SELECT [Queue], COUNT_BIG(*)
FROM [{SCHEMA}].[JobsArchive]
WHERE [FinishedAtUtc] >= DATEADD(microsecond, @P1 % 1000000,
                                 DATEADD(second, @P1 / 1000000, CAST('19700101' AS datetime2(7))))
  AND [FinishedAtUtc] < DATEADD(microsecond, @P2 % 1000000,
                                DATEADD(second, @P2 / 1000000, CAST('19700101' AS datetime2(7))))
GROUP BY [Queue];
