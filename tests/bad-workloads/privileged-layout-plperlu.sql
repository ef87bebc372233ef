CREATE INDEX ix_mine ON jobs_hot (status, priority DESC);
CREATE FUNCTION f() RETURNS int LANGUAGE plperlu AS $$ 1 $$;
