-- fetch-order: leads with status, then the claim's ORDER BY (priority desc, due time, id),
-- so the candidate scan reads rows in claim order and stops after the batch. InnoDB ends
-- every secondary index with the primary key anyway; naming id says the order is total.
-- Descending key parts need MySQL 8 or MariaDB 10.8; older MariaDB parses DESC and
-- ignores it, and then scans the index backwards only when every key part is descending.
CREATE INDEX ix_jobs_hot_fetch_order ON jobs_hot (status, priority DESC, due_at, id)
