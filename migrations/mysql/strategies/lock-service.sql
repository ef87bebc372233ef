-- lock-service: read, take a lease per job from a lock service, then write. naive's
-- read and update (the session sends naive's statements; a test holds the two files to
-- the same SQL) with a lease per candidate in Redis between them (SET NX PX): the
-- update names only the ids whose lease this worker won, and does not check the rows.
-- A lease that expires under a slow handler, a lock server that forgets, or a read that
-- saw the row before another worker finished with it lets two workers run one job.
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
