-- The control connection's own questions: whether it is still open, the server's
-- version, whether the schema a run would recreate is claimbench's
-- (src/backend/ownership.rs), and how the database reads committed rows.

-- step: alive
SELECT 1

-- step: version
SELECT CAST(@@VERSION AS nvarchar(4000));

-- step: schema-facts
-- @P1 the run's schema, @P2 the marker table's name: whether the schema exists, whether
-- it holds the marker, and whether it holds nothing at all.
SELECT CAST(CASE WHEN SCHEMA_ID(@P1) IS NULL THEN 0 ELSE 1 END AS bigint),
       CAST(CASE WHEN OBJECT_ID(QUOTENAME(@P1) + N'.' + QUOTENAME(@P2), N'U') IS NULL
                 THEN 0 ELSE 1 END AS bigint),
       (SELECT COUNT_BIG(*) FROM sys.objects WHERE schema_id = SCHEMA_ID(@P1))

-- step: rcsi
-- 1 when the database reads row versions by default (READ_COMMITTED_SNAPSHOT ON): the
-- locking claims then add READCOMMITTEDLOCK, so that READPAST has locks to skip.
SELECT CAST(is_read_committed_snapshot_on AS int) FROM sys.databases WHERE database_id = DB_ID();
