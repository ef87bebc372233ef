-- start (the seed's MarkAsProcessing): only if this worker still owns the fetched row.
-- @P1 job id, @P2 worker id, @P3 this execution's token. Returns the start time (µs since
-- the epoch, the database's clock, kept at whole microseconds) when it started; no row =
-- the job is no longer ours.
UPDATE [{SCHEMA}].[JobsHot]
SET [Status] = 2, [StartedAtUtc] = CAST(SYSUTCDATETIME() AS datetime2(6)),
    [HeartbeatUtc] = SYSUTCDATETIME(), [LastUpdatedUtc] = SYSUTCDATETIME(),
    [ExecToken] = @P3
OUTPUT DATEDIFF_BIG(microsecond, '19700101', INSERTED.[StartedAtUtc])
WHERE [Id] = @P1 AND [WorkerId] = @P2 AND [Status] = 1;
