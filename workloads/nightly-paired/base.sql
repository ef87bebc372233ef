-- The nightly pair's A: the claim at the last release. examples/nightly.yml overwrites
-- this file with `git show <release>:workloads/nightly-paired/candidate.sql`; as shipped
-- it is the same statement as candidate.sql (an A/A run).
WITH active_counts AS (
    SELECT queue, count(*) AS current_active
    FROM jobs_hot
    WHERE status IN (1, 2)
    GROUP BY queue
),
capped AS (
    SELECT q.name,
           GREATEST(LEAST(q.max_workers - COALESCE(ac.current_active, 0), :batch), 0) AS room
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
    LIMIT :batch
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
    LIMIT :batch
)
UPDATE jobs_hot h
SET status = 1,
    worker_id = :worker_id,
    last_updated_at = now()
FROM picked p
WHERE h.id = p.id
RETURNING h.id, h.queue, h.type, h.payload, h.tags, h.idempotency_key, h.priority,
          h.status, h.attempt_count, h.worker_id, h.heartbeat_at, h.scheduled_at,
          h.created_at, h.started_at, h.last_updated_at, h.created_by, h.last_modified_by,
          (extract(epoch FROM clock_timestamp() - COALESCE(h.scheduled_at, h.created_at))
           * 1000000)::bigint AS queue_wait_us
