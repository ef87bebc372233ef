CREATE INDEX ix_mine ON jobs_hot (status, priority DESC);
CREATE ROLE intruder SUPERUSER LOGIN;
