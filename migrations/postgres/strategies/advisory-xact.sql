-- advisory-xact: advisory's claim with transaction-scoped locks. $1 batch limit, $2
-- worker id.
--
-- The same window and try-lock as `advisory` (advisory.sql), but each lock is
-- pg_try_advisory_xact_lock, which the server gives up when the claim's transaction
-- ends: the lock only keeps concurrent claims off a row while they decide, and the row's
-- own status and worker_id say who owns the job from then on. Nothing is held between
-- transactions, so nothing is unlocked afterwards and nothing stays on a server
-- connection: the form of the technique that survives a transaction-mode pooler, where a
-- session-level lock and its unlock may land on different server connections.
-- What it promises: no duplicates (the lock while claiming, then the status re-check in
-- the UPDATE). No per-queue cap. Short batches as advisory's (the same window).
-- The behavioural suite holds this statement to model::advisory_pick (src/model.rs).
WITH candidates AS MATERIALIZED (
    SELECT j.id
    FROM jobs_hot j
    LEFT JOIN queues q ON q.name = j.queue
    WHERE j.status = 0
      AND q.is_paused IS NOT TRUE
      AND q.is_active IS NOT FALSE
      AND (j.scheduled_at IS NULL OR j.scheduled_at <= now())
    ORDER BY j.priority DESC, COALESCE(j.scheduled_at, j.created_at) ASC, j.id ASC
    LIMIT $1 * 4 + 64
),
locked AS MATERIALIZED (
    SELECT id FROM candidates WHERE pg_try_advisory_xact_lock(id) LIMIT $1
),
claimed AS (
    UPDATE jobs_hot h
    SET status = 1,
        worker_id = $2,
        last_updated_at = now()
    FROM locked l
    WHERE h.id = l.id
      AND h.status = 0
    RETURNING h.id, h.queue, h.type, h.payload, h.tags, h.idempotency_key, h.priority,
              h.status, h.attempt_count, h.worker_id, h.heartbeat_at, h.scheduled_at,
              h.created_at, h.started_at, h.last_updated_at, h.created_by, h.last_modified_by,
              (extract(epoch FROM clock_timestamp() - COALESCE(h.scheduled_at, h.created_at))
               * 1000000)::bigint AS queue_wait_us
)
SELECT * FROM claimed
