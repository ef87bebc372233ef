-- sharded-skip-locked: a sharded poller whose claim inside its shards is production's
-- skip-locked claim (without the per-queue cap): during a move's overlap the old and the
-- new owner skip each other's locked rows as any two skip-locked workers do.
-- A shard is a queue; the shard map is the table `shard_owners` (queue, worker id).
-- The claim reads each of its shards apart (a LATERAL per shard_owners row, each its
-- shard's first $1 rows in fetch order), then keeps the first $1 of them all: with an
-- index that leads with the queue (layout queue-fetch-order) each shard is one index
-- range. A filter on the shard over the fetch-order index instead walks past every row
-- of other shards ahead of this one's: a worker whose shard drained faster than a hot
-- one reads the hot shard's backlog on every claim.
-- Rows a shard's LATERAL locked but the batch left out are released when the statement
-- commits.
-- $1 batch limit, $2 worker id.
WITH picked AS (
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
        FOR UPDATE OF h SKIP LOCKED
    ) j
    WHERE o.worker_id = $2
    ORDER BY j.priority DESC, j.sort_at ASC, j.id ASC
    LIMIT $1
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
