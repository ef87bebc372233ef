-- Oban's claim with a lock that waits (FOR UPDATE without SKIP LOCKED): every worker of
-- a queue asks for the same head rows, and all but one wait for its transaction to end,
-- then find those rows taken and read on. No duplicates; the wait lasts as long as
-- whatever holds the head rows' claim open (prove's step holds it for a second).
UPDATE oban_jobs AS o
SET state = 'executing', attempted_at = timezone('UTC', now()),
    attempted_by = ARRAY[:worker_id::text, gen_random_uuid()::text],
    attempt = o.attempt + 1
FROM (
    SELECT id FROM oban_jobs
    WHERE state = 'available' AND queue = :queue
    ORDER BY priority, scheduled_at, id
    LIMIT :batch
    FOR UPDATE
) AS s
WHERE o.id = s.id
RETURNING o.id, o.attempt AS attempt_count,
          (extract(epoch FROM timezone('UTC', clock_timestamp()) - o.scheduled_at)
           * 1000000)::bigint AS queue_wait_us
