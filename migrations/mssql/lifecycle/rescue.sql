-- rescue: return fetched rows whose claim expired and processing rows whose heartbeat
-- expired. A legitimate release: the attempt count goes up, so a later run is a new
-- attempt, not a duplicate. READPAST: a row a worker is changing right now is not
-- expired. @P1 lease (ms). Returns the ids rescued.
UPDATE [{SCHEMA}].[JobsHot] WITH (READPAST)
SET [Status] = 0, [WorkerId] = NULL, [AttemptCount] = [AttemptCount] + 1,
    [LastUpdatedUtc] = SYSUTCDATETIME()
OUTPUT INSERTED.[Id]
WHERE ([Status] = 1 AND [LastUpdatedUtc] < DATEADD(MILLISECOND, -@P1, SYSUTCDATETIME()))
   OR ([Status] = 2 AND [HeartbeatUtc] < DATEADD(MILLISECOND, -@P1, SYSUTCDATETIME()));
