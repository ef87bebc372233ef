-- start (the seed's MarkAsProcessing): only if this worker still owns the fetched row.
-- $1 job id, $2 worker id, $3 this execution's token. Returns the start time (µs since
-- the epoch, the database's clock) when it started; no row = the job is no longer ours.
UPDATE jobs_hot
SET status = 2, started_at = clock_timestamp(), heartbeat_at = clock_timestamp(),
    last_updated_at = now(), exec_token = $3
WHERE id = $1 AND worker_id = $2 AND status = 1
RETURNING (extract(epoch FROM started_at) * 1000000)::bigint
