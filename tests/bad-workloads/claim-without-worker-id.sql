-- forgets to say who claimed the jobs
UPDATE jobs_hot SET status = 1
WHERE id IN (SELECT id FROM jobs_hot WHERE status = 0 LIMIT :batch FOR UPDATE SKIP LOCKED)
RETURNING id
