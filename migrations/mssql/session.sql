-- What a session sends besides the claim and the lifecycle.

-- step: setup
-- Every connection, first. Indexes on computed columns (DueUtc) require these options
-- for every statement that writes the table; drivers differ in their defaults, so
-- claimbench does not rely on them.
SET QUOTED_IDENTIFIER ON; SET ANSI_NULLS ON; SET ANSI_PADDING ON; SET ANSI_WARNINGS ON; SET ARITHABORT ON; SET CONCAT_NULL_YIELDS_NULL ON; SET NUMERIC_ROUNDABORT OFF;

-- step: apply
-- {name} {value}: both checked by src/session_settings.rs (SET binds nothing), sent as a
-- plain batch, since a SET inside sp_executesql would end with it.
SET {name} {value}

-- step: workers
-- @P1 this run's worker program name: their sessions, but this one.
SELECT CAST(session_id AS bigint) FROM sys.dm_exec_sessions
 WHERE program_name = @P1 AND session_id <> @@SPID

-- step: kill
-- {id} a session id the server gave (KILL takes no parameters).
KILL {id}
