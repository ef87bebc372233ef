-- oban-claim.mysql.sql with a lock that waits (FOR UPDATE without SKIP LOCKED): every
-- worker of a queue asks for the same head rows, and all but one wait for its
-- transaction to end. No duplicates; the wait lasts as long as the head rows' claim.
-- step: lock
SELECT id, attempt + 1 AS attempt_count,
       TIMESTAMPDIFF(MICROSECOND, scheduled_at, NOW(6)) AS queue_wait_us
FROM oban_jobs
WHERE state = 'available' AND queue = :queue
ORDER BY priority, scheduled_at, id
LIMIT :batch
FOR UPDATE
-- step: claim
UPDATE oban_jobs
SET state = 'executing', attempted_at = NOW(6),
    attempted_by = JSON_ARRAY(:worker_id, UUID()),
    attempt = attempt + 1
WHERE id IN (:ids)
