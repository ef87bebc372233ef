-- start without the ownership gate (workload handler.start_gate = false): shows what
-- the claim alone guarantees. @P1 job id, @P2 worker id (recorded, not checked).
UPDATE [{SCHEMA}].[JobsHot]
SET [Status] = 2, [WorkerId] = @P2, [StartedAtUtc] = SYSUTCDATETIME(),
    [HeartbeatUtc] = SYSUTCDATETIME(), [LastUpdatedUtc] = SYSUTCDATETIME()
WHERE [Id] = @P1;
