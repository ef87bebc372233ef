-- sharded: every worker claims only inside its own shards, with the conditional claim
-- kept anyway (the usual advice for sharded pollers): when a shard's ownership moves (a
-- deploy, a scale-out, a slow poller), the old and the new owner both believe they own
-- it for a while, and only the UPDATE's check stops them both taking a job.
-- A shard is a queue; the shard map is the table `shard_owners` (queue, worker id),
-- which claimbench writes before the trial and at each shard move.
-- The same eligibility and fetch order as production; no per-queue cap.
-- The claim reads each of its shards apart (a LATERAL per shard_owners row, each its
-- shard's first $1 rows in fetch order), then keeps the first $1 of them all: with an
-- index that leads with the queue (layout queue-fetch-order) each shard is one index
-- range. A filter on the shard over the fetch-order index instead walks past every row
-- of other shards ahead of this one's: a worker whose shard drained faster than a hot
-- one reads the hot shard's backlog on every claim.
-- step: select
-- $1 batch limit, $2 worker id. Returns each candidate's id and attempt count.
SELECT j.id, j.attempt_count
FROM shard_owners o
CROSS JOIN LATERAL (
    SELECT h.id, h.attempt_count, h.priority, COALESCE(h.scheduled_at, h.created_at) AS sort_at
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
-- step: claim-one
-- $1 one candidate id, $2 worker id, $3 its attempt count as read. Sent once per
-- candidate; a returned row = claimed, none = lost the race.
UPDATE jobs_hot h
SET status = 1,
    worker_id = $2,
    last_updated_at = now()
WHERE h.id = $1
  AND h.status = 0
  AND h.attempt_count = $3
RETURNING h.id, h.queue, h.type, h.payload, h.tags, h.idempotency_key, h.priority,
          h.status, h.attempt_count, h.worker_id, h.heartbeat_at, h.scheduled_at,
          h.created_at, h.started_at, h.last_updated_at, h.created_by, h.last_modified_by,
          (extract(epoch FROM clock_timestamp() - COALESCE(h.scheduled_at, h.created_at))
           * 1000000)::bigint AS queue_wait_us
