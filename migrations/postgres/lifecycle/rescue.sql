-- rescue: return fetched rows whose claim expired and processing rows whose heartbeat
-- expired. A legitimate release: the attempt count goes up, so a later run is a new
-- attempt, not a duplicate. $1 lease (seconds).
UPDATE jobs_hot
SET status = 0, worker_id = NULL, attempt_count = attempt_count + 1, last_updated_at = now()
WHERE (status = 1 AND last_updated_at < now() - make_interval(secs => $1::float8))
   OR (status = 2 AND heartbeat_at < now() - make_interval(secs => $1::float8))
RETURNING id
