-- ready-table: claim from a narrow table of ready job ids with SKIP LOCKED, and join back
-- to the job row. $1 batch limit, $2 worker id.
--
-- The technique of some MySQL-first queues (and a common fix for a hot table bloated by
-- history): the claim scans a small table holding only pending ids and their sort key,
-- not the wide job rows. The `setup` step runs once per trial, after the reset: it
-- builds `jobs_ready` from the pending rows and a trigger that puts a row back whenever a
-- job becomes pending (produced, released, rescued, retried). The claim deletes the
-- ready rows it locks and marks their jobs fetched, in one statement.
-- What it promises: no duplicates (the ready row is locked, then deleted, before its job
-- is marked; the job is marked only while still pending). No per-queue cap. Its cost is
-- the trigger on every status change and a second table's churn.
-- A batch comes back short when other claims hold ready rows; empty when every ready
-- row that is due, in an unpaused queue, is locked by a claim in flight, or none is
-- left. Ready rows of paused queues stay in the table and are read past on every claim.
-- The behavioural suite holds this statement to model::uncapped_pick (src/model.rs) on
-- generated states with other claims in flight, and at the edges of the cases above.
-- The locked ids are a materialized CTE, read once: as `DELETE ... WHERE id IN (SELECT
-- ... LIMIT $1 FOR UPDATE SKIP LOCKED)` the planner may run the subquery once per outer
-- row (a nested loop), each run locking its own LIMIT of rows, and the claim returned
-- 21 jobs for a batch of 5 (the model check caught it on a generated state).
-- step: setup
CREATE TABLE jobs_ready (
    id       bigint      PRIMARY KEY,
    priority int         NOT NULL,
    sort_at  timestamptz NOT NULL
);
INSERT INTO jobs_ready (id, priority, sort_at)
SELECT id, priority, COALESCE(scheduled_at, created_at) FROM jobs_hot WHERE status = 0;
CREATE INDEX ix_jobs_ready_order ON jobs_ready (priority DESC, sort_at, id);
CREATE FUNCTION jobs_ready_track() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.status = 0 THEN
        INSERT INTO jobs_ready (id, priority, sort_at)
        VALUES (NEW.id, NEW.priority, COALESCE(NEW.scheduled_at, NEW.created_at))
        ON CONFLICT (id) DO UPDATE SET sort_at = EXCLUDED.sort_at;
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER jobs_ready_track AFTER INSERT OR UPDATE OF status, scheduled_at ON jobs_hot
    FOR EACH ROW EXECUTE FUNCTION jobs_ready_track();
ANALYZE jobs_ready;
-- step: claim
WITH locked AS MATERIALIZED (
    SELECT rr.id
    FROM jobs_ready rr
    JOIN jobs_hot j ON j.id = rr.id
    LEFT JOIN queues q ON q.name = j.queue
    WHERE rr.sort_at <= now()
      AND q.is_paused IS NOT TRUE
      AND q.is_active IS NOT FALSE
    ORDER BY rr.priority DESC, rr.sort_at ASC, rr.id ASC
    LIMIT $1
    FOR UPDATE OF rr SKIP LOCKED
),
picked AS (
    DELETE FROM jobs_ready r
    USING locked l
    WHERE r.id = l.id
    RETURNING r.id
)
UPDATE jobs_hot h
SET status = 1,
    worker_id = $2,
    last_updated_at = now()
FROM picked p
WHERE h.id = p.id
  AND h.status = 0
RETURNING h.id, h.queue, h.type, h.payload, h.tags, h.idempotency_key, h.priority,
          h.status, h.attempt_count, h.worker_id, h.heartbeat_at, h.scheduled_at,
          h.created_at, h.started_at, h.last_updated_at, h.created_by, h.last_modified_by,
          (extract(epoch FROM clock_timestamp() - COALESCE(h.scheduled_at, h.created_at))
           * 1000000)::bigint AS queue_wait_us
