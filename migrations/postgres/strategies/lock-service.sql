-- lock-service: read, take a lease per job from a lock service, then write. Teams that
-- distrust the database's own locks put a distributed lock beside a plain read and
-- update: the worker reads candidates unlocked, sets `<schema>:lock:<id>`
-- in Redis (SET NX PX, the lease) for each, and updates only the ids whose lock it won;
-- it gives a lock back (a compare-and-delete on its token) once the job has left it.
-- The lock is not the row: a lease that expires under a slow handler, a lock server
-- that restarts without its data, or a read that saw the row before another worker
-- finished with it lets two workers run one job, and the update below does not check.
-- The same eligibility filters and order as production; no per-queue capacity check.
-- step: select
-- $1 batch limit.
SELECT h.id
FROM jobs_hot h
LEFT JOIN queues q ON q.name = h.queue
WHERE h.status = 0
  AND q.is_paused IS NOT TRUE
  AND q.is_active IS NOT FALSE
  AND (h.scheduled_at IS NULL OR h.scheduled_at <= now())
ORDER BY h.priority DESC, COALESCE(h.scheduled_at, h.created_at) ASC, h.id ASC
LIMIT $1
-- step: update
-- $1 the ids whose lock this worker won, $2 worker id. Unconditional: the lock is the
-- only check.
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
