-- start (the seed's MarkAsProcessing): only if this worker still owns the fetched row.
-- @P1 job id, @P2 worker id. 1 affected row = start; 0 = the job is no longer ours.
UPDATE [{SCHEMA}].[JobsHot]
SET [Status] = 2, [StartedAtUtc] = SYSUTCDATETIME(), [HeartbeatUtc] = SYSUTCDATETIME(),
    [LastUpdatedUtc] = SYSUTCDATETIME()
WHERE [Id] = @P1 AND [WorkerId] = @P2 AND [Status] = 1;
