-- The simulated handler's side effect, witnessed by the database: attempt, start time and
-- token come from the row this worker owns (same worker, processing, same token), not
-- from the worker. When the worker no longer owns it, the row is still written, with
-- owned = false and the worker's own attempt and start time.
-- $1 job id, $2 attempt (attempt_count at claim), $3 worker id, $4 outcome (0 ok,
-- 1 failed), $5 start time the worker was given (µs since the epoch), $6 token.
-- The owned row's queue is kept too (NULL when not owned).
-- Returns the finish time (µs since the epoch) and whether the row was owned.
INSERT INTO effects (job_id, attempt, worker_id, outcome, started_at, finished_at, owned, token,
                     queue)
SELECT $1, COALESCE(h.attempt_count, $2), $3, $4,
       COALESCE(h.started_at, 'epoch'::timestamptz + $5::bigint * interval '1 microsecond'),
       clock_timestamp(), h.id IS NOT NULL, h.exec_token, h.queue
FROM (SELECT 1) AS one
LEFT JOIN jobs_hot h ON h.id = $1 AND h.worker_id = $3 AND h.status = 2 AND h.exec_token = $6
RETURNING (extract(epoch FROM finished_at) * 1000000)::bigint, owned
