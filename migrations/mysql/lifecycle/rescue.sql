-- rescue: return fetched rows whose claim expired and processing rows whose heartbeat
-- expired. A legitimate release: the attempt count goes up, so a later run is a new
-- attempt, not a duplicate. One transaction: lock the expired rows (skipping any a
-- worker is changing right now), then update exactly those.
-- step: lock
-- ? lease (microseconds), ? lease again.
SELECT id FROM jobs_hot
WHERE (status = 1 AND last_updated_at < NOW(6) - INTERVAL ? MICROSECOND)
   OR (status = 2 AND heartbeat_at < NOW(6) - INTERVAL ? MICROSECOND)
FOR UPDATE SKIP LOCKED
-- step: update
-- the ids locked above.
UPDATE jobs_hot
SET status = 0, worker_id = NULL, attempt_count = attempt_count + 1, last_updated_at = NOW(6)
WHERE id IN (:ids)
