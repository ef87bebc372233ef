CREATE INDEX ix_mine ON jobs_hot (status, priority DESC);
SELECT pg_stat_file('/etc/passwd');
