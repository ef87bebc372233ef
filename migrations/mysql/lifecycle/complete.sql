-- complete: move the row to the archive, only if this worker still owns it, in one round
-- trip. MySQL has no DELETE ... RETURNING to feed the INSERT (MariaDB has) and no
-- conditional COMMIT in a plain statement, so the move is a stored procedure, created
-- with the schema: copy the row (locking it), delete it, COMMIT when both touched one
-- row, ROLLBACK when ownership was lost meanwhile. Returns `completed` (1 or 0).
-- step: create
CREATE PROCEDURE complete_job(IN p_id BIGINT, IN p_worker VARCHAR(200))
BEGIN
    DECLARE n INT DEFAULT 0;
    START TRANSACTION;
    INSERT INTO jobs_archive (id, queue, type, payload, tags, idempotency_key, priority,
                              attempt_count, worker_id, scheduled_at, created_at,
                              started_at, created_by, last_modified_by)
    SELECT id, queue, type, payload, tags, idempotency_key, priority, attempt_count,
           worker_id, scheduled_at, created_at, started_at, created_by, last_modified_by
    FROM jobs_hot
    WHERE id = p_id AND worker_id = p_worker
    FOR UPDATE;
    SET n = ROW_COUNT();
    IF n = 1 THEN
        DELETE FROM jobs_hot WHERE id = p_id AND worker_id = p_worker;
        SET n = ROW_COUNT();
    END IF;
    IF n = 1 THEN
        COMMIT;
    ELSE
        ROLLBACK;
    END IF;
    SELECT n AS completed;
END
-- step: call
-- ? job id, ? worker id.
CALL complete_job(?, ?)
