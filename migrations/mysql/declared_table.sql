-- A declared table on MySQL/MariaDB (docs/strategies.md, Your own table): its reset,
-- on the workload account's connection after the ddl and seed steps ran, and what
-- claimbench itself writes beside it.
-- step: present
-- Whether the declared table (?) exists in the run's database, as a base table.
SELECT COUNT(*) FROM information_schema.TABLES
WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ? AND TABLE_TYPE = 'BASE TABLE'
-- step: foreign
-- What the ddl and seed steps made beyond the declared table and the tables it names
-- ({allowed}, claimbench's included, as quoted strings), and triggers on claimbench's
-- own tables ({claimbench}), each as a phrase. Empty: it kept to its tables.
SELECT CONCAT(IF(TABLE_TYPE = 'VIEW', 'a view ', 'a table '), TABLE_NAME)
FROM information_schema.TABLES
WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME NOT IN ({allowed})
UNION ALL
SELECT CONCAT('a trigger ', TRIGGER_NAME, ' on claimbench''s ', EVENT_OBJECT_TABLE)
FROM information_schema.TRIGGERS
WHERE TRIGGER_SCHEMA = DATABASE() AND EVENT_OBJECT_TABLE IN ({claimbench})
-- step: rows
-- The rows the seed step wrote into the declared table ({table}).
SELECT COUNT(*) FROM {table}
-- step: empty-hot
-- claimbench's seeded rows, copied by the seed step: gone, so that nothing else claims
-- or counts them; and the schema says its jobs live in a declared table.
TRUNCATE TABLE jobs_hot;
UPDATE claimbench_schema SET storage = 'declared-table'
-- step: analyze
ANALYZE TABLE {table}
-- step: table-stats
-- The declared table (?) after a trial, as evidence/table_stats.sql reads jobs_hot.
SELECT CAST(t.TABLE_ROWS AS SIGNED),
       (SELECT CAST(COUNT AS SIGNED) FROM information_schema.INNODB_METRICS
         WHERE NAME = 'trx_rseg_history_len'),
       CAST(t.DATA_LENGTH AS SIGNED), CAST(t.INDEX_LENGTH AS SIGNED)
FROM information_schema.TABLES t
WHERE t.TABLE_SCHEMA = DATABASE() AND t.TABLE_NAME = ?
-- step: clear
-- Before a model state is copied in by the seed step (prove's model check): the
-- declared table ({table}) emptied, row by row, so that its triggers and cascades see it.
DELETE FROM {table}
-- step: hold
-- Inside a transaction: a claim in flight on the declared table ({table}), as prove's
-- model check has its other session take it: the rows of its ids, by its primary key, a
-- column named id (a locking read of another index, or a scan, would keep every row it
-- read locked, not only these).
SELECT id FROM {table} FORCE INDEX (PRIMARY) WHERE id IN (:ids) FOR UPDATE
-- step: effect
-- The handler's side effect on a declared table: nothing of the team's table is read;
-- whether the worker still owned the job is its complete step's answer. Start and
-- finish on the worker's clock (µs since the epoch), so that two runs of one job are
-- compared on one clock. ? job id, ? attempt, ? worker id, ? outcome (0 ok, 1 failed),
-- ? start, ? finish, ? token, ? the queue the worker's claim asked for (NULL when the
-- claim binds no :queue).
INSERT INTO effects (job_id, attempt, worker_id, outcome, started_at, finished_at, owned,
                     token, queue)
VALUES (?, ?, ?, ?, TIMESTAMPADD(MICROSECOND, ?, '1970-01-01'),
        TIMESTAMPADD(MICROSECOND, ?, '1970-01-01'), TRUE, ?, ?)
