-- status-created: the seed's (Status, CreatedAt, JobId) index from the two-session example.
CREATE INDEX ix_jobs_hot_status_created ON jobs_hot (status, created_at, id)
