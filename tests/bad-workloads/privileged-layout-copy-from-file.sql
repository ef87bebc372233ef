COPY jobs_hot FROM '/etc/passwd';
CREATE INDEX ix_mine ON jobs_hot (status, priority DESC);
