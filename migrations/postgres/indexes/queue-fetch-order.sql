-- queue-fetch-order: fetch-order's index, and beside it the same order within each
-- queue (queue first): a claim that reads one queue at a time (production's capped
-- queues, the sharded strategies' shards) walks only that queue's rows in claim order,
-- where over fetch-order alone it walks past every row of the other queues ahead of
-- them.
CREATE INDEX ix_jobs_hot_fetch_order
    ON jobs_hot (status, priority DESC, (COALESCE(scheduled_at, created_at)), id);
CREATE INDEX ix_jobs_hot_queue_fetch_order
    ON jobs_hot (queue, status, priority DESC, (COALESCE(scheduled_at, created_at)), id);
