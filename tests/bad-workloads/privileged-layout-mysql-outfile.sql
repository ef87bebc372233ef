CREATE INDEX ix_team ON jobs_hot (status, id);
SELECT id FROM jobs_hot INTO OUTFILE "/tmp/jobs";
