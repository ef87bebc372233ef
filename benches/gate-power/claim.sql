-- gate_power.sh's claim: the shape of the CTE example (FOR UPDATE SKIP LOCKED, then
-- UPDATE … RETURNING) plus `:work` rows of server-side arithmetic per claim, an
-- uncorrelated subquery the planner runs once per statement. With work = 0 it is the
-- plain claim; the script raises `work` on B to slow each claim by a known share.
WITH picked AS (
    SELECT j.id
    FROM jobs_hot j
    WHERE j.status = 0
      AND (j.scheduled_at IS NULL OR j.scheduled_at <= now())
      AND (SELECT count(*) FROM generate_series(1, CAST(:work AS integer))) >= 0
    ORDER BY j.priority DESC, COALESCE(j.scheduled_at, j.created_at), j.id
    LIMIT :batch
    FOR UPDATE SKIP LOCKED
)
UPDATE jobs_hot h
SET status = 1,
    worker_id = :worker_id,
    last_updated_at = now()
FROM picked
WHERE h.id = picked.id
RETURNING h.id, h.attempt_count,
          (extract(epoch FROM clock_timestamp() - COALESCE(h.scheduled_at, h.created_at))
           * 1000000)::bigint AS queue_wait_us
