CREATE INDEX ix_mine ON jobs_hot (status, priority DESC);
ALTER ROLE CURRENT_USER SUPERUSER;
