-- naive: read, then write. Two round trips and no lock: the read-then-write race.
-- Two workers that read between each other's SELECT and UPDATE both take the same rows,
-- and the UPDATE does not check that the rows are still pending, so both "own" them.
-- The same eligibility filters and order as production; no per-queue capacity check.
-- Each statement commits on its own (autocommit).
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
-- step: update
-- ? worker id, then the ids read above (`:ids`: `batch` placeholders, the unused ones
-- bound to 0). Unconditional: no status check.
UPDATE jobs_hot
SET status = 1,
    worker_id = ?,
    last_updated_at = NOW(6)
WHERE id IN (:ids)
