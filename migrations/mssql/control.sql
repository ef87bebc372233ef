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

-- step: give-shards
-- @P1 queues, @P2 worker ids, as JSON arrays, pairwise: each worker now owns that shard
-- too (a `sharded` strategy's map; a move gives the new owner its shard before the old
-- one loses it).
INSERT INTO [{SCHEMA}].[ShardOwners] ([Queue], [WorkerId])
SELECT q.[value], w.[value]
FROM OPENJSON(@P1) q
JOIN OPENJSON(@P2) w ON w.[key] = q.[key]
WHERE NOT EXISTS (SELECT 1 FROM [{SCHEMA}].[ShardOwners] o
                  WHERE o.[Queue] = q.[value] AND o.[WorkerId] = w.[value]);

-- step: take-shards
-- @P1 queues, @P2 worker ids, as JSON arrays, pairwise: those workers no longer own those
-- shards (a move's overlap has ended).
DELETE o
FROM [{SCHEMA}].[ShardOwners] o
JOIN OPENJSON(@P1) q ON o.[Queue] = q.[value]
JOIN OPENJSON(@P2) w ON w.[key] = q.[key] AND o.[WorkerId] = w.[value];

-- step: role-rights
-- The login's rights that reach the server's host, before a workload's declared T-SQL
-- runs as it: sysadmin, CONTROL SERVER (which can enable xp_cmdshell), and bulk
-- operations (which read the host's files).
SELECT CAST(SUSER_SNAME() AS nvarchar(256)),
       CAST(ISNULL(IS_SRVROLEMEMBER(N'sysadmin'), 0) AS int),
       CAST(ISNULL(HAS_PERMS_BY_NAME(NULL, NULL, N'CONTROL SERVER'), 0) AS int),
       CAST(ISNULL(HAS_PERMS_BY_NAME(NULL, NULL, N'ADMINISTER BULK OPERATIONS'), 0) AS int)
