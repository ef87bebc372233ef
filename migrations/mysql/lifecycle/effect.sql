-- The simulated handler's side effect, witnessed by the database: attempt, start time and
-- token come from the row this worker owns (same worker, processing, same token), not
-- from the worker. When the worker no longer owns it, the row is still written, with
-- owned = 0 and the worker's own attempt and start time. The owned row's queue is kept
-- too (NULL when not owned). A stored procedure (one round
-- trip) so the finish time and the ownership verdict come back with it.
-- Returns `finished_us` (µs since the epoch, UTC) and `owned`.
-- step: create
CREATE PROCEDURE record_effect(IN p_id BIGINT, IN p_attempt INT, IN p_worker VARCHAR(200),
                               IN p_outcome SMALLINT, IN p_started_us BIGINT,
                               IN p_token BIGINT)
BEGIN
    DECLARE t DATETIME(6) DEFAULT SYSDATE(6);
    DECLARE v_attempt INT DEFAULT NULL;
    DECLARE v_started DATETIME(6) DEFAULT NULL;
    DECLARE v_token BIGINT DEFAULT NULL;
    DECLARE v_queue VARCHAR(200) DEFAULT NULL;
    DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_token = NULL;
    SELECT attempt_count, started_at, exec_token, queue
      INTO v_attempt, v_started, v_token, v_queue
    FROM jobs_hot
    WHERE id = p_id AND worker_id = p_worker AND status = 2 AND exec_token = p_token;
    INSERT INTO effects (job_id, attempt, worker_id, outcome, started_at, finished_at,
                         owned, token, queue)
    VALUES (p_id, COALESCE(v_attempt, p_attempt), p_worker, p_outcome,
            COALESCE(v_started, TIMESTAMPADD(MICROSECOND, p_started_us, '1970-01-01')), t,
            v_token IS NOT NULL, v_token, v_queue);
    SELECT TIMESTAMPDIFF(MICROSECOND, '1970-01-01', t) AS finished_us,
           v_token IS NOT NULL AS owned;
END
-- step: call
-- ? job id, ? attempt (attempt_count at claim), ? worker id, ? outcome (0 ok, 1 failed),
-- ? start time the worker was given (µs since the epoch), ? token.
CALL record_effect(?, ?, ?, ?, ?, ?)
