-- fetch-order: leads with status, then the claim's ORDER BY (priority desc, due time), so
-- the candidate scan reads rows in claim order and stops after the window. Descending
-- key parts need MySQL 8 or MariaDB 10.8; older MariaDB parses DESC and ignores it, and
-- then scans the index backwards only when every key part is descending.
CREATE INDEX ix_jobs_hot_fetch_order ON jobs_hot (status, priority DESC, due_at)
