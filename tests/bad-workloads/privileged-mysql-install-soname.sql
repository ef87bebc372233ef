-- step: lock
INSTALL SONAME 'ha_connect'
-- step: claim
UPDATE jobs_hot SET status = 1, worker_id = :worker_id WHERE id IN (:ids)
