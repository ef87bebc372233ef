-- The update-in-place storage model (storage = "update-in-place"): a finished job's row
-- stays in jobs_hot with a final status (3 finished, 4 dead) instead of moving to
-- jobs_archive or jobs_dead_letter. The steps replace lifecycle/complete.sql,
-- lifecycle/complete_batch.sql and lifecycle/fail.sql and answer as they do; every other
-- statement (the claims, start, heartbeat, effect, release, rescue, the sampler) reads
-- only live statuses (0, 1, 2) and is the same under both models.

-- step: complete
-- Only if this worker still owns the row. $1 job id, $2 worker id. 1 row changed =
-- completed; 0 = ownership was lost.
UPDATE jobs_hot
SET status = 3, last_updated_at = now()
WHERE id = $1 AND worker_id = $2

-- step: complete-batch
-- Every finished row of a batch this worker still owns (handler.complete = "batched").
-- $1 job ids, $2 worker id. Returns the ids completed.
UPDATE jobs_hot
SET status = 3, last_updated_at = now()
WHERE id = ANY($1) AND worker_id = $2
RETURNING id

-- step: fail
-- Back to pending after a delay, or dead (status 4, in place) once the attempt count
-- reaches max attempts; only if this worker still owns the row.
-- $1 job id, $2 worker id, $3 retry delay (seconds), $4 max attempts.
-- Returns (retried, dead_lettered), each 0 or 1.
WITH retried AS (
    UPDATE jobs_hot
    SET status = 0, worker_id = NULL, attempt_count = attempt_count + 1,
        scheduled_at = now() + make_interval(secs => $3::float8), last_updated_at = now()
    WHERE id = $1 AND worker_id = $2 AND attempt_count + 1 < $4::int
    RETURNING id
),
dead AS (
    UPDATE jobs_hot
    SET status = 4, attempt_count = attempt_count + 1, last_updated_at = now()
    WHERE id = $1 AND worker_id = $2 AND attempt_count + 1 >= $4::int
    RETURNING id
)
SELECT (SELECT count(*) FROM retried) AS retried, (SELECT count(*) FROM dead) AS dead
