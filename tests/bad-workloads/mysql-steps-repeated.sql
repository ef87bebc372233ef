-- step: lock
SELECT id FROM jobs_hot WHERE status = 0 LIMIT :batch FOR UPDATE SKIP LOCKED
-- step: claim
UPDATE jobs_hot SET status = 1, worker_id = :worker_id WHERE id IN (:ids)
-- step: lock
SELECT id FROM jobs_hot WHERE status = 0 LIMIT :batch FOR UPDATE SKIP LOCKED
