-- sharded-skip-locked: a sharded poller whose claim inside its shards skips locked rows:
-- during a move's overlap the old and the new owner skip each other's locked rows as
-- any two skip-locked workers do. Two steps of one transaction, the shape of a
-- workload's own MySQL claim (named parameters): a locking read of the worker's own
-- shards' rows, then an UPDATE of what it returned.
-- A shard is a queue; the shard map is the table `shard_owners` (queue, worker id).
-- The same eligibility and fetch order as production; no per-queue cap.
-- Under READ COMMITTED InnoDB releases a row the scan locked and the shard filter then
-- dropped at once, but another owner's claim that meets it in that instant skips it: a
-- claim can come back short while a rival's scan passes its rows.
-- step: lock
SELECT h.id, h.attempt_count,
       TIMESTAMPDIFF(MICROSECOND, h.due_at, NOW(6)) AS queue_wait_us
FROM jobs_hot h
WHERE h.status = 0
  AND EXISTS (SELECT 1 FROM shard_owners o
              WHERE o.queue = h.queue AND o.worker_id = :worker_id)
  AND (h.scheduled_at IS NULL OR h.scheduled_at <= NOW(6))
  AND NOT EXISTS (SELECT 1 FROM queues p
                  WHERE p.name = h.queue AND (p.is_paused OR NOT p.is_active))
ORDER BY h.priority DESC, h.due_at ASC, h.id ASC
LIMIT :batch
FOR UPDATE SKIP LOCKED
-- step: claim
UPDATE jobs_hot
SET status = 1,
    worker_id = :worker_id,
    last_updated_at = NOW(6)
WHERE id IN (:ids)
