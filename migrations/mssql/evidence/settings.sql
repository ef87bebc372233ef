-- Settings that decide whether two runs may be compared, and the one that decides the
-- production statement's form (is_read_committed_snapshot_on).
SET NOCOUNT ON;
SELECT CAST(name AS nvarchar(128)), CAST(value_in_use AS nvarchar(128))
  FROM sys.configurations
 WHERE name IN ('max degree of parallelism', 'cost threshold for parallelism',
                'max server memory (MB)', 'locks')
UNION ALL
SELECT N'is_read_committed_snapshot_on', CAST(is_read_committed_snapshot_on AS nvarchar(128))
  FROM sys.databases WHERE database_id = DB_ID()
UNION ALL
SELECT N'snapshot_isolation_state', CAST(snapshot_isolation_state_desc AS nvarchar(128))
  FROM sys.databases WHERE database_id = DB_ID()
UNION ALL
SELECT N'recovery_model', CAST(recovery_model_desc AS nvarchar(128))
  FROM sys.databases WHERE database_id = DB_ID()
UNION ALL
SELECT N'delayed_durability', CAST(delayed_durability_desc AS nvarchar(128))
  FROM sys.databases WHERE database_id = DB_ID()
UNION ALL
SELECT N'compatibility_level', CAST(compatibility_level AS nvarchar(128))
  FROM sys.databases WHERE database_id = DB_ID();
