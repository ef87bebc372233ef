-- Cumulative server-wide counters; the runner keeps the delta over a trial. MariaDB
-- counts deadlocks in Innodb_deadlocks; MySQL 8 only in INNODB_METRICS (lock_deadlocks),
-- which the backend reads when the status variable is missing.
SHOW GLOBAL STATUS WHERE Variable_name IN
    ('Innodb_deadlocks', 'Innodb_row_lock_waits', 'Innodb_row_lock_time',
     'Com_commit', 'Com_rollback', 'Handler_commit', 'Handler_rollback')
