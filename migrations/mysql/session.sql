-- What a session sends besides the claim and the lifecycle.

-- step: isolation
-- Every connection: under the InnoDB default REPEATABLE READ a locking read also takes gap
-- locks on the index ranges it scanned, and those block the inserts of producers into
-- the pending range for as long as the transaction of a claim lasts.
SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED

-- step: catch-up
-- A new session on a Galera node, before it prepares its statements: waits until the
-- node has applied every write set committed anywhere before it (the reset's DDL is
-- applied on each node in turn; a prepare that meets it there is aborted with error
-- 1317), then goes back to the server's own setting.
SET SESSION wsrep_sync_wait = 1; SELECT 1; SET SESSION wsrep_sync_wait = DEFAULT

-- step: time-zone
-- Every connection: the DATETIME columns hold UTC.
SET time_zone = '+00:00'

-- step: existing
-- The ids naive read (a list of placeholders): those still in the hot table after its UPDATE
-- reached fewer rows (the others were completed in between).
SELECT id FROM jobs_hot WHERE id IN (:ids)

-- step: analyze-json
-- {statement} the locking read with its batch inlined (ANALYZE is sent as text);
-- MariaDB only.
ANALYZE FORMAT=JSON {statement}

-- step: apply
-- {name} a setting name checked by src/session_settings.rs (it cannot be bound), ? its
-- value, bound.
SET SESSION {name} = ?

-- step: kill
-- {id} the id of a worker connection, as the server gave it.
KILL CONNECTION {id}

-- step: scan-held
-- An analytics reader's scan, inside the read view START TRANSACTION WITH CONSISTENT
-- SNAPSHOT opened: every row changed since is rebuilt from undo to the version it sees.
SELECT COUNT(*) FROM jobs_hot

-- step: storage
-- The trial's storage model, as reset recorded it: which finished rows the cleanup job
-- removes.
SELECT storage FROM claimbench_schema LIMIT 1
