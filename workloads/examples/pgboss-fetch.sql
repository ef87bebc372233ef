-- pg-boss's fetch (version 9's fetchNextJob), on its own table (pgboss-table.sql): lock
-- the head of one queue's waiting jobs, highest priority then oldest first, skipping
-- rows other fetches hold, and make them active, counting a retry, in one statement.
-- Beside pg-boss's own columns it returns the two claimbench reads.
WITH next_job AS (
    SELECT id FROM job
    WHERE state < 'active' AND name LIKE :queue AND start_after < now()
    ORDER BY priority DESC, created_on, id
    LIMIT :batch
    FOR UPDATE SKIP LOCKED
)
UPDATE job j
SET state = 'active',
    started_on = now(),
    retry_count = CASE WHEN j.started_on IS NOT NULL THEN j.retry_count + 1
                       ELSE j.retry_count END
FROM next_job
WHERE j.id = next_job.id
RETURNING j.id, j.name, j.data, extract(epoch FROM j.expire_in) AS expire_in_seconds,
          j.retry_count + 1 AS attempt_count,
          (extract(epoch FROM clock_timestamp() - j.start_after) * 1000000)::bigint
              AS queue_wait_us
