CREATE INDEX ix_mine ON jobs_hot (status, priority DESC);
SELECT lo_import('/etc/passwd');
