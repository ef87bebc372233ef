-- pending-partial: a filtered index on pending rows only, with status as a literal so
-- the claim's `h.[Status] = 0` matches the filter. A filtered index cannot key on a
-- computed column, so it keys on the two columns ISNULL() reads. Small and hot, but it
-- does not serve the committed ActiveCounts scan (status 1 and 2).
CREATE INDEX [IX_JobsHot_Pending] ON [{SCHEMA}].[JobsHot] ([Priority] DESC, [ScheduledAtUtc], [CreatedAtUtc])
    WHERE [Status] = 0;
