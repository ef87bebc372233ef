-- Oban's claim on MySQL (its Dolphin engine's fetch_jobs), on its own table
-- (oban-table.mysql.sql): lock the head of one queue's available jobs, skipping rows
-- other claims hold, then mark them executing by this worker, counting the attempt, in
-- the same transaction (MySQL has no UPDATE … RETURNING).
-- step: lock
SELECT id, attempt + 1 AS attempt_count,
       TIMESTAMPDIFF(MICROSECOND, scheduled_at, NOW(6)) AS queue_wait_us
FROM oban_jobs
WHERE state = 'available' AND queue = :queue
ORDER BY priority, scheduled_at, id
LIMIT :batch
FOR UPDATE SKIP LOCKED
-- step: claim
UPDATE oban_jobs
SET state = 'executing', attempted_at = NOW(6),
    attempted_by = JSON_ARRAY(:worker_id, UUID()),
    attempt = attempt + 1
WHERE id IN (:ids)
