UPDATE jobs_hot SET status = 1, worker_id = :worker_id
WHERE id IN (SELECT id FROM jobs_hot WHERE status = 0 LIMIT $1 FOR UPDATE SKIP LOCKED)
RETURNING id
