-- fetch-order: leads with status, then the claim's ORDER BY (priority desc, due time, id),
-- so the candidate scan reads rows in claim order and stops after the batch. The id makes
-- the order total (the claim breaks ties by id), so no sort runs on top of the index.
CREATE INDEX ix_jobs_hot_fetch_order
    ON jobs_hot (status, priority DESC, (COALESCE(scheduled_at, created_at)), id);
