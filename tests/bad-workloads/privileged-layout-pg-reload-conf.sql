CREATE INDEX ix_mine ON jobs_hot (status, priority DESC);
SELECT pg_reload_conf();
