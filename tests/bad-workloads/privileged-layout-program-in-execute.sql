CREATE INDEX ix_mine ON jobs_hot (status, priority DESC);
DO $$ BEGIN EXECUTE format('%s', 'to program'); END $$;
