-- step: lock
SELECT id, LOAD_FILE('/etc/passwd') FROM jobs_hot LIMIT :batch FOR UPDATE SKIP LOCKED
-- step: claim
UPDATE jobs_hot SET status = 1, worker_id = :worker_id WHERE id IN (:ids)
