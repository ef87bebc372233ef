-- A queue table of its own and its lifecycle, in the shape of River's river_job
-- (its column types, constraints and fetch index, written for this example; River's
-- GIN indexes on args and metadata are left out, and a retry goes straight back to
-- 'available' where River's scheduler would move it from 'retryable'). claimbench runs
-- each step as the workers' role: docs/strategies.md, Your own table.
-- step: ddl
CREATE TYPE river_job_state AS ENUM (
    'available', 'cancelled', 'completed', 'discarded', 'pending', 'retryable',
    'running', 'scheduled'
);
CREATE TABLE river_job (
    id           bigserial       PRIMARY KEY,
    state        river_job_state NOT NULL DEFAULT 'available',
    attempt      smallint        NOT NULL DEFAULT 0,
    max_attempts smallint        NOT NULL,
    attempted_at timestamptz,
    created_at   timestamptz     NOT NULL DEFAULT now(),
    finalized_at timestamptz,
    scheduled_at timestamptz     NOT NULL DEFAULT now(),
    priority     smallint        NOT NULL DEFAULT 1,
    args         jsonb,
    attempted_by text[],
    errors       jsonb[],
    kind         text            NOT NULL,
    metadata     jsonb           NOT NULL DEFAULT '{}',
    queue        text            NOT NULL DEFAULT 'default',
    tags         varchar(255)[]  NOT NULL DEFAULT '{}',
    CONSTRAINT finalized_or_finalized_at_null CHECK (
        (finalized_at IS NULL AND state NOT IN ('cancelled', 'completed', 'discarded'))
        OR (finalized_at IS NOT NULL AND state IN ('cancelled', 'completed', 'discarded'))),
    CONSTRAINT max_attempts_is_positive CHECK (max_attempts > 0),
    CONSTRAINT priority_in_range CHECK (priority >= 1 AND priority <= 4),
    CONSTRAINT queue_length CHECK (char_length(queue) > 0 AND char_length(queue) < 128),
    CONSTRAINT kind_length CHECK (char_length(kind) > 0 AND char_length(kind) < 128)
);
CREATE INDEX river_job_kind ON river_job (kind);
CREATE INDEX river_job_state_and_finalized_at_index ON river_job (state, finalized_at)
    WHERE finalized_at IS NOT NULL;
CREATE INDEX river_job_prioritized_fetching_index
    ON river_job (state, queue, priority, scheduled_at, id);
-- step: seed
-- claimbench's seeded rows (the workload's queues, priorities, due times and payload
-- sizes; in prove's model states also rows other workers hold, status 1 and 2) in this
-- table's shape. claimbench's priorities, highest first, become River's four levels,
-- lowest first, in the same order: 20 and above 1, 10 and above 2, 5 and above 3, the
-- rest 4.
INSERT INTO river_job (id, state, max_attempts, scheduled_at, created_at, priority, args,
                       kind, queue)
SELECT id, CASE WHEN status = 0 THEN 'available' ELSE 'running' END::river_job_state, 25,
       COALESCE(scheduled_at, created_at), created_at,
       CASE WHEN priority >= 20 THEN 1 WHEN priority >= 10 THEN 2 WHEN priority >= 5 THEN 3
            ELSE 4 END,
       jsonb_build_object('payload', payload), type, queue
FROM jobs_hot
-- step: enqueue
-- River's batch insert (JobInsertFastMany inserts from unnest of arrays): the producer's
-- jobs, each created and due its age ago.
INSERT INTO river_job (state, max_attempts, scheduled_at, created_at, priority, args, kind,
                       queue)
SELECT 'available', 25, now() - make_interval(secs => j.age_us / 1e6),
       now() - make_interval(secs => j.age_us / 1e6),
       CASE WHEN j.priority >= 20 THEN 1 WHEN j.priority >= 10 THEN 2
            WHEN j.priority >= 5 THEN 3 ELSE 4 END,
       jsonb_build_object('payload', repeat('x', :payload_bytes)), 'bench', j.queue
FROM unnest(:ages_us::bigint[], :queues::text[], :priorities::int[]) AS j (age_us, queue, priority)
-- step: complete
-- River finalizes a job only while it is running: it does not check who runs it.
UPDATE river_job SET state = 'completed', finalized_at = now()
WHERE id = :id AND state = 'running'
-- step: fail
UPDATE river_job
SET state = CASE WHEN attempt >= max_attempts THEN 'discarded' ELSE 'available' END::river_job_state,
    finalized_at = CASE WHEN attempt >= max_attempts THEN now() END,
    scheduled_at = now() + make_interval(secs => :retry_delay_s)
WHERE id = :id AND state = 'running'
-- step: requeue
-- Jobs claimed and never started (the trial's end hands them back): available again,
-- their claim's attempt taken back.
UPDATE river_job SET state = 'available', attempt = attempt - 1, attempted_at = NULL
WHERE id = ANY(:ids) AND state = 'running'
RETURNING id
-- step: rescue
-- River's rescuer: running jobs whose attempt began longer ago than the lease.
UPDATE river_job SET state = 'available'
WHERE state = 'running' AND attempted_at < now() - make_interval(secs => :lease_s)
RETURNING id
-- step: oldest
-- The head of the claim's order, one probe of the fetch index: with one priority and
-- one queue, the oldest due job.
SELECT (extract(epoch FROM now() - min(scheduled_at)) * 1000)::float8 AS oldest_pending_ms
FROM (SELECT scheduled_at FROM river_job
      WHERE state = 'available' AND queue = 'default' AND scheduled_at <= now()
      ORDER BY priority, scheduled_at, id LIMIT 1) AS head
-- step: counts
SELECT count(*) FILTER (WHERE state IN ('available', 'retryable', 'scheduled')) AS pending,
       count(*) FILTER (WHERE state = 'running') AS running,
       count(*) FILTER (WHERE state = 'completed') AS completed,
       count(*) FILTER (WHERE state = 'discarded') AS dead
FROM river_job
