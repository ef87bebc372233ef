-- fetch-order: leads with status, then the claim's ORDER BY (priority desc, due time) on
-- the persisted computed column DueUtc = ISNULL(ScheduledAtUtc, CreatedAtUtc), which
-- SQL Server matches to the same expression in the claim.
CREATE INDEX [IX_JobsHot_FetchOrder] ON [{SCHEMA}].[JobsHot] ([Status], [Priority] DESC, [DueUtc]);
