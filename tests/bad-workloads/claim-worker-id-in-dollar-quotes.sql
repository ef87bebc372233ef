UPDATE jobs_hot SET status = 1, worker_id = $w$:worker_id$w$
 WHERE id IN (SELECT id FROM jobs_hot LIMIT :batch FOR UPDATE SKIP LOCKED) RETURNING id
