-- The usual mistake, on the same table (pgboss-table.sql): read the head of the queue
-- without a lock, then make those ids active. Two workers read the same rows; the
-- second's UPDATE waits for the first's, then takes them again, since its WHERE trusts
-- the read: duplicates, counted by the jobs' uuids as by any id.
-- step: lock
SELECT id FROM job
WHERE state < 'active' AND name LIKE :queue AND start_after < now()
ORDER BY priority DESC, created_on, id
LIMIT :batch
-- step: claim
UPDATE job SET state = 'active', started_on = now()
WHERE id = ANY(:ids)
RETURNING id, retry_count + 1 AS attempt_count,
          (extract(epoch FROM clock_timestamp() - start_after) * 1000000)::bigint
              AS queue_wait_us
