-- in-subquery: UPDATE ... WHERE id IN (SELECT ... LIMIT n FOR UPDATE SKIP LOCKED).
-- $1 batch limit, $2 worker id.
--
-- The claim most teams write by hand, and the one most blog posts show. It skips locked
-- rows like production but has no per-queue cap (max workers is not applied).
-- What it promises: no duplicates (the subquery locks each row before the UPDATE writes
-- it). What it does not promise: at most $1 rows. The LIMIT belongs to the subquery, and
-- SQL does not say how often a subquery runs. With the usual plan (a hash semi join or a
-- hashed subplan) it runs once. When the planner puts it on the inner side of a nested
-- loop, it runs again for each outer row; every rerun skips the rows this statement has
-- already updated (they are its own, no longer pending in its eyes) and locks the next
-- $1, so one claim takes many batches. claimbench counts such claims as over-claims, a
-- correctness failure (techniques.toml forces that plan with session settings).
-- A batch comes back short only when other claims hold the rows; empty only when every
-- eligible row is locked by a claim in flight or there is none.
-- The behavioural suite holds this statement to model::uncapped_pick (src/model.rs) on
-- generated states with other claims in flight, and at the edges of the cases above.
UPDATE jobs_hot h
SET status = 1,
    worker_id = $2,
    last_updated_at = now()
WHERE h.id IN (
    SELECT j.id
    FROM jobs_hot j
    LEFT JOIN queues q ON q.name = j.queue
    WHERE j.status = 0
      AND q.is_paused IS NOT TRUE
      AND q.is_active IS NOT FALSE
      AND (j.scheduled_at IS NULL OR j.scheduled_at <= now())
    ORDER BY j.priority DESC, COALESCE(j.scheduled_at, j.created_at) ASC, j.id ASC
    LIMIT $1
    FOR UPDATE OF j SKIP LOCKED
)
RETURNING h.id, h.queue, h.type, h.payload, h.tags, h.idempotency_key, h.priority,
          h.status, h.attempt_count, h.worker_id, h.heartbeat_at, h.scheduled_at,
          h.created_at, h.started_at, h.last_updated_at, h.created_by, h.last_modified_by,
          (extract(epoch FROM clock_timestamp() - COALESCE(h.scheduled_at, h.created_at))
           * 1000000)::bigint AS queue_wait_us
