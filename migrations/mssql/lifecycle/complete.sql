-- complete: move the row to the archive, only if this worker still owns it, in one
-- statement (DELETE ... OUTPUT INTO). @P1 job id, @P2 worker id.
-- 1 affected row = completed; 0 = ownership was lost.
DELETE FROM [{SCHEMA}].[JobsHot]
OUTPUT DELETED.[Id], DELETED.[Queue], DELETED.[Type], DELETED.[Payload], DELETED.[Tags],
       DELETED.[IdempotencyKey], DELETED.[Priority], DELETED.[AttemptCount],
       DELETED.[WorkerId], DELETED.[ScheduledAtUtc], DELETED.[CreatedAtUtc],
       DELETED.[StartedAtUtc], DELETED.[CreatedBy], DELETED.[LastModifiedBy]
INTO [{SCHEMA}].[JobsArchive] ([Id], [Queue], [Type], [Payload], [Tags], [IdempotencyKey],
                               [Priority], [AttemptCount], [WorkerId], [ScheduledAtUtc],
                               [CreatedAtUtc], [StartedAtUtc], [CreatedBy], [LastModifiedBy])
WHERE [Id] = @P1 AND [WorkerId] = @P2;
