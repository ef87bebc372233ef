-- The model check's statements (`prove` of a declared claim that names its reference
-- model): a generated table state loaded in place of the seed, and the rows other
-- claims in flight hold while the claim runs. Rows go through DELETE and INSERT, not
-- TRUNCATE, so the triggers of a declared setup step keep its own tables in step.

-- step: clear
DELETE FROM jobs_hot; DELETE FROM queues

-- step: queues
-- $1 names, $2 paused, $3 active, $4 max workers: one array each.
INSERT INTO queues (name, is_paused, is_active, max_workers)
SELECT * FROM unnest($1::text[], $2::bool[], $3::bool[], $4::int[])

-- step: jobs
-- One array each: $1 ids, $2 queues, $3 priorities, $4 statuses, $5 creation and $6
-- scheduled times in seconds from now (NULL: not scheduled). A row that is not pending
-- belongs to another worker.
INSERT INTO jobs_hot (id, queue, type, payload, priority, status, worker_id, created_at, scheduled_at)
SELECT id, queue, 'bench', '', priority, status, CASE WHEN status > 0 THEN 'other' END,
       now() + make_interval(secs => created), now() + make_interval(secs => scheduled)
FROM unnest($1::bigint[], $2::text[], $3::int[], $4::int2[], $5::float8[], $6::float8[])
     AS u(id, queue, priority, status, created, scheduled)

-- step: hold
-- Inside a transaction: what claims in flight hold of $1's jobs, their rows and the
-- advisory locks an advisory claim takes on their ids (ended with the transaction).
SELECT count(pg_advisory_xact_lock(h.id))
FROM (SELECT id FROM jobs_hot WHERE id = ANY($1) ORDER BY id FOR UPDATE) AS h
