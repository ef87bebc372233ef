-- @P1 worker id, @P2 the ids read above as a JSON array. Unconditional: no status check.
UPDATE h
SET h.[Status] = 1,
    h.[WorkerId] = @P1,
    h.[LastUpdatedUtc] = SYSUTCDATETIME()
FROM [claimbench].[JobsHot] h
WHERE h.[Id] IN (SELECT CAST([value] AS bigint) FROM OPENJSON(@P2));
