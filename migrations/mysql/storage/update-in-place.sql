-- The update-in-place storage model (storage = "update-in-place") on MySQL and MariaDB: a
-- finished job's row stays in jobs_hot with a final status (3 finished, 4 dead) instead
-- of moving to jobs_archive or jobs_dead_letter. The procedures replace those of
-- lifecycle/complete.sql and lifecycle/fail.sql under the same names and answer as they
-- do, so the session's CALLs are unchanged; every other statement reads live statuses
-- only (0, 1, 2) and is shared.

-- step: complete
-- Only if this worker still owns the row. Returns `completed` (1 or 0).
CREATE PROCEDURE complete_job(IN p_id BIGINT, IN p_worker VARCHAR(200))
BEGIN
    UPDATE jobs_hot
    SET status = 3, last_updated_at = NOW(6)
    WHERE id = p_id AND worker_id = p_worker;
    SELECT ROW_COUNT() AS completed;
END

-- step: fail
-- Back to pending after a delay, or dead (status 4, in place) once the attempt count
-- reaches max attempts; only if this worker still owns the row.
-- Returns (retried, dead_lettered), each 0 or 1.
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
        UPDATE jobs_hot
        SET status = 4, attempt_count = attempt_count + 1, last_updated_at = NOW(6)
        WHERE id = p_id AND worker_id = p_worker AND attempt_count + 1 >= p_max_attempts;
        SET dead = ROW_COUNT();
    END IF;
    SELECT retried, dead;
END
