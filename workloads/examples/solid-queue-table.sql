-- A queue of three tables of its own, in the shape of Solid Queue's: the jobs, a narrow
-- table of ready executions the claim locks, and a table of claimed executions that
-- records who holds each job (column types and indexes as its migration writes them,
-- for this example; its processes, pauses and scheduled executions left out, so a job
-- is ready when it is created). claimbench runs each step as the workers' role:
-- docs/strategies.md, Your own table.
-- step: ddl
CREATE TABLE solid_queue_jobs (
    id             bigserial    PRIMARY KEY,
    queue_name     varchar      NOT NULL,
    class_name     varchar      NOT NULL,
    arguments      text,
    priority       integer      NOT NULL DEFAULT 0,
    active_job_id  varchar,
    scheduled_at   timestamp(6),
    finished_at    timestamp(6),
    concurrency_key varchar,
    created_at     timestamp(6) NOT NULL,
    updated_at     timestamp(6) NOT NULL
);
CREATE INDEX index_solid_queue_jobs_for_filtering ON solid_queue_jobs (queue_name, finished_at);
CREATE INDEX index_solid_queue_jobs_for_alerting ON solid_queue_jobs (scheduled_at, finished_at);
CREATE TABLE solid_queue_ready_executions (
    id         bigserial    PRIMARY KEY,
    job_id     bigint       NOT NULL REFERENCES solid_queue_jobs (id) ON DELETE CASCADE,
    queue_name varchar      NOT NULL,
    priority   integer      NOT NULL DEFAULT 0,
    created_at timestamp(6) NOT NULL
);
CREATE UNIQUE INDEX index_solid_queue_ready_executions_on_job_id
    ON solid_queue_ready_executions (job_id);
CREATE INDEX index_solid_queue_poll_all ON solid_queue_ready_executions (priority, job_id);
CREATE INDEX index_solid_queue_poll_by_queue
    ON solid_queue_ready_executions (queue_name, priority, job_id);
CREATE TABLE solid_queue_claimed_executions (
    id         bigserial    PRIMARY KEY,
    job_id     bigint       NOT NULL REFERENCES solid_queue_jobs (id) ON DELETE CASCADE,
    process_id bigint,
    created_at timestamp(6) NOT NULL
);
CREATE UNIQUE INDEX index_solid_queue_claimed_executions_on_job_id
    ON solid_queue_claimed_executions (job_id);
CREATE INDEX index_solid_queue_claimed_executions_on_process_id_and_job_id
    ON solid_queue_claimed_executions (process_id, job_id);
-- step: seed
-- claimbench's seeded rows as jobs, and a ready execution for each pending, due one.
-- Solid Queue runs the lowest priority number first: claimbench's priority, highest
-- first, negated.
WITH jobs AS (
    INSERT INTO solid_queue_jobs (id, queue_name, class_name, arguments, priority,
                                  scheduled_at, created_at, updated_at)
    SELECT id, queue, type, payload, -priority, scheduled_at, created_at, created_at
    FROM jobs_hot
    RETURNING id, queue_name, priority, created_at
)
INSERT INTO solid_queue_ready_executions (job_id, queue_name, priority, created_at)
SELECT j.id, j.queue_name, j.priority, j.created_at
FROM jobs j JOIN jobs_hot h ON h.id = j.id
WHERE h.status = 0 AND COALESCE(h.scheduled_at, h.created_at) <= now()
-- step: enqueue
-- A job and its ready execution per arrival, in one statement.
WITH jobs AS (
    INSERT INTO solid_queue_jobs (queue_name, class_name, arguments, priority, created_at,
                                  updated_at)
    SELECT j.queue, 'bench', repeat('x', :payload_bytes), -j.priority,
           now() - make_interval(secs => j.age_us / 1e6), now()
    FROM unnest(:ages_us::bigint[], :queues::text[], :priorities::int[])
         AS j (age_us, queue, priority)
    RETURNING id, queue_name, priority, created_at
)
INSERT INTO solid_queue_ready_executions (job_id, queue_name, priority, created_at)
SELECT id, queue_name, priority, created_at FROM jobs
-- step: complete
-- The claimed execution goes (only this worker's), and the job is finished.
WITH done AS (
    DELETE FROM solid_queue_claimed_executions
    WHERE job_id = :id AND process_id = hashtext(:worker_id)
    RETURNING job_id
)
UPDATE solid_queue_jobs j SET finished_at = now(), updated_at = now()
FROM done WHERE j.id = done.job_id
-- step: requeue
-- Claimed executions given back: ready again.
WITH gone AS (
    DELETE FROM solid_queue_claimed_executions
    WHERE job_id = ANY(:ids) AND process_id = hashtext(:worker_id)
    RETURNING job_id
)
INSERT INTO solid_queue_ready_executions (job_id, queue_name, priority, created_at)
SELECT j.id, j.queue_name, j.priority, j.created_at
FROM solid_queue_jobs j JOIN gone ON gone.job_id = j.id
RETURNING job_id
-- step: oldest
-- The head of the claim's order: the ready execution a claim takes next, its job's age.
SELECT (extract(epoch FROM now() - min(created_at)) * 1000)::float8 AS oldest_pending_ms
FROM (SELECT created_at FROM solid_queue_ready_executions
      ORDER BY priority, job_id LIMIT 1) AS head
-- step: counts
SELECT (SELECT count(*) FROM solid_queue_jobs j
         WHERE j.finished_at IS NULL
           AND NOT EXISTS (SELECT 1 FROM solid_queue_claimed_executions c
                            WHERE c.job_id = j.id)) AS pending,
       (SELECT count(*) FROM solid_queue_claimed_executions) AS running,
       (SELECT count(*) FROM solid_queue_jobs WHERE finished_at IS NOT NULL) AS completed,
       0::bigint AS dead
