-- a claim that reads a parameter claimbench does not bind
UPDATE jobs_hot SET status = 1, worker_id = :worker_id
WHERE id IN (SELECT id FROM jobs_hot WHERE queue = :tenant LIMIT :batch FOR UPDATE SKIP LOCKED)
RETURNING id
