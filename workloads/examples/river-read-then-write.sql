-- The usual mistake, on the same table (river-table.sql): read the head of the queue
-- without a lock, then mark those ids running as a new attempt. Two workers read the
-- same rows; the second's UPDATE waits for the first's, then takes them again, since its
-- WHERE trusts the read and does not ask whether they are still available: duplicates,
-- and runs of jobs already completed (it clears finalized_at, which River's check
-- constraint would otherwise refuse for a completed job).
-- step: lock
SELECT id FROM river_job
WHERE state = 'available' AND queue = :queue AND scheduled_at <= now()
ORDER BY priority, scheduled_at, id
LIMIT :batch
-- step: claim
UPDATE river_job
SET state = 'running', finalized_at = NULL, attempt = attempt + 1, attempted_at = now(),
    attempted_by = array_append(attempted_by, :worker_id::text)
WHERE id = ANY(:ids)
RETURNING id, attempt::int AS attempt_count,
          (extract(epoch FROM clock_timestamp() - scheduled_at) * 1000000)::bigint
              AS queue_wait_us
