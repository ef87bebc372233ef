-- The delete storage model (storage = "delete") on MySQL and MariaDB: a finished job's
-- row is deleted from jobs_hot and kept nowhere. Its complete_job replaces
-- lifecycle/complete.sql's under the same name and answers as it does, so the session's
-- CALL is the same; fail_job (a dead job still moves to jobs_dead_letter) is shared.
-- What counts the completions after the trial is the effects table: a job with a
-- successful run whose row is in neither jobs_hot nor jobs_dead_letter (evidence/).
-- step: create
CREATE PROCEDURE complete_job(IN p_id BIGINT, IN p_worker VARCHAR(200))
BEGIN
    DELETE FROM jobs_hot WHERE id = p_id AND worker_id = p_worker;
    SELECT ROW_COUNT() AS completed;
END
