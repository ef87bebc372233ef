-- complete: move the row to the archive, only if this worker still owns it. One
-- transaction; MySQL has no DELETE ... RETURNING to feed the INSERT (MariaDB has), so
-- the row is copied first and deleted second, and a delete of 0 rows (ownership lost
-- meanwhile) rolls the copy back.
-- step: begin
START TRANSACTION
-- step: archive
-- ? job id, ? worker id.
INSERT INTO jobs_archive (id, queue, type, payload, tags, idempotency_key, priority,
                          attempt_count, worker_id, scheduled_at, created_at, started_at,
                          created_by, last_modified_by)
SELECT id, queue, type, payload, tags, idempotency_key, priority, attempt_count, worker_id,
       scheduled_at, created_at, started_at, created_by, last_modified_by
FROM jobs_hot
WHERE id = ? AND worker_id = ?
FOR UPDATE
-- step: delete
-- ? job id, ? worker id. 1 affected row: COMMIT, completed; 0: ROLLBACK, not ours.
DELETE FROM jobs_hot WHERE id = ? AND worker_id = ?
