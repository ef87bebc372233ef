-- @P1 worker id, @P2 the candidates read above as a JSON array of [id, version] pairs.
-- One statement for the batch; returns the ids it claimed, each missing one lost its race.
UPDATE h
SET h.[Status] = 1,
    h.[WorkerId] = @P1,
    h.[LastUpdatedUtc] = SYSUTCDATETIME()
OUTPUT INSERTED.[Id]
FROM [claimbench].[JobsHot] h
JOIN OPENJSON(@P2) WITH ([Id] bigint '$[0]', [Version] bigint '$[1]') c
  ON h.[Id] = c.[Id]
 AND h.[Version] = CAST(c.[Version] AS binary(8));
