-- start (the seed's MarkAsProcessing): only if this worker still owns the fetched row.
-- ? job id, ? worker id. 1 affected row = start; 0 = the job is no longer ours.
UPDATE jobs_hot
SET status = 2, started_at = NOW(6), heartbeat_at = NOW(6), last_updated_at = NOW(6)
WHERE id = ? AND worker_id = ? AND status = 1
