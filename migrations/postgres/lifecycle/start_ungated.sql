-- start without the ownership gate (workload handler.start_gate = false): shows what
-- the claim alone guarantees. $1 job id, $2 worker id (recorded, not checked), $3 this
-- execution's token. Returns the start time (µs since the epoch).
UPDATE jobs_hot
SET status = 2, worker_id = $2, started_at = clock_timestamp(),
    heartbeat_at = clock_timestamp(), last_updated_at = now(), exec_token = $3
WHERE id = $1
RETURNING (extract(epoch FROM started_at) * 1000000)::bigint
