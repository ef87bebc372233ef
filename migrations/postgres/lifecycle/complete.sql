-- complete: move the row to the archive, only if this worker still owns it.
-- $1 job id, $2 worker id. 1 row = completed; 0 = ownership was lost.
WITH moved AS (
    DELETE FROM jobs_hot
    WHERE id = $1 AND worker_id = $2
    RETURNING *
)
INSERT INTO jobs_archive (id, queue, type, payload, tags, idempotency_key, priority,
                          attempt_count, worker_id, scheduled_at, created_at, started_at,
                          created_by, last_modified_by)
SELECT id, queue, type, payload, tags, idempotency_key, priority, attempt_count, worker_id,
       scheduled_at, created_at, started_at, created_by, last_modified_by
FROM moved
