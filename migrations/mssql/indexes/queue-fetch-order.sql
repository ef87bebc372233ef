-- queue-fetch-order: fetch-order's index, and beside it the same order within each
-- queue (queue first): a claim that reads one queue at a time (production's capped
-- queues) seeks to that queue's rows in claim order, where over fetch-order alone it
-- walks past every row of the other queues ahead of them.
CREATE INDEX [IX_JobsHot_FetchOrder] ON [{SCHEMA}].[JobsHot] ([Status], [Priority] DESC, [DueUtc]);
CREATE INDEX [IX_JobsHot_QueueFetchOrder] ON [{SCHEMA}].[JobsHot] ([Queue], [Status], [Priority] DESC, [DueUtc]);
