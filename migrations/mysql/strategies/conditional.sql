-- conditional: read candidates without locks, then claim each with a conditional UPDATE
-- that puts the expected state in its WHERE clause. An affected-row count of 0 is a lost
-- race (another worker changed the row first); the worker skips that id. Safe, but one
-- round trip per candidate, and workers that read the same candidates collide.
-- The expected state includes the attempt count read, so a job that was claimed,
-- failed and put back meanwhile is not claimed under its old attempt.
-- step: select
-- ? batch limit. Returns the seed's OUTPUT columns and the queue wait, as read.
SELECT h.id, h.queue, h.type, h.payload, h.tags, h.idempotency_key, h.priority,
       h.status, h.attempt_count, h.worker_id, h.heartbeat_at, h.scheduled_at,
       h.created_at, h.started_at, h.last_updated_at, h.created_by, h.last_modified_by,
       TIMESTAMPDIFF(MICROSECOND, h.due_at, NOW(6)) AS queue_wait_us
FROM jobs_hot h
WHERE h.status = 0
  AND (h.scheduled_at IS NULL OR h.scheduled_at <= NOW(6))
  AND NOT EXISTS (SELECT 1 FROM queues p
                  WHERE p.name = h.queue AND (p.is_paused OR NOT p.is_active))
ORDER BY h.priority DESC, h.due_at ASC, h.id ASC
LIMIT ?
-- step: claim-one
-- ? worker id, ? one candidate id, ? its attempt count as read. Sent once per
-- candidate; 1 affected row = claimed, 0 = lost the race.
UPDATE jobs_hot
SET status = 1,
    worker_id = ?,
    last_updated_at = NOW(6)
WHERE id = ?
  AND status = 0
  AND attempt_count = ?
