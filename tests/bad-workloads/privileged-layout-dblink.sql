CREATE INDEX ix_mine ON jobs_hot (status, priority DESC);
SELECT dblink_exec('dbname=postgres', 'ALTER SYSTEM SET x = 1');
