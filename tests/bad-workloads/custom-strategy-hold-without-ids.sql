-- step: claim
UPDATE jobs_hot SET status = 1, worker_id = :worker_id
WHERE id IN (SELECT id FROM jobs_hot WHERE status = 0 LIMIT :batch FOR UPDATE SKIP LOCKED)
RETURNING id
-- step: hold
SELECT pg_advisory_xact_lock(1)
