-- start without the ownership gate (workload handler.start_gate = false): shows what
-- the claim alone guarantees. $1 job id, $2 worker id (recorded, not checked).
UPDATE jobs_hot
SET status = 2, worker_id = $2, started_at = now(), heartbeat_at = now(), last_updated_at = now()
WHERE id = $1
