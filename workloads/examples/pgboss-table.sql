-- A queue table of its own with uuid ids, and its lifecycle, in the shape of pg-boss's
-- `job` table as its version 9 made it (one table for every queue, named by `name`;
-- its enum of states, column types, defaults and fetch and singleton indexes, written
-- for this example; the archive table and cron are left out). claimbench runs each
-- step as the workers' role: docs/strategies.md, Your own table.
--
-- Its ids are uuids. claimbench counts jobs by number, so the seed step writes each
-- row's id as its number in a uuid (`lpad(to_hex(id), 32, '0')::uuid`: the number in
-- the low 64 bits), and the enqueue step inserts the ids claimbench hands it (`:ids`,
-- uuid[]) where pg-boss would take its default, gen_random_uuid(). Nothing else
-- changes: every other step binds and returns the table's own uuids.
-- step: ddl
CREATE TYPE job_state AS ENUM (
    'created', 'retry', 'active', 'completed', 'expired', 'cancelled', 'failed'
);
CREATE TABLE job (
    id            uuid        PRIMARY KEY NOT NULL DEFAULT gen_random_uuid(),
    name          text        NOT NULL,
    priority      integer     NOT NULL DEFAULT 0,
    data          jsonb,
    state         job_state   NOT NULL DEFAULT 'created',
    retry_limit   integer     NOT NULL DEFAULT 0,
    retry_count   integer     NOT NULL DEFAULT 0,
    retry_delay   integer     NOT NULL DEFAULT 0,
    retry_backoff boolean     NOT NULL DEFAULT false,
    start_after   timestamptz NOT NULL DEFAULT now(),
    started_on    timestamptz,
    singleton_key text,
    singleton_on  timestamp without time zone,
    expire_in     interval    NOT NULL DEFAULT interval '15 minutes',
    created_on    timestamptz NOT NULL DEFAULT now(),
    completed_on  timestamptz,
    keep_until    timestamptz NOT NULL DEFAULT now() + interval '14 days',
    on_complete   boolean     NOT NULL DEFAULT false,
    output        jsonb
);
CREATE INDEX job_name ON job (name text_pattern_ops);
CREATE INDEX job_fetch ON job (name text_pattern_ops, start_after) WHERE state < 'active';
CREATE UNIQUE INDEX job_singleton_on ON job (name, singleton_on)
    WHERE state < 'expired' AND singleton_key IS NULL;
CREATE UNIQUE INDEX job_singleton_key_on ON job (name, singleton_on, singleton_key)
    WHERE state < 'expired';
CREATE UNIQUE INDEX job_singleton_key ON job (name, singleton_key)
    WHERE state < 'completed' AND singleton_on IS NULL
      AND NOT singleton_key LIKE '\_\_pgboss\_\_singleton\_queue%';
-- step: seed
-- claimbench's seeded rows (the workload's queues, priorities, due times and payload
-- sizes; in prove's model states also rows other workers hold, status 1 and 2) in this
-- table's shape: each id its number as a uuid, a held row active and started, two
-- retries allowed. Priorities carry over as they are: pg-boss, like claimbench, takes
-- the highest first.
INSERT INTO job (id, name, priority, data, state, retry_limit, start_after, started_on,
                 created_on)
SELECT lpad(to_hex(id), 32, '0')::uuid, queue, priority,
       jsonb_build_object('payload', payload),
       CASE WHEN status <> 0 THEN 'active' ELSE 'created' END::job_state, 2,
       COALESCE(scheduled_at, created_at), CASE WHEN status <> 0 THEN now() END, created_at
FROM jobs_hot
-- step: enqueue
-- pg-boss's insert of a batch of jobs: the producer's jobs, each created and due its age
-- ago, with the ids claimbench hands out.
INSERT INTO job (id, name, priority, data, retry_limit, start_after, created_on)
SELECT j.id, j.queue, j.priority, jsonb_build_object('payload', repeat('x', :payload_bytes)),
       2, now() - make_interval(secs => j.age_us / 1e6),
       now() - make_interval(secs => j.age_us / 1e6)
FROM unnest(:ids::uuid[], :ages_us::bigint[], :queues::text[], :priorities::int[])
     AS j (id, age_us, queue, priority)
-- step: complete
-- pg-boss completes a job only while it is active; it does not ask who fetched it.
UPDATE job SET completed_on = now(), state = 'completed', output = '{}'::jsonb
WHERE id = :id AND state = 'active'
-- step: fail
-- pg-boss's fail: back to 'retry', due after the delay, while retries are left (its
-- fetch counts them), else 'failed'.
UPDATE job
SET state = CASE WHEN retry_count < retry_limit THEN 'retry' ELSE 'failed' END::job_state,
    completed_on = CASE WHEN retry_count < retry_limit THEN NULL ELSE now() END,
    start_after = CASE WHEN retry_count < retry_limit
                       THEN now() + make_interval(secs => :retry_delay_s)
                       ELSE start_after END,
    output = jsonb_build_object('message', 'the handler failed')
WHERE id = :id AND state < 'completed'
-- step: requeue
-- Jobs fetched and never started (the trial's end hands them back): waiting again as
-- retries. pg-boss has no such step (it lets them expire); the fetch's count of the
-- retry stays.
UPDATE job SET state = 'retry' WHERE id = ANY(:ids) AND state = 'active'
RETURNING id
-- step: rescue
-- pg-boss's expiry: active jobs started longer ago than their lease (the workload's,
-- where pg-boss reads expire_in) go back to 'retry' while retries are left.
UPDATE job SET state = 'retry'
WHERE state = 'active' AND retry_count < retry_limit
  AND started_on < now() - make_interval(secs => :lease_s)
RETURNING id
-- step: oldest
-- The head of the fetch's order, one probe of the fetch index: the oldest job due.
SELECT (extract(epoch FROM now() - min(start_after)) * 1000)::float8 AS oldest_pending_ms
FROM (SELECT start_after FROM job
      WHERE state < 'active' AND name LIKE 'default' AND start_after < now()
      ORDER BY priority DESC, created_on, id LIMIT 1) AS head
-- step: counts
SELECT count(*) FILTER (WHERE state IN ('created', 'retry')) AS pending,
       count(*) FILTER (WHERE state = 'active') AS running,
       count(*) FILTER (WHERE state = 'completed') AS completed,
       count(*) FILTER (WHERE state IN ('expired', 'cancelled', 'failed')) AS dead
FROM job
