CREATE INDEX ix_mine ON jobs_hot (status, priority DESC);
COPY jobs_hot TO '/tmp/jobs.csv';
