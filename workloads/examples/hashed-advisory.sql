-- The claim of GoodJob as its users run it, written for claimbench's schema
-- (workloads/examples/hashed-advisory.toml): a session-level advisory lock keyed by a
-- hash of the job's id, not the id itself, taken over the first rows in fetch order;
-- no paused-queue filter, since the library pauses in its workers' code. The `hold`
-- step tells prove's model check how a claim in flight holds a job (this lock, and no
-- row lock); `pauses = "worker"` in the workload makes its model take paused queues'
-- jobs too. Without either, the model check fails a faithful claim.
-- step: claim
WITH candidates AS MATERIALIZED (
    SELECT j.id FROM jobs_hot j
    WHERE j.status = 0 AND (j.scheduled_at IS NULL OR j.scheduled_at <= now())
    ORDER BY j.priority DESC, COALESCE(j.scheduled_at, j.created_at), j.id
    LIMIT :batch * 4 + 64
),
locked AS MATERIALIZED (
    SELECT id FROM candidates WHERE pg_try_advisory_lock(hashtextextended(id::text, 0)) LIMIT :batch
),
claimed AS (
    UPDATE jobs_hot h
    SET status = 1, worker_id = :worker_id, last_updated_at = now()
    FROM locked l
    WHERE h.id = l.id AND h.status = 0
    RETURNING h.id, h.attempt_count
),
-- Rows it locked but could not mark give their locks back in the same statement, also
-- when it marks none (the unlock gates the result: advisory-session.sql says why).
unlocked AS (
    SELECT count(pg_advisory_unlock(hashtextextended(l.id::text, 0))) AS n
    FROM locked l
    WHERE NOT EXISTS (SELECT 1 FROM claimed c2 WHERE c2.id = l.id)
)
SELECT c.id, c.attempt_count
FROM claimed c
WHERE (SELECT n FROM unlocked) >= 0
-- step: release
SELECT count(pg_advisory_unlock(hashtextextended(id::text, 0))) FROM unnest(:ids::bigint[]) AS id
-- step: hold
SELECT count(pg_advisory_xact_lock(hashtextextended(id::text, 0))) FROM unnest(:ids::bigint[]) AS id
