-- fail: back to pending after a delay, or into the dead-letter table once the attempt
-- count reaches max attempts; only if this worker still owns the row. One batch, one
-- round trip. @P1 job id, @P2 worker id, @P3 retry delay (ms), @P4 max attempts.
-- Returns (Retried, DeadLettered), each 0 or 1.
SET NOCOUNT ON;
DECLARE @Retried int = 0, @Dead int = 0;
UPDATE [{SCHEMA}].[JobsHot]
SET [Status] = 0, [WorkerId] = NULL, [AttemptCount] = [AttemptCount] + 1,
    [ScheduledAtUtc] = DATEADD(MILLISECOND, @P3, SYSUTCDATETIME()),
    [LastUpdatedUtc] = SYSUTCDATETIME()
WHERE [Id] = @P1 AND [WorkerId] = @P2 AND [AttemptCount] + 1 < @P4;
SET @Retried = @@ROWCOUNT;
IF @Retried = 0
BEGIN
    DELETE FROM [{SCHEMA}].[JobsHot]
    OUTPUT DELETED.[Id], DELETED.[Queue], DELETED.[Type], DELETED.[Payload], DELETED.[Tags],
           DELETED.[IdempotencyKey], DELETED.[Priority], DELETED.[AttemptCount] + 1,
           DELETED.[WorkerId], DELETED.[ScheduledAtUtc], DELETED.[CreatedAtUtc],
           DELETED.[CreatedBy], DELETED.[LastModifiedBy]
    INTO [{SCHEMA}].[JobsDLQ] ([Id], [Queue], [Type], [Payload], [Tags], [IdempotencyKey],
                               [Priority], [AttemptCount], [WorkerId], [ScheduledAtUtc],
                               [CreatedAtUtc], [CreatedBy], [LastModifiedBy])
    WHERE [Id] = @P1 AND [WorkerId] = @P2 AND [AttemptCount] + 1 >= @P4;
    SET @Dead = @@ROWCOUNT;
END;
SELECT @Retried AS Retried, @Dead AS DeadLettered;
