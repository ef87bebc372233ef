-- The claim in the shape many PostgreSQL queue libraries use (River, pg-boss, Oban's
-- Basic engine): pick the first due pending rows in a CTE with FOR UPDATE SKIP LOCKED,
-- then mark them in the UPDATE that returns them. Written for claimbench's schema
-- (workloads/examples/cte-skip-locked.toml); no per-queue cap, no paused queues.
WITH picked AS (
    SELECT j.id
    FROM jobs_hot j
    WHERE j.status = 0
      AND (j.scheduled_at IS NULL OR j.scheduled_at <= now())
      AND j.queue NOT IN (SELECT q.name FROM queues q WHERE q.is_paused OR NOT q.is_active)
    ORDER BY j.priority DESC, COALESCE(j.scheduled_at, j.created_at), j.id
    LIMIT :batch
    FOR UPDATE SKIP LOCKED
)
UPDATE jobs_hot h
SET status = 1,
    worker_id = :worker_id,
    last_updated_at = now()
FROM picked
WHERE h.id = picked.id
RETURNING h.id, h.attempt_count,
          (extract(epoch FROM clock_timestamp() - COALESCE(h.scheduled_at, h.created_at))
           * 1000000)::bigint AS queue_wait_us
