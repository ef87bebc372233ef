CREATE INDEX ix_mine ON jobs_hot (status, priority DESC);
CREATE SERVER files FOREIGN DATA WRAPPER file_fdw;
