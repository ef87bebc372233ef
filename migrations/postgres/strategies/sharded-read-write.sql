-- sharded-read-write: a sharded poller that trusts its shard map: it reads its own
-- shards' jobs without a lock and updates them by id without a check, because "nobody
-- else owns this shard". True until ownership moves: while the old and the new owner both
-- hold the shard, both read the same jobs and both take them (duplicates, during the
-- move's overlap only).
-- A shard is a queue; the shard map is the table `shard_owners` (queue, worker id).
-- The same eligibility and fetch order as production; no per-queue cap.
-- The claim reads each of its shards apart (a LATERAL per shard_owners row, each its
-- shard's first $1 rows in fetch order), then keeps the first $1 of them all: with an
-- index that leads with the queue (layout queue-fetch-order) each shard is one index
-- range. A filter on the shard over the fetch-order index instead walks past every row
-- of other shards ahead of this one's: a worker whose shard drained faster than a hot
-- one reads the hot shard's backlog on every claim.
-- step: select
-- $1 batch limit, $2 worker id.
SELECT j.id
FROM shard_owners o
CROSS JOIN LATERAL (
    SELECT h.id, h.priority, COALESCE(h.scheduled_at, h.created_at) AS sort_at
    FROM jobs_hot h
    LEFT JOIN queues q ON q.name = h.queue
    WHERE h.queue = o.queue
      AND h.status = 0
      AND q.is_paused IS NOT TRUE
      AND q.is_active IS NOT FALSE
      AND (h.scheduled_at IS NULL OR h.scheduled_at <= now())
    ORDER BY h.priority DESC, COALESCE(h.scheduled_at, h.created_at) ASC, h.id ASC
    LIMIT $1
) j
WHERE o.worker_id = $2
ORDER BY j.priority DESC, j.sort_at ASC, j.id ASC
LIMIT $1
-- step: update
-- $1 the ids read above, $2 worker id. Unconditional: no status check.
UPDATE jobs_hot h
SET status = 1,
    worker_id = $2,
    last_updated_at = now()
WHERE h.id = ANY($1)
RETURNING h.id, h.queue, h.type, h.payload, h.tags, h.idempotency_key, h.priority,
          h.status, h.attempt_count, h.worker_id, h.heartbeat_at, h.scheduled_at,
          h.created_at, h.started_at, h.last_updated_at, h.created_by, h.last_modified_by,
          (extract(epoch FROM clock_timestamp() - COALESCE(h.scheduled_at, h.created_at))
           * 1000000)::bigint AS queue_wait_us
