-- Oban's claim (its Basic engine's fetch_jobs), on its own table (oban-table.sql): lock
-- the head of one queue's available jobs, skipping rows other claims hold, and mark
-- them executing by this worker, counting the attempt, in one statement.
UPDATE oban_jobs AS o
SET state = 'executing', attempted_at = timezone('UTC', now()),
    attempted_by = ARRAY[:worker_id::text, gen_random_uuid()::text],
    attempt = o.attempt + 1
FROM (
    SELECT id FROM oban_jobs
    WHERE state = 'available' AND queue = :queue
    ORDER BY priority, scheduled_at, id
    LIMIT :batch
    FOR UPDATE SKIP LOCKED
) AS s
WHERE o.id = s.id
RETURNING o.id, o.attempt AS attempt_count,
          (extract(epoch FROM timezone('UTC', clock_timestamp()) - o.scheduled_at)
           * 1000000)::bigint AS queue_wait_us
