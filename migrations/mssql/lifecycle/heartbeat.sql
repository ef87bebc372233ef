-- heartbeat: extends the lease of a running execution, only while this worker owns the
-- row under this execution's token. @P1 job id, @P2 worker id, @P3 token. 1 row =
-- extended; 0 = ownership was lost (the rescuer took the row back).
UPDATE [{SCHEMA}].[JobsHot]
SET [HeartbeatUtc] = SYSUTCDATETIME()
WHERE [Id] = @P1 AND [WorkerId] = @P2 AND [Status] = 2 AND [ExecToken] = @P3;
