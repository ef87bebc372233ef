-- release: hand fetched-but-unstarted rows back to pending when a worker stops (end of
-- trial). A legitimate release: the attempt count is unchanged.
-- @P1 the ids as a JSON array, @P2 worker id. Returns the ids released.
UPDATE [{SCHEMA}].[JobsHot]
SET [Status] = 0, [WorkerId] = NULL, [LastUpdatedUtc] = SYSUTCDATETIME()
OUTPUT INSERTED.[Id]
WHERE [Id] IN (SELECT CAST([value] AS bigint) FROM OPENJSON(@P1))
  AND [WorkerId] = @P2 AND [Status] = 1;
