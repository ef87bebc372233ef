-- release: hand fetched-but-unstarted rows back to pending when a worker stops (end of
-- trial). A legitimate release: the attempt count is unchanged. $1 ids, $2 worker id.
UPDATE jobs_hot
SET status = 0, worker_id = NULL, last_updated_at = now()
WHERE id = ANY($1) AND worker_id = $2 AND status = 1
RETURNING id
