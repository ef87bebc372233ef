-- Solid Queue's claim (ReadyExecution.claim), on its own tables
-- (solid-queue-table.sql): lock one queue's ready executions in priority and job order,
-- skipping those other claims hold, then, in the same transaction, record them as claimed
-- by this process and remove them from the ready table. The process is the worker,
-- its id hashed into Solid Queue's bigint process_id.
-- step: lock
SELECT job_id AS id
FROM solid_queue_ready_executions
WHERE queue_name = :queue
ORDER BY priority, job_id
LIMIT :batch
FOR UPDATE SKIP LOCKED
-- step: claim
WITH claimed AS (
    INSERT INTO solid_queue_claimed_executions (job_id, process_id, created_at)
    SELECT id, hashtext(:worker_id), now() FROM unnest(:ids::bigint[]) AS id
    RETURNING job_id
), gone AS (
    DELETE FROM solid_queue_ready_executions WHERE job_id = ANY(:ids)
)
SELECT j.id, 0 AS attempt_count,
       (extract(epoch FROM clock_timestamp() - j.created_at) * 1000000)::bigint AS queue_wait_us
FROM solid_queue_jobs j JOIN claimed c ON c.job_id = j.id
-- step: hold
-- How a claim in flight holds its jobs (prove's model check holds the ids it is given
-- this way): their ready executions locked, as the lock step leaves them.
SELECT count(*) FROM (SELECT 1 FROM solid_queue_ready_executions
                      WHERE job_id = ANY(:ids::bigint[]) FOR UPDATE) AS held
