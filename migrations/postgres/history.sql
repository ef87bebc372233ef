-- history: rows no claim may take, left in the hot table beside the backlog
-- (population.history), in this order of ids after the backlog's: finished jobs no
-- archive step moved (status 3), failed ones kept where they failed (status 4), pending
-- jobs scheduled a day or more ahead, and pending jobs of the paused queue
-- `claimbench-paused`. All but the future ones were created over the past day, so the
-- paused ones sort ahead of new jobs in fetch order. The finished and failed rows are
-- not jobs any count follows; the future and paused ones stay pending and count as seeded.
-- $1 the backlog (its last id), $2 finished, $3 failed, $4 future, $5 paused rows,
-- $6 queue names, $7 queue lower bounds, $8 payload bytes.
-- step: rows
INSERT INTO jobs_hot (id, queue, type, payload, priority, status, attempt_count,
                      scheduled_at, created_at, last_updated_at, created_by)
SELECT $1::bigint + g,
       CASE WHEN g > $2::bigint + $3::bigint + $4::bigint THEN 'claimbench-paused'
            ELSE ($6::text[])[width_bucket(random(), $7::float8[])] END,
       'bench',
       repeat('x', $8::int),
       0,
       CASE WHEN g <= $2::bigint THEN 3 WHEN g <= $2::bigint + $3::bigint THEN 4 ELSE 0 END,
       CASE WHEN g <= $2::bigint + $3::bigint THEN 1 ELSE 0 END,
       CASE WHEN g > $2::bigint + $3::bigint AND g <= $2::bigint + $3::bigint + $4::bigint
            THEN now() + interval '1 day' + make_interval(secs => random() * 86400) END,
       now() - make_interval(secs => random() * 86400),
       now(),
       'claimbench-history'
FROM generate_series(1, $2::bigint + $3::bigint + $4::bigint + $5::bigint) AS g
-- step: paused-queue
-- The paused rows' queue; only when there are paused rows.
INSERT INTO queues (name, is_paused, is_active, max_workers)
VALUES ('claimbench-paused', true, true, NULL)
-- step: archived
-- Finished jobs already in the archive (population.history.archived): what a cleanup job
-- finds on a system that has run for a while. Each finished at a random time over the
-- past day, a second after it started. Ids -1, -2, …: below every job of the trial, so
-- no count after it includes one (evidence/ reads ids from 1).
-- $1 rows, $2 queue names, $3 queue lower bounds, $4 payload bytes.
INSERT INTO jobs_archive (id, queue, type, payload, priority, attempt_count, worker_id,
                          created_at, started_at, finished_at, created_by)
SELECT -t.g,
       ($2::text[])[width_bucket(random(), $3::float8[])],
       'bench',
       repeat('x', $4::int),
       0,
       1,
       'claimbench-history',
       t.finished_at - interval '2 seconds',
       t.finished_at - interval '1 second',
       t.finished_at,
       'claimbench-history'
FROM (SELECT g, now() - make_interval(secs => random() * 86400) AS finished_at
        FROM generate_series(1, $1::bigint) AS g) t
