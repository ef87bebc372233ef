UPDATE jobs_hot SET worker_id = :worker_id WHERE id IN (SELECT id FROM jobs_hot WHERE status = 0 AND queue <> :x LIMIT :batch FOR UPDATE SKIP LOCKED) RETURNING id
