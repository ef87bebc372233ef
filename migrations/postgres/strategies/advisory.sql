-- advisory: claim by a session-level advisory lock on the job id, held while the job runs.
-- $1 batch limit, $2 worker id.
--
-- The technique of several Ruby queues (Que, GoodJob): a worker owns a job while its
-- connection holds pg_try_advisory_lock(id), and gives it up with pg_advisory_unlock
-- (claimbench's session unlocks after complete, fail or release, one more round trip
-- per job) or by losing its connection. No row lock is held between statements.
-- Written for this schema, which marks claimed rows: the claim reads a window of the
-- first pending rows in fetch order, try-locks them in that order until it holds $1,
-- and marks those fetched if they are still pending. Rows it locked but could not mark
-- (another worker claimed and finished them between this statement's snapshot and its
-- lock) are unlocked in the same statement, so no lock outlives its claim.
-- What it promises: no duplicates (the lock, and the status re-check). No per-queue cap.
-- A batch comes back short when claims in flight hold rows of the window, and empty when
-- they hold all of it: the window is 4 x $1 + 64 rows, so that takes more than that many
-- rows locked by other claims at once (16 workers claiming 100 each, say). Advisory
-- locks live in the shared lock table: workers x batch of them at a time, against
-- max_locks_per_transaction x max_connections.
-- The behavioural suite holds this statement to model::advisory_pick (src/model.rs) on
-- generated states with other claims in flight, and at the edges of the cases above.
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
    SELECT id FROM candidates WHERE pg_try_advisory_lock(id) LIMIT $1
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
),
-- The unlock gates the result as an InitPlan, which the executor runs before the first
-- row whether or not any row was claimed: as the other side of a join it never ran when
-- the claim marked nothing, and the session kept every lock of its window's rows.
unlocked AS (
    SELECT count(pg_advisory_unlock(l.id)) AS n
    FROM locked l
    WHERE NOT EXISTS (SELECT 1 FROM claimed c2 WHERE c2.id = l.id)
)
SELECT c.*
FROM claimed c
WHERE (SELECT n FROM unlocked) >= 0
