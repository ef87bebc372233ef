-- heartbeat: extends the lease of a running execution, only while this worker owns the
-- row under this execution's token. $1 job id, $2 worker id, $3 token. 1 row = extended;
-- 0 = ownership was lost (the rescuer took the row back).
UPDATE jobs_hot
SET heartbeat_at = clock_timestamp()
WHERE id = $1 AND worker_id = $2 AND status = 2 AND exec_token = $3
