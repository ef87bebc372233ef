-- A queue table of its own and its lifecycle, in the shape of Oban's oban_jobs (its enum
-- of states, column types, check constraints and indexes as its migrations write them,
-- for this example; timestamps without time zone, in UTC, as Oban keeps them). Oban's
-- plugins are left out: a job due later is 'scheduled' and its stager would make it
-- available, a retry goes straight back to 'available' (the workload retries at once),
-- and its Lifeline is the rescue step. claimbench runs each step as the workers' role:
-- docs/strategies.md, Your own table.
-- step: ddl
CREATE TYPE oban_job_state AS ENUM (
    'available', 'scheduled', 'executing', 'retryable', 'completed', 'discarded',
    'cancelled'
);
CREATE TABLE oban_jobs (
    id           bigserial      PRIMARY KEY,
    state        oban_job_state NOT NULL DEFAULT 'available',
    queue        text           NOT NULL DEFAULT 'default',
    worker       text           NOT NULL,
    args         jsonb          NOT NULL DEFAULT '{}',
    errors       jsonb[]        NOT NULL DEFAULT '{}',
    attempt      integer        NOT NULL DEFAULT 0,
    max_attempts integer        NOT NULL DEFAULT 20,
    inserted_at  timestamp      NOT NULL DEFAULT timezone('UTC', now()),
    scheduled_at timestamp      NOT NULL DEFAULT timezone('UTC', now()),
    attempted_at timestamp,
    completed_at timestamp,
    attempted_by text[],
    discarded_at timestamp,
    priority     integer        NOT NULL DEFAULT 0,
    tags         text[]                  DEFAULT '{}',
    meta         jsonb                   DEFAULT '{}',
    cancelled_at timestamp,
    CONSTRAINT attempt_range CHECK (attempt >= 0 AND attempt <= max_attempts),
    CONSTRAINT positive_max_attempts CHECK (max_attempts > 0),
    CONSTRAINT queue_length CHECK (char_length(queue) > 0 AND char_length(queue) < 128),
    CONSTRAINT worker_length CHECK (char_length(worker) > 0 AND char_length(worker) < 128),
    CONSTRAINT non_negative_priority CHECK (priority >= 0)
);
CREATE INDEX oban_jobs_state_queue_priority_scheduled_at_id_index
    ON oban_jobs (state, queue, priority, scheduled_at, id);
CREATE INDEX oban_jobs_args_index ON oban_jobs USING gin (args);
CREATE INDEX oban_jobs_meta_index ON oban_jobs USING gin (meta);
-- step: seed
-- claimbench's seeded rows (the workload's queues, priorities, due times and payload
-- sizes; in prove's model states also rows other workers hold, status 1 and 2) in this
-- table's shape: a pending job due later is 'scheduled'. claimbench's priorities,
-- highest first, become Oban's, 0 first, in the same order: 20 and above 0, 10 and
-- above 1, 5 and above 2, the rest 3.
INSERT INTO oban_jobs (id, state, queue, worker, args, attempt, inserted_at, scheduled_at,
                       attempted_at, attempted_by, priority)
SELECT id,
       CASE WHEN status <> 0 THEN 'executing'
            WHEN COALESCE(scheduled_at, created_at) <= now() THEN 'available'
            ELSE 'scheduled' END::oban_job_state,
       queue, type, jsonb_build_object('payload', payload),
       CASE WHEN status <> 0 THEN 1 ELSE 0 END,
       timezone('UTC', created_at), timezone('UTC', COALESCE(scheduled_at, created_at)),
       CASE WHEN status <> 0 THEN timezone('UTC', now()) END,
       CASE WHEN status <> 0 THEN ARRAY['another-node'] END,
       CASE WHEN priority >= 20 THEN 0 WHEN priority >= 10 THEN 1 WHEN priority >= 5 THEN 2
            ELSE 3 END
FROM jobs_hot
-- step: enqueue
-- Oban's insert_all: the producer's jobs, each inserted and due its age ago.
INSERT INTO oban_jobs (state, queue, worker, args, inserted_at, scheduled_at, priority)
SELECT 'available', j.queue, 'Bench.Worker',
       jsonb_build_object('payload', repeat('x', :payload_bytes)),
       timezone('UTC', now()) - make_interval(secs => j.age_us / 1e6),
       timezone('UTC', now()) - make_interval(secs => j.age_us / 1e6),
       CASE WHEN j.priority >= 20 THEN 0 WHEN j.priority >= 10 THEN 1
            WHEN j.priority >= 5 THEN 2 ELSE 3 END
FROM unnest(:ages_us::bigint[], :queues::text[], :priorities::int[]) AS j (age_us, queue, priority)
-- step: complete
-- Oban completes a job by its id alone: it does not check that the job is still
-- executing, or whose it is.
UPDATE oban_jobs SET state = 'completed', completed_at = timezone('UTC', now())
WHERE id = :id
-- step: fail
-- Oban records the error and makes the job retryable after its backoff, or discards it
-- on its last attempt (the attempt its claim counted).
UPDATE oban_jobs
SET state = CASE WHEN attempt >= max_attempts THEN 'discarded' ELSE 'available' END::oban_job_state,
    discarded_at = CASE WHEN attempt >= max_attempts THEN timezone('UTC', now()) END,
    scheduled_at = timezone('UTC', now()) + make_interval(secs => :retry_delay_s),
    errors = array_append(errors, jsonb_build_object(
        'attempt', attempt, 'at', timezone('UTC', now()), 'error', 'the handler failed'))
WHERE id = :id AND state = 'executing'
-- step: requeue
-- Jobs claimed and never started (the trial's end hands them back): available again,
-- their claim's attempt taken back.
UPDATE oban_jobs SET state = 'available', attempt = attempt - 1, attempted_at = NULL
WHERE id = ANY(:ids) AND state = 'executing'
RETURNING id
-- step: rescue
-- Oban's Lifeline: executing jobs whose attempt began longer ago than the lease, with
-- attempts left.
UPDATE oban_jobs SET state = 'available'
WHERE state = 'executing' AND attempt < max_attempts
  AND attempted_at < timezone('UTC', now()) - make_interval(secs => :lease_s)
RETURNING id
-- step: oldest
-- The head of each queue's claim order, one probe of the fetch index per queue: with
-- one priority, each queue's oldest available job.
SELECT (extract(epoch FROM timezone('UTC', now()) - min(head.scheduled_at)) * 1000)::float8
           AS oldest_pending_ms
FROM unnest(ARRAY['default', 'mailers']) AS q (name)
CROSS JOIN LATERAL (
    SELECT scheduled_at FROM oban_jobs
    WHERE state = 'available' AND queue = q.name
    ORDER BY priority, scheduled_at, id LIMIT 1
) AS head
-- step: counts
SELECT count(*) FILTER (WHERE state IN ('available', 'scheduled', 'retryable')) AS pending,
       count(*) FILTER (WHERE state = 'executing') AS running,
       count(*) FILTER (WHERE state = 'completed') AS completed,
       count(*) FILTER (WHERE state IN ('discarded', 'cancelled')) AS dead
FROM oban_jobs
