-- start without the ownership gate (workload handler.start_gate = false): shows what
-- the claim alone guarantees. @P1 job id, @P2 worker id (recorded, not checked), @P3
-- this execution's token. Returns the start time (µs since the epoch).
UPDATE [{SCHEMA}].[JobsHot]
SET [Status] = 2, [WorkerId] = @P2, [StartedAtUtc] = CAST(SYSUTCDATETIME() AS datetime2(6)),
    [HeartbeatUtc] = SYSUTCDATETIME(), [LastUpdatedUtc] = SYSUTCDATETIME(),
    [ExecToken] = @P3
OUTPUT DATEDIFF_BIG(microsecond, '19700101', INSERTED.[StartedAtUtc])
WHERE [Id] = @P1;
