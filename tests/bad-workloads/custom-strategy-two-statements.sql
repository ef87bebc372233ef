-- Solid Queue's shape: claim from a ready table, record the claim elsewhere.
DELETE FROM jobs_ready WHERE id IN (SELECT id FROM jobs_ready LIMIT :batch FOR UPDATE SKIP LOCKED);

UPDATE jobs_hot SET status = 1, worker_id = :worker_id
WHERE status = 0 RETURNING id;
