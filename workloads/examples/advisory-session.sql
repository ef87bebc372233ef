-- The session-advisory-lock claim of Que and GoodJob, written for claimbench's schema
-- (workloads/examples/advisory-session.toml): try-lock the first pending ids in the
-- fetch-order index's order, mark those still pending, and give back at once the locks
-- of rows it could not mark. The worker owns each job by its lock until the job leaves
-- it; the release step gives the lock up then. The window reads the index's own order:
-- ordered by priority and id alone it sorted the whole backlog on every claim, and by
-- the time it try-locked its window other workers had claimed and finished most of it
-- (700 jobs/s at 8 workers, half of the claims empty, against 4,864 in index order).
-- step: claim
WITH candidates AS MATERIALIZED (
    SELECT j.id FROM jobs_hot j
    WHERE j.status = 0 AND (j.scheduled_at IS NULL OR j.scheduled_at <= now())
      AND j.queue NOT IN (SELECT q.name FROM queues q WHERE q.is_paused OR NOT q.is_active)
    ORDER BY j.priority DESC, COALESCE(j.scheduled_at, j.created_at), j.id
    LIMIT :batch * 4 + 64
),
locked AS MATERIALIZED (
    SELECT id FROM candidates WHERE pg_try_advisory_lock(id) LIMIT :batch
),
claimed AS (
    UPDATE jobs_hot h
    SET status = 1, worker_id = :worker_id, last_updated_at = now()
    FROM locked l
    WHERE h.id = l.id AND h.status = 0
    RETURNING h.id, h.attempt_count
),
-- The unlock of the rows it could not mark gates the result (an InitPlan the executor
-- runs before the first row), so it runs when the claim marks none of them too: as a
-- join it was never run when nothing was claimed, and the session kept those locks.
unlocked AS (
    SELECT count(pg_advisory_unlock(l.id)) AS n
    FROM locked l
    WHERE NOT EXISTS (SELECT 1 FROM claimed c2 WHERE c2.id = l.id)
)
SELECT c.id, c.attempt_count
FROM claimed c
WHERE (SELECT n FROM unlocked) >= 0
-- step: release
SELECT count(pg_advisory_unlock(id)) FROM unnest(:ids::bigint[]) AS id
