-- start (the seed's MarkAsProcessing): only if this worker still owns the fetched row.
-- $1 job id, $2 worker id. 1 row changed = start; 0 = the job is no longer ours.
UPDATE jobs_hot
SET status = 2, started_at = now(), heartbeat_at = now(), last_updated_at = now()
WHERE id = $1 AND worker_id = $2 AND status = 1
