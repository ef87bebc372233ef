-- Cumulative counters of this database; the runner keeps the delta over a trial.
SELECT deadlocks, conflicts, xact_rollback, xact_commit
FROM pg_stat_database
WHERE datname = current_database()
