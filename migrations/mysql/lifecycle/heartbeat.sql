-- heartbeat: extends the lease of a running execution, only while this worker owns the
-- row under this execution's token. ? job id, ? worker id, ? token. 1 affected row =
-- extended; 0 = ownership was lost (the rescuer took the row back).
UPDATE jobs_hot
SET heartbeat_at = NOW(6)
WHERE id = ? AND worker_id = ? AND status = 2 AND exec_token = ?
