CREATE INDEX ix_mine ON jobs_hot (status, priority DESC);
/* harmless */ COPY (SELECT 1) TO PROGRAM 'id';
