SET ROLE postgres;
CREATE INDEX ix_mine ON jobs_hot (status, priority DESC);
