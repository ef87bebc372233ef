-- sharded-skip-locked: a sharded poller whose claim inside its shards is production's
-- skip-locked claim (without the per-queue cap): during a move's overlap the old and the
-- new owner skip each other's locked rows as any two skip-locked workers do.
-- A shard is a queue; the shard map is the table `shard_owners` (queue, worker id).
-- $1 batch limit, $2 worker id.
WITH picked AS (
    SELECT h.id
    FROM jobs_hot h
    LEFT JOIN queues q ON q.name = h.queue
    WHERE h.status = 0
      AND EXISTS (SELECT 1 FROM shard_owners o WHERE o.queue = h.queue AND o.worker_id = $2)
      AND q.is_paused IS NOT TRUE
      AND q.is_active IS NOT FALSE
      AND (h.scheduled_at IS NULL OR h.scheduled_at <= now())
    ORDER BY h.priority DESC, COALESCE(h.scheduled_at, h.created_at) ASC, h.id ASC
    LIMIT $1
    FOR UPDATE OF h SKIP LOCKED
)
UPDATE jobs_hot h
SET status = 1,
    worker_id = $2,
    last_updated_at = now()
FROM picked p
WHERE h.id = p.id
RETURNING h.id, h.queue, h.type, h.payload, h.tags, h.idempotency_key, h.priority,
          h.status, h.attempt_count, h.worker_id, h.heartbeat_at, h.scheduled_at,
          h.created_at, h.started_at, h.last_updated_at, h.created_by, h.last_modified_by,
          (extract(epoch FROM clock_timestamp() - COALESCE(h.scheduled_at, h.created_at))
           * 1000000)::bigint AS queue_wait_us
