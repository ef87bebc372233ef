-- start (the seed's MarkAsProcessing): only if this worker still owns the fetched row
-- (`p_gated`), or unconditionally (workload handler.start_gate = false, which shows what
-- the claim alone guarantees). A stored procedure, created with the schema, so that the
-- database's start time comes back in the same round trip (MySQL has no UPDATE ...
-- RETURNING). Returns `started_us`, the start time in µs since the epoch (UTC), or NULL
-- when the job is no longer ours.
-- step: create
CREATE PROCEDURE start_job(IN p_id BIGINT, IN p_worker VARCHAR(200), IN p_token BIGINT,
                           IN p_gated BOOLEAN)
BEGIN
    DECLARE t DATETIME(6) DEFAULT SYSDATE(6);
    UPDATE jobs_hot
    SET status = 2, worker_id = p_worker, started_at = t, heartbeat_at = t,
        last_updated_at = t, exec_token = p_token
    WHERE id = p_id AND (NOT p_gated OR (worker_id = p_worker AND status = 1));
    SELECT IF(ROW_COUNT() = 1, TIMESTAMPDIFF(MICROSECOND, '1970-01-01', t), NULL) AS started_us;
END
-- step: call
-- ? job id, ? worker id, ? this execution's token, ? gated (1) or not (0).
CALL start_job(?, ?, ?, ?)
