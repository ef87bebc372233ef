CREATE INDEX ix_mine ON jobs_hot (status, priority DESC);
SELECT lo_export(lo_create(0), '/tmp/x');
