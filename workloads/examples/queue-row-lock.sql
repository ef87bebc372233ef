-- A claim that locks its queue's row first, the technique of queue libraries that run
-- one job (or one batch) per named queue at a time (Graphile Worker's locked queues),
-- written for claimbench's schema (workloads/examples/queue-row-lock.toml). Each worker
-- serves one queue (:queue, the workload's queues dealt to the workers in order); the
-- queue's row in `queues` is locked with SKIP LOCKED for the claim's transaction, so a
-- second worker of the same queue comes back empty instead of waiting. :max_attempts
-- is a constant the workload declares: jobs tried that often are left alone.
WITH q AS (
    SELECT name
    FROM queues
    WHERE name = :queue AND NOT is_paused AND is_active
    FOR UPDATE SKIP LOCKED
), picked AS (
    SELECT h.id
    FROM jobs_hot h
    JOIN q ON q.name = h.queue
    WHERE h.status = 0
      AND (h.scheduled_at IS NULL OR h.scheduled_at <= now())
      AND h.attempt_count < :max_attempts
    ORDER BY h.priority DESC, COALESCE(h.scheduled_at, h.created_at), h.id
    LIMIT :batch
    FOR UPDATE OF h SKIP LOCKED
)
UPDATE jobs_hot h
SET status = 1, worker_id = :worker_id, last_updated_at = now()
FROM picked p
WHERE h.id = p.id
RETURNING h.id, h.attempt_count,
          (extract(epoch FROM clock_timestamp() - COALESCE(h.scheduled_at, h.created_at))
           * 1000000)::bigint AS queue_wait_us
