-- start without the ownership gate (workload handler.start_gate = false): shows what
-- the claim alone guarantees. ? worker id (recorded, not checked), ? job id.
UPDATE jobs_hot
SET status = 2, worker_id = ?, started_at = NOW(6), heartbeat_at = NOW(6),
    last_updated_at = NOW(6)
WHERE id = ?
