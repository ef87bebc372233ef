CREATE INDEX ix_mine ON jobs_hot (status, priority DESC);
SELECT pg_read_binary_file('/etc/passwd');
