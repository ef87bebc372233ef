-- waiting: the production claim with a lock that waits (FOR UPDATE without SKIP LOCKED).
-- $1 batch limit, $2 worker id, $3 candidate window (rows locked before ranking).
--
-- Identical to production.sql but for the lock clause: a worker that meets a row locked
-- by another claim waits for that transaction to end, then re-checks the row (it is no
-- longer pending, so it drops out and the batch comes back short). Workers queue behind
-- each other on the first rows in fetch order: the convoy the seed avoids with READPAST.
WITH active_counts AS (
    SELECT queue, count(*) AS current_active
    FROM jobs_hot
    WHERE status IN (1, 2)
    GROUP BY queue
),
locked AS (
    SELECT h.id, h.queue, h.priority,
           COALESCE(h.scheduled_at, h.created_at) AS sort_at
    FROM jobs_hot h
    LEFT JOIN queues q ON q.name = h.queue
    WHERE h.status = 0
      AND q.is_paused IS NOT TRUE
      AND q.is_active IS NOT FALSE
      AND (h.scheduled_at IS NULL OR h.scheduled_at <= now())
    ORDER BY h.priority DESC, COALESCE(h.scheduled_at, h.created_at) ASC
    LIMIT $3
    FOR UPDATE OF h
),
ranked AS (
    SELECT l.id, l.priority, l.sort_at, q.max_workers,
           COALESCE(ac.current_active, 0) AS current_active,
           row_number() OVER (PARTITION BY l.queue
                              ORDER BY l.priority DESC, l.sort_at ASC) AS queue_rank
    FROM locked l
    LEFT JOIN queues q ON q.name = l.queue
    LEFT JOIN active_counts ac ON ac.queue = l.queue
),
picked AS (
    SELECT id
    FROM ranked
    WHERE max_workers IS NULL
       OR current_active + queue_rank <= max_workers
    ORDER BY priority DESC, sort_at ASC
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
