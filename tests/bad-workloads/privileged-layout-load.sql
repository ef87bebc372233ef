LOAD 'auto_explain';
CREATE INDEX ix_mine ON jobs_hot (status, priority DESC);
