-- offset-start: production's skip-locked claim, but each claim starts at a random
-- offset among the first K eligible rows in fetch order and takes its batch from there,
-- wrapping to the head when the rows after the start run short. The usual advice for
-- pollers that all fight over the oldest rows: spread their starts. $1 batch limit,
-- $2 worker id, $3 K (`offset-start` is K = 16; `offset-start-64` is K = 64).
--
-- The start is chosen before the locking read, by an unlocked read (`start`): OFFSET
-- inside a locking read would lock every row it skips (the rows before the offset pass
-- the locking read's filter and are locked before OFFSET discards them), so the
-- documented shortcut, written that way, would lock K rows per claim and make every
-- other claim skip them. Here the locking reads (`after`, then `before` only if `after`
-- comes back short) filter by the start's fetch-order key, and PostgreSQL locks only the
-- rows a scan returns, not those its filter drops.
-- What it gives up is order: a claim takes rows up to K - 1 places behind the head while
-- older rows wait, so the oldest pending job ages more, and jobs are claimed out of
-- fetch order (the queue-wait and oldest-pending columns show the cost). No per-queue cap.
-- `picked` takes `after`'s rows first: PostgreSQL's Append runs its children in order
-- and stops pulling at the LIMIT, and a locking query never runs in parallel.
-- The behavioural suite holds this statement to model::offset_pick (src/model.rs): for
-- some start among the first K eligible rows, exactly that pick.
WITH start AS (
    SELECT h.priority, COALESCE(h.scheduled_at, h.created_at) AS sort_at, h.id
    FROM jobs_hot h
    LEFT JOIN queues q ON q.name = h.queue
    WHERE h.status = 0
      AND q.is_paused IS NOT TRUE
      AND q.is_active IS NOT FALSE
      AND (h.scheduled_at IS NULL OR h.scheduled_at <= now())
    ORDER BY h.priority DESC, COALESCE(h.scheduled_at, h.created_at) ASC, h.id ASC
    OFFSET floor(random() * $3::int)::int
    LIMIT 1
),
after AS (
    SELECT h.id
    FROM jobs_hot h
    LEFT JOIN queues q ON q.name = h.queue
    CROSS JOIN start s
    WHERE h.status = 0
      AND q.is_paused IS NOT TRUE
      AND q.is_active IS NOT FALSE
      AND (h.scheduled_at IS NULL OR h.scheduled_at <= now())
      AND (h.priority < s.priority
           OR (h.priority = s.priority
               AND (COALESCE(h.scheduled_at, h.created_at), h.id) >= (s.sort_at, s.id)))
    ORDER BY h.priority DESC, COALESCE(h.scheduled_at, h.created_at) ASC, h.id ASC
    LIMIT $1
    FOR UPDATE OF h SKIP LOCKED
),
before AS (
    SELECT h.id
    FROM jobs_hot h
    LEFT JOIN queues q ON q.name = h.queue
    WHERE h.status = 0
      AND q.is_paused IS NOT TRUE
      AND q.is_active IS NOT FALSE
      AND (h.scheduled_at IS NULL OR h.scheduled_at <= now())
      AND NOT EXISTS (
          SELECT 1 FROM start s
          WHERE h.priority < s.priority
             OR (h.priority = s.priority
                 AND (COALESCE(h.scheduled_at, h.created_at), h.id) >= (s.sort_at, s.id)))
    ORDER BY h.priority DESC, COALESCE(h.scheduled_at, h.created_at) ASC, h.id ASC
    LIMIT $1
    FOR UPDATE OF h SKIP LOCKED
),
picked AS (
    SELECT id FROM after
    UNION ALL
    SELECT id FROM before
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
