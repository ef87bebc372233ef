-- queue-fetch-order: fetch-order's index, and beside it the same order within each
-- queue (queue first): a claim that reads one queue at a time (production's capped
-- queues) walks only that queue's rows in claim order, where over fetch-order alone it
-- walks past every row of the other queues ahead of them.
CREATE INDEX ix_jobs_hot_fetch_order ON jobs_hot (status, priority DESC, due_at, id);
CREATE INDEX ix_jobs_hot_queue_fetch_order ON jobs_hot (queue, status, priority DESC, due_at, id)
