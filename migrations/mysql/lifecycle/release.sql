-- release: hand fetched-but-unstarted rows back to pending when a worker stops (end of
-- trial). A legitimate release: the attempt count is unchanged. Runs once per worker per
-- trial, in one transaction: lock the rows still ours, then update exactly those.
-- `:ids` stands for one placeholder per id.
-- step: lock
-- the ids, then ? worker id.
SELECT id FROM jobs_hot
WHERE id IN (:ids) AND worker_id = ? AND status = 1
FOR UPDATE
-- step: update
-- the ids locked above.
UPDATE jobs_hot
SET status = 0, worker_id = NULL, last_updated_at = NOW(6)
WHERE id IN (:ids)
