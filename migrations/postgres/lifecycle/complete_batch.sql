-- complete_batch: move every finished row of a batch to the archive in one statement,
-- each only if this worker still owns it (handler.complete = "batched").
-- $1 job ids, $2 worker id. Returns the ids archived; an id missing from them had lost
-- its ownership (the rescuer took it back) and is not archived.
WITH moved AS (
    DELETE FROM jobs_hot
    WHERE id = ANY($1) AND worker_id = $2
    RETURNING *
)
INSERT INTO jobs_archive (id, queue, type, payload, tags, idempotency_key, priority,
                          attempt_count, worker_id, scheduled_at, created_at, started_at,
                          created_by, last_modified_by)
SELECT id, queue, type, payload, tags, idempotency_key, priority, attempt_count, worker_id,
       scheduled_at, created_at, started_at, created_by, last_modified_by
FROM moved
RETURNING id
