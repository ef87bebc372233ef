-- production: the seed's FetchNextBatch, ported to PostgreSQL. One statement, one round trip.
-- $1 batch limit, $2 worker id.
--
-- It claims exactly the rows the seed's statement claims (src/model.rs is the seed's
-- pick as a pure function; the behavioural suite checks this statement against it on
-- generated states), but gets there another way, because PostgreSQL refuses FOR UPDATE
-- in a query with window functions:
-- 1. The seed ranks every eligible row per queue with ROW_NUMBER() and keeps a row of
--    rank r when active + r <= max workers. So a capped queue contributes at most its
--    room (max workers - active) rows, its first ones in fetch order, and an uncapped
--    queue any number. The port takes those directly: `capped` computes each eligible
--    capped queue's room (at most the batch), `held` locks each such queue's first
--    `room` rows in fetch order (a LATERAL per capped queue), `free` locks the first
--    `batch` rows in fetch order of every queue without a limit (including queues with
--    no `queues` row), and `picked` keeps the first `batch` of both. Rows locked but not
--    picked are released when the statement commits: at most batch x (capped queues + 1)
--    rows are locked per claim, where the seed locks every eligible row it reads.
-- 2. Ties in (priority, due time), which the seed leaves to the server, are broken by
--    id: the fetch-order layouts end with id so the index gives the whole order.
-- 3. Locks: FOR UPDATE ... SKIP LOCKED is UPDLOCK + READPAST. A row another transaction
--    holds is skipped before it can be ranked, as READPAST drops it from `Candidates`.
--    Both wait on a conflicting table lock. READPAST also waits on page locks, and SQL
--    Server can escalate many row locks to a table lock; PostgreSQL takes neither for
--    rows, so the waits that escalation causes on SQL Server have no equivalent here.
-- 4. `active_counts` reads the statement's committed snapshot, like the seed's
--    committed-read CTE. It is not a semaphore: two claims running at the same moment
--    both see the same count, so concurrent claims can overshoot max workers (the seed
--    says so too); the ledger measures by how much, exactly.
-- 5. The seed's `(q.IsPaused IS NULL OR q.IsPaused = 0)` is written `q.is_paused IS NOT
--    TRUE` (and `IsActive` likewise as `IS NOT FALSE`): the same truth table, but
--    PostgreSQL estimates the OR over an outer-joined column at about one row and then
--    sorts every pending row instead of walking the fetch-order index. Measured at 200k
--    pending rows with the pending-partial layout: 200 ms per claim with the OR form,
--    under 1 ms with this one.
-- Cost: with the fetch-order index, `free` walks past the rows of capped queues that
-- come before its batch in fetch order, and each `held` LATERAL past the rows of other
-- queues before its room; a capped queue at its limit costs nothing in `held` (room 0)
-- but its rows ahead of the others' are read, not locked, by `free`. The batch never
-- comes back short or empty while an eligible row it may take is unlocked.
WITH active_counts AS (
    SELECT queue, count(*) AS current_active
    FROM jobs_hot
    WHERE status IN (1, 2)
    GROUP BY queue
),
capped AS (
    SELECT q.name,
           GREATEST(LEAST(q.max_workers - COALESCE(ac.current_active, 0), $1), 0) AS room
    FROM queues q
    LEFT JOIN active_counts ac ON ac.queue = q.name
    WHERE q.max_workers IS NOT NULL
      AND q.is_paused IS NOT TRUE
      AND q.is_active IS NOT FALSE
),
free AS (
    SELECT h.id, h.priority, COALESCE(h.scheduled_at, h.created_at) AS sort_at
    FROM jobs_hot h
    LEFT JOIN queues q ON q.name = h.queue
    WHERE h.status = 0
      AND q.is_paused IS NOT TRUE
      AND q.is_active IS NOT FALSE
      AND q.max_workers IS NULL
      AND (h.scheduled_at IS NULL OR h.scheduled_at <= now())
    ORDER BY h.priority DESC, COALESCE(h.scheduled_at, h.created_at) ASC, h.id ASC
    LIMIT $1
    FOR UPDATE OF h SKIP LOCKED
),
held AS (
    SELECT j.id, j.priority, j.sort_at
    FROM capped c
    CROSS JOIN LATERAL (
        SELECT h.id, h.priority, COALESCE(h.scheduled_at, h.created_at) AS sort_at
        FROM jobs_hot h
        WHERE h.queue = c.name
          AND h.status = 0
          AND (h.scheduled_at IS NULL OR h.scheduled_at <= now())
        ORDER BY h.priority DESC, COALESCE(h.scheduled_at, h.created_at) ASC, h.id ASC
        LIMIT c.room
        FOR UPDATE OF h SKIP LOCKED
    ) j
),
picked AS (
    SELECT id
    FROM (SELECT * FROM free UNION ALL SELECT * FROM held) candidates
    ORDER BY priority DESC, sort_at ASC, id ASC
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
