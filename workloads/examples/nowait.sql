-- A claim that locks with NOWAIT instead of SKIP LOCKED: it neither waits for a row
-- another worker holds nor skips it, it fails at once (SQLSTATE 55P03), and the worker
-- backs off and claims again. Written for claimbench's schema
-- (workloads/examples/nowait.toml). Under contention most claims collide with one in
-- flight; claimbench counts them as retries.
UPDATE jobs_hot h
SET status = 1,
    worker_id = :worker_id,
    last_updated_at = now()
WHERE h.id IN (
    SELECT j.id
    FROM jobs_hot j
    WHERE j.status = 0
      AND (j.scheduled_at IS NULL OR j.scheduled_at <= now())
    ORDER BY j.priority DESC, COALESCE(j.scheduled_at, j.created_at), j.id
    LIMIT :batch
    FOR UPDATE NOWAIT
)
RETURNING h.id, h.attempt_count,
          (extract(epoch FROM clock_timestamp() - COALESCE(h.scheduled_at, h.created_at))
           * 1000000)::bigint AS queue_wait_us
