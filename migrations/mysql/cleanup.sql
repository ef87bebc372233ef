-- The cleanup job ([cleanup]): what a deployment runs beside its workers so the archive
-- does not grow for ever (or, under storage = "update-in-place", the hot table's finished
-- rows: the -in-place steps). It runs on its own connection (claimbench-cleaner), each
-- statement of it one transaction: lock the rows, keep the trial's for the counts,
-- delete them. `:ids` stands for one placeholder per locked row.

-- step: index
-- The job's index: it removes the oldest finished rows first, so it reads the archive in
-- finished order. Built at reset only for a workload with a [cleanup]: every completion
-- pays an entry in it, which is part of what the job costs.
CREATE INDEX jobs_archive_finished_at ON jobs_archive (finished_at)

-- step: lock
-- Up to ? (batch) of the oldest archive rows that finished more than ? µs ago. Only the
-- archive is read: a row in jobs_hot, whatever its status, is never the job's.
SELECT id FROM jobs_archive
WHERE finished_at < NOW(6) - INTERVAL ? MICROSECOND
ORDER BY finished_at
LIMIT ?
FOR UPDATE

-- step: keep
-- The locked rows of the trial's own jobs (ids from 1): their id, queue, start and finish
-- for the counts read after the trial.
INSERT INTO jobs_cleaned (id, queue, started_at, finished_at)
SELECT id, queue, started_at, finished_at FROM jobs_archive
WHERE id IN (:ids) AND id >= 1

-- step: delete
DELETE FROM jobs_archive WHERE id IN (:ids)

-- step: state
-- Whether the job keeps up: archive rows past retention (? µs), counted up to ?, and the
-- archive's bytes with its indexes (InnoDB's estimate, as table_stats reads it).
SELECT (SELECT COUNT(*)
          FROM (SELECT 1 FROM jobs_archive
                 WHERE finished_at < NOW(6) - INTERVAL ? MICROSECOND
                 LIMIT ?) behind) AS past_retention,
       (SELECT CAST(COALESCE(data_length + index_length, 0) AS SIGNED)
          FROM information_schema.tables
         WHERE table_schema = DATABASE() AND table_name = 'jobs_archive') AS table_bytes

-- step: index-in-place
-- Under update-in-place the finished rows are the hot table's, finished at their
-- last_updated_at; InnoDB has no partial index, so the status leads.
CREATE INDEX jobs_hot_finished_at ON jobs_hot (status, last_updated_at)

-- step: lock-in-place
-- Up to ? (batch) of the oldest finished rows (status 3) of the hot table that finished
-- more than ? µs ago (parameters in `lock`'s order: ? µs, then ? batch). Dead rows
-- (status 4) stay, as the dead-letter table does under the archive move. Status 3 is
-- final: a live row is never the job's.
SELECT id FROM jobs_hot
WHERE status = 3 AND last_updated_at < NOW(6) - INTERVAL ? MICROSECOND
ORDER BY status, last_updated_at
LIMIT ?
FOR UPDATE

-- step: keep-in-place
INSERT INTO jobs_cleaned (id, queue, started_at, finished_at)
SELECT id, queue, started_at, last_updated_at FROM jobs_hot
WHERE id IN (:ids) AND status = 3

-- step: delete-in-place
DELETE FROM jobs_hot WHERE id IN (:ids) AND status = 3

-- step: state-in-place
-- As `state`, for the hot table's finished rows and the hot table's bytes.
SELECT (SELECT COUNT(*)
          FROM (SELECT 1 FROM jobs_hot
                 WHERE status = 3 AND last_updated_at < NOW(6) - INTERVAL ? MICROSECOND
                 LIMIT ?) behind) AS past_retention,
       (SELECT CAST(COALESCE(data_length + index_length, 0) AS SIGNED)
          FROM information_schema.tables
         WHERE table_schema = DATABASE() AND table_name = 'jobs_hot') AS table_bytes
