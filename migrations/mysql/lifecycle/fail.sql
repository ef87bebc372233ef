-- fail: back to pending after a delay, or into the dead-letter table once the attempt
-- count reaches max attempts; only if this worker still owns the row.
-- step: retry
-- ? retry delay (microseconds), ? job id, ? worker id, ? max attempts.
-- 1 affected row = retried; 0 = last attempt (or not ours): go on to dead-letter.
UPDATE jobs_hot
SET status = 0, worker_id = NULL, attempt_count = attempt_count + 1,
    scheduled_at = NOW(6) + INTERVAL ? MICROSECOND, last_updated_at = NOW(6)
WHERE id = ? AND worker_id = ? AND attempt_count + 1 < ?
-- step: begin
START TRANSACTION
-- step: dead
-- ? job id, ? worker id, ? max attempts.
INSERT INTO jobs_dead_letter (id, queue, type, payload, tags, idempotency_key, priority,
                              attempt_count, worker_id, scheduled_at, created_at,
                              created_by, last_modified_by)
SELECT id, queue, type, payload, tags, idempotency_key, priority, attempt_count + 1,
       worker_id, scheduled_at, created_at, created_by, last_modified_by
FROM jobs_hot
WHERE id = ? AND worker_id = ? AND attempt_count + 1 >= ?
FOR UPDATE
-- step: delete
-- ? job id, ? worker id, ? max attempts. 1 affected row: COMMIT, dead-lettered;
-- 0: ROLLBACK, not ours.
DELETE FROM jobs_hot WHERE id = ? AND worker_id = ? AND attempt_count + 1 >= ?
