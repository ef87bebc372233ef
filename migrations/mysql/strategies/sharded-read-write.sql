-- sharded-read-write: a sharded poller that trusts its shard map: it reads its own
-- shards' jobs without a lock and updates them by id without a check, because "nobody
-- else owns this shard". True until ownership moves: while the old and the new owner both
-- hold the shard, both read the same jobs and both take them (duplicates, during the
-- move's overlap only).
-- A shard is a queue; the shard map is the table `shard_owners` (queue, worker id).
-- The same eligibility and fetch order as production; no per-queue cap.
-- Each statement commits on its own (autocommit).
-- step: select
-- ? worker id, ? batch limit. Returns the seed's OUTPUT columns and the queue wait, as
-- read.
SELECT h.id, h.queue, h.type, h.payload, h.tags, h.idempotency_key, h.priority,
       h.status, h.attempt_count, h.worker_id, h.heartbeat_at, h.scheduled_at,
       h.created_at, h.started_at, h.last_updated_at, h.created_by, h.last_modified_by,
       TIMESTAMPDIFF(MICROSECOND, h.due_at, NOW(6)) AS queue_wait_us
FROM jobs_hot h
WHERE h.status = 0
  AND EXISTS (SELECT 1 FROM shard_owners o WHERE o.queue = h.queue AND o.worker_id = ?)
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
