-- @P1 worker id, @P2 the ids read above as a JSON array. Unconditional: no status check.
-- Returns the ids it changed: a row completed (deleted) since the read is not claimed.
UPDATE h
SET h.[Status] = 1,
    h.[WorkerId] = @P1,
    h.[LastUpdatedUtc] = SYSUTCDATETIME()
OUTPUT INSERTED.[Id]
FROM [claimbench].[JobsHot] h
WHERE h.[Id] IN (SELECT CAST([value] AS bigint) FROM OPENJSON(@P2));
