-- sharded: every worker claims only inside its own shards, with the conditional claim
-- kept anyway (the usual advice for sharded pollers): when a shard's ownership moves (a
-- deploy, a scale-out, a slow poller), the old and the new owner both believe they own
-- it for a while, and only the UPDATE's check stops them both taking a job.
-- A shard is a queue; the shard map is the table `shard_owners` (queue, worker id),
-- which claimbench writes before the trial and at each shard move.
-- The same eligibility and fetch order as production; no per-queue cap.
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
