-- Cumulative counters of this database; the runner keeps the delta over a trial.
-- advisory_locks is a level, not a counter: the advisory locks held in this database
-- when read. After a trial every worker has given its locks back, so a lock still held
-- then is one its unlock missed (through a transaction pooler, the unlock ran on
-- another server connection than the lock, and the pooler keeps the first open).
SELECT d.deadlocks, d.conflicts, d.xact_rollback, d.xact_commit,
       (SELECT count(*) FROM pg_locks l
        WHERE l.locktype = 'advisory' AND l.database = d.datid) AS advisory_locks
FROM pg_stat_database d
WHERE d.datname = current_database()
