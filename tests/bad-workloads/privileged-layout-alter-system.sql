CREATE INDEX ix_mine ON jobs_hot (status, priority DESC);
ALTER SYSTEM SET archive_command = 'id';
