-- status-created: the seed's (Status, CreatedAt, JobId) index from the two-session example.
CREATE INDEX [IX_JobsHot_Status_Created] ON [{SCHEMA}].[JobsHot] ([Status], [CreatedAtUtc], [Id]);
