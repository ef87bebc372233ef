-- River's claim (JobGetAvailable), on its own table (river-table.sql): lock the head of
-- one queue's available jobs, skipping rows other claims hold, and mark them running,
-- counting the attempt, in one statement.
WITH locked_jobs AS (
    SELECT id FROM river_job
    WHERE state = 'available' AND queue = :queue AND scheduled_at <= now()
    ORDER BY priority, scheduled_at, id
    LIMIT :batch
    FOR UPDATE SKIP LOCKED
)
UPDATE river_job
SET state = 'running', attempt = river_job.attempt + 1, attempted_at = now(),
    attempted_by = array_append(river_job.attempted_by, :worker_id::text)
FROM locked_jobs
WHERE river_job.id = locked_jobs.id
RETURNING river_job.id, river_job.attempt::int AS attempt_count,
          (extract(epoch FROM clock_timestamp() - river_job.scheduled_at) * 1000000)::bigint
              AS queue_wait_us
