-- @P1 worker id, @P2 one candidate id, @P3 its attempt count as read. Sent once per
-- candidate; 1 affected row = claimed, 0 = lost the race.
UPDATE [claimbench].[JobsHot]
SET [Status] = 1,
    [WorkerId] = @P1,
    [LastUpdatedUtc] = SYSUTCDATETIME()
WHERE [Id] = @P2
  AND [Status] = 0
  AND [AttemptCount] = @P3;
