-- step: lokc
SELECT id FROM jobs_hot LIMIT :batch
-- step: claim
UPDATE jobs_hot SET status = 1, worker_id = :worker_id WHERE id IN (:ids)
