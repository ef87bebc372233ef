-- fail: back to pending after a delay, or into the dead-letter table once the attempt
-- count reaches max attempts; only if this worker still owns the row. One round trip:
-- a stored procedure, created with the schema, for the same reason as complete_job.
-- Returns (retried, dead_lettered), each 0 or 1.
-- step: create
CREATE PROCEDURE fail_job(IN p_id BIGINT, IN p_worker VARCHAR(200), IN p_delay_us BIGINT,
                          IN p_max_attempts INT)
BEGIN
    DECLARE retried INT DEFAULT 0;
    DECLARE dead INT DEFAULT 0;
    UPDATE jobs_hot
    SET status = 0, worker_id = NULL, attempt_count = attempt_count + 1,
        scheduled_at = NOW(6) + INTERVAL p_delay_us MICROSECOND, last_updated_at = NOW(6)
    WHERE id = p_id AND worker_id = p_worker AND attempt_count + 1 < p_max_attempts;
    SET retried = ROW_COUNT();
    IF retried = 0 THEN
        START TRANSACTION;
        INSERT INTO jobs_dead_letter (id, queue, type, payload, tags, idempotency_key,
                                      priority, attempt_count, worker_id, scheduled_at,
                                      created_at, created_by, last_modified_by)
        SELECT id, queue, type, payload, tags, idempotency_key, priority, attempt_count + 1,
               worker_id, scheduled_at, created_at, created_by, last_modified_by
        FROM jobs_hot
        WHERE id = p_id AND worker_id = p_worker AND attempt_count + 1 >= p_max_attempts
        FOR UPDATE;
        SET dead = ROW_COUNT();
        IF dead = 1 THEN
            DELETE FROM jobs_hot
            WHERE id = p_id AND worker_id = p_worker AND attempt_count + 1 >= p_max_attempts;
            SET dead = ROW_COUNT();
        END IF;
        IF dead = 1 THEN
            COMMIT;
        ELSE
            ROLLBACK;
        END IF;
    END IF;
    SELECT retried, dead;
END
-- step: call
-- ? job id, ? worker id, ? retry delay (microseconds), ? max attempts.
CALL fail_job(?, ?, ?, ?)
