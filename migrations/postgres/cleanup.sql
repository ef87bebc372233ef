-- The cleanup job ([cleanup]): what a deployment runs beside its workers so finished
-- rows do not pile up for ever: from the archive (storage = "archive-move"), or from the
-- hot table's finished rows (storage = "update-in-place", the -in-place steps). It runs
-- on its own connection (role claimbench-cleaner).

-- step: index
-- The job's index: it removes the oldest finished rows first, so it reads the archive in
-- finished order. Built at reset only for a workload with a [cleanup]: every completion
-- pays an entry in it, which is part of what the job costs.
CREATE INDEX jobs_archive_finished_at ON jobs_archive (finished_at)

-- step: batch
-- One statement of the job: removes up to $2 of the oldest archive rows that finished
-- more than $1 seconds ago. The trial's own jobs (ids from 1) leave their id, queue,
-- start and finish in jobs_cleaned for the counts read after the trial; seeded history
-- leaves nothing. Returns how many rows it removed. Only the archive is read: a row in
-- jobs_hot, whatever its status, is never this statement's.
WITH doomed AS (
    SELECT id
    FROM jobs_archive
    WHERE finished_at < now() - make_interval(secs => $1::float8)
    ORDER BY finished_at
    LIMIT $2::bigint
),
gone AS (
    DELETE FROM jobs_archive a
    USING doomed d
    WHERE a.id = d.id
    RETURNING a.id, a.queue, a.started_at, a.finished_at
),
kept AS (
    INSERT INTO jobs_cleaned (id, queue, started_at, finished_at)
    SELECT id, queue, started_at, finished_at FROM gone WHERE id >= 1
)
SELECT count(*) FROM gone

-- step: state
-- Whether the job keeps up: archive rows past retention ($1 seconds), counted up to $2
-- (a job far behind would make an exact count as slow as the backlog it left), and the
-- archive's bytes with its indexes.
SELECT (SELECT count(*)
          FROM (SELECT 1 FROM jobs_archive
                 WHERE finished_at < now() - make_interval(secs => $1::float8)
                 LIMIT $2::bigint) behind) AS past_retention,
       pg_total_relation_size('jobs_archive') AS table_bytes

-- step: index-in-place
-- Under update-in-place the finished rows are the hot table's, finished at their
-- last_updated_at: a partial index on them is the job's.
CREATE INDEX jobs_hot_finished_at ON jobs_hot (last_updated_at) WHERE status = 3

-- step: batch-in-place
-- One statement of the job under update-in-place: removes up to $2 of the oldest
-- finished rows (status 3) of the hot table that finished more than $1 seconds ago. Dead
-- rows (status 4) stay, as the dead-letter table does under the archive move. The
-- trial's own jobs leave their id, queue, start and finish in jobs_cleaned; seeded
-- history (population.history) leaves nothing. A row of any live status is never the
-- job's: status 3 is final, and the DELETE checks it again.
WITH doomed AS (
    SELECT id
    FROM jobs_hot
    WHERE status = 3
      AND last_updated_at < now() - make_interval(secs => $1::float8)
    ORDER BY last_updated_at
    LIMIT $2::bigint
),
gone AS (
    DELETE FROM jobs_hot h
    USING doomed d
    WHERE h.id = d.id AND h.status = 3
    RETURNING h.id, h.queue, h.started_at, h.last_updated_at, h.created_by
),
kept AS (
    INSERT INTO jobs_cleaned (id, queue, started_at, finished_at)
    SELECT id, queue, started_at, last_updated_at FROM gone
    WHERE created_by IS DISTINCT FROM 'claimbench-history'
)
SELECT count(*) FROM gone

-- step: state-in-place
-- As `state`, for the hot table's finished rows and the hot table's bytes (its
-- partitions' under storage = "partitioned", whose job is storage/partitioned.sql's).
SELECT (SELECT count(*)
          FROM (SELECT 1 FROM jobs_hot
                 WHERE status = 3
                   AND last_updated_at < now() - make_interval(secs => $1::float8)
                 LIMIT $2::bigint) behind) AS past_retention,
       (SELECT sum(pg_total_relation_size(relid))::bigint
          FROM (SELECT relid FROM pg_partition_tree('jobs_hot')
             UNION SELECT 'jobs_hot'::regclass) t) AS table_bytes
