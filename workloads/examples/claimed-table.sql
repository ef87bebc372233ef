-- A claim of two statements over tables of its own, the technique of queue libraries
-- that keep a narrow table of ready executions and record each claim in a table of
-- claimed ones (written for claimbench's schema: workloads/examples/claimed-table.toml).
-- The setup step runs after each reset, as the workers' role; triggers keep both tables
-- in step with jobs_hot, so claimbench's own start, complete, fail and rescue work.
-- step: setup
CREATE TABLE ready_executions (
    job_id   bigint      PRIMARY KEY,
    queue    text        NOT NULL,
    priority int         NOT NULL,
    sort_at  timestamptz NOT NULL
);
CREATE INDEX ix_ready_executions_poll ON ready_executions (priority DESC, sort_at, job_id);
CREATE TABLE claimed_executions (
    job_id     bigint      PRIMARY KEY,
    process_id text        NOT NULL,
    claimed_at timestamptz NOT NULL DEFAULT now()
);
INSERT INTO ready_executions (job_id, queue, priority, sort_at)
SELECT id, queue, priority, COALESCE(scheduled_at, created_at) FROM jobs_hot WHERE status = 0;
CREATE FUNCTION executions_track() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        DELETE FROM ready_executions WHERE job_id = OLD.id;
        DELETE FROM claimed_executions WHERE job_id = OLD.id;
        RETURN NULL;
    END IF;
    IF NEW.status = 0 THEN
        INSERT INTO ready_executions (job_id, queue, priority, sort_at)
        VALUES (NEW.id, NEW.queue, NEW.priority, COALESCE(NEW.scheduled_at, NEW.created_at))
        ON CONFLICT (job_id) DO UPDATE SET sort_at = EXCLUDED.sort_at;
    END IF;
    IF TG_OP = 'UPDATE' AND OLD.status = 1 AND NEW.status <> 1 THEN
        DELETE FROM claimed_executions WHERE job_id = NEW.id;
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER executions_track AFTER INSERT OR DELETE OR UPDATE OF status, scheduled_at ON jobs_hot
    FOR EACH ROW EXECUTE FUNCTION executions_track();
ANALYZE ready_executions;
-- step: lock
-- The ready rows to take and their jobs, locked; rows another claim holds are skipped
-- (the job's too: a job row someone else holds, such as a rescue in flight, would
-- make the claim step wait). The paused queues are a hashed list the index scan
-- filters by: written as NOT EXISTS, the planner made it an anti-join that sorted
-- every ready row for each claim (159 ms, 59,401 rows examined per batch of 5, in the
-- Plans table).
SELECT r.job_id AS id
FROM ready_executions r
JOIN jobs_hot h ON h.id = r.job_id
WHERE r.sort_at <= now()
  AND r.queue NOT IN (SELECT q.name FROM queues q WHERE q.is_paused OR NOT q.is_active)
ORDER BY r.priority DESC, r.sort_at, r.job_id
LIMIT :batch
FOR UPDATE OF r, h SKIP LOCKED
-- step: claim
-- Records the claims, gives up the ready rows, and marks the jobs, in one statement.
WITH claimed AS (
    INSERT INTO claimed_executions (job_id, process_id)
    SELECT id, :worker_id FROM unnest(:ids::bigint[]) AS id
    RETURNING job_id
), gone AS (
    DELETE FROM ready_executions WHERE job_id = ANY(:ids)
)
UPDATE jobs_hot h
SET status = 1, worker_id = :worker_id, last_updated_at = now()
FROM claimed c
WHERE h.id = c.job_id AND h.status = 0
RETURNING h.id, h.attempt_count,
          (extract(epoch FROM clock_timestamp() - COALESCE(h.scheduled_at, h.created_at))
           * 1000000)::bigint AS queue_wait_us
