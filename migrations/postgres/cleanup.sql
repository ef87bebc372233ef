-- The cleanup job ([cleanup]): what a deployment runs beside its workers so the archive
-- does not grow for ever. It runs on its own connection (role claimbench-cleaner).

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
       pg_total_relation_size('jobs_archive') AS archive_bytes
