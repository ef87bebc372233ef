-- fail: back to pending after a delay, or into the dead-letter table once the attempt
-- count reaches max attempts; only if this worker still owns the row.
-- $1 job id, $2 worker id, $3 retry delay (seconds), $4 max attempts.
-- Returns (retried, dead_lettered), each 0 or 1.
WITH retried AS (
    UPDATE jobs_hot
    SET status = 0, worker_id = NULL, attempt_count = attempt_count + 1,
        scheduled_at = now() + make_interval(secs => $3::float8), last_updated_at = now()
    WHERE id = $1 AND worker_id = $2 AND attempt_count + 1 < $4::int
    RETURNING id
),
gone AS (
    DELETE FROM jobs_hot
    WHERE id = $1 AND worker_id = $2 AND attempt_count + 1 >= $4::int
    RETURNING *
),
dead AS (
    INSERT INTO jobs_dead_letter (id, queue, type, payload, tags, idempotency_key, priority,
                                  attempt_count, worker_id, scheduled_at, created_at,
                                  created_by, last_modified_by)
    SELECT id, queue, type, payload, tags, idempotency_key, priority, attempt_count + 1,
           worker_id, scheduled_at, created_at, created_by, last_modified_by
    FROM gone
    RETURNING id
)
SELECT (SELECT count(*) FROM retried) AS retried, (SELECT count(*) FROM dead) AS dead
