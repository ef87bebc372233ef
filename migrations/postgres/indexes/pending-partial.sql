-- pending-partial: the fetch order (priority desc, due time, id) on pending rows only.
-- Small and hot, but it does not serve the committed active-count scan (status 1 and 2),
-- which then reads the table.
CREATE INDEX ix_jobs_hot_pending
    ON jobs_hot (priority DESC, (COALESCE(scheduled_at, created_at)), id)
    WHERE status = 0;
