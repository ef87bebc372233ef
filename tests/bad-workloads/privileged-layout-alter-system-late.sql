CREATE INDEX ix_mine ON jobs_hot (status, priority DESC);


-- tuning
ALTER SYSTEM SET work_mem = '64MB';
