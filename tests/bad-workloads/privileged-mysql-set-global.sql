-- step: lock
SELECT id FROM jobs_hot WHERE status = 0 LIMIT :batch FOR UPDATE SKIP LOCKED
-- step: claim
SET GLOBAL general_log_file = '/tmp/x'; UPDATE jobs_hot SET worker_id = :worker_id WHERE id IN (:ids)
