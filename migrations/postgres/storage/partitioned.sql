-- The partitioned storage model (storage = "partitioned"): jobs_hot is partitioned by a
-- rotating time slot, as a queue that rotates tables instead of vacuuming them row by
-- row does. A job lands in the slot of its insert time: slot = the seconds since the
-- epoch divided by {width} (the cleanup job's every_s, else 10), modulo {slots}; one
-- partition per slot (jobs_hot_0 ...). A finished job stays in its partition with a
-- final status, as under update-in-place (whose complete, complete-batch and fail steps
-- this model runs), and the cleanup job truncates a whole partition once every row in it
-- is finished and past retention: no row of it is ever deleted or vacuumed one by one.
-- Every claim and lifecycle statement is the shared one: none names the slot, so each
-- reads every partition (no pruning), which is this design's cost per statement.

-- step: table
-- Run after schema.sql, inside the reset's transaction: jobs_hot again, with the same
-- columns and defaults plus the slot, as a table partitioned by it. PostgreSQL before 17
-- has no identity column on a partitioned table: the id comes from a sequence the column
-- owns (keys.sql's setval finds it the same way).
CREATE FUNCTION claimbench_slot(at timestamptz) RETURNS smallint
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS 'SELECT (floor(extract(epoch FROM at) / {width})::bigint % {slots})::smallint';
CREATE TABLE jobs_hot_partitioned (
    LIKE jobs_hot INCLUDING DEFAULTS,
    slot smallint NOT NULL DEFAULT claimbench_slot(now())
) PARTITION BY LIST (slot);
DROP TABLE jobs_hot;
ALTER TABLE jobs_hot_partitioned RENAME TO jobs_hot;
CREATE SEQUENCE jobs_hot_id_seq OWNED BY jobs_hot.id;
ALTER TABLE jobs_hot ALTER COLUMN id SET DEFAULT nextval('jobs_hot_id_seq');
DO $$
BEGIN
    FOR s IN 0..{slots} - 1 LOOP
        EXECUTE format('CREATE TABLE %I PARTITION OF jobs_hot FOR VALUES IN (%s)',
                       'jobs_hot_' || s, s);
    END LOOP;
END
$$;
-- The cleanup job's one statement (step clean): truncates the first partition, other
-- than the slot being filled now and the next one, that holds rows, none of them live
-- (status 0, 1, 2), the newest finished more than retain_s seconds ago. It waits at
-- most 50 ms for the partition's lock: every claim reads every partition, so a TRUNCATE
-- waiting behind one would hold all of them back. Before the rows go, the trial's own
-- finished jobs leave their id, queue, start and finish in jobs_cleaned and its dead
-- ones move to jobs_dead_letter (seeded history leaves nothing), so the counts after
-- the trial lose no job. Returns the rows removed (0: nothing was ready). `batch` is
-- not used: a partition goes whole.
CREATE FUNCTION claimbench_rotate(retain_s float8, batch bigint) RETURNS bigint
    LANGUAGE plpgsql AS $$
DECLARE
    now_slot smallint := claimbench_slot(now());
    part text;
    n bigint;
    live boolean;
    newest timestamptz;
BEGIN
    FOR s IN 0..{slots} - 1 LOOP
        CONTINUE WHEN s = now_slot OR s = (now_slot + 1) % {slots};
        part := 'jobs_hot_' || s;
        EXECUTE format('SELECT count(*), bool_or(status IN (0, 1, 2)), max(last_updated_at) FROM %I', part)
            INTO n, live, newest;
        CONTINUE WHEN n = 0 OR live OR newest >= now() - make_interval(secs => retain_s);
        PERFORM set_config('lock_timeout', '50ms', true);
        EXECUTE format('LOCK TABLE %I IN ACCESS EXCLUSIVE MODE', part);
        -- Locked: no row can change now; look again.
        EXECUTE format('SELECT count(*), bool_or(status IN (0, 1, 2)) FROM %I', part)
            INTO n, live;
        CONTINUE WHEN live;
        EXECUTE format(
            'INSERT INTO jobs_cleaned (id, queue, started_at, finished_at)
             SELECT id, queue, started_at, last_updated_at FROM %I
              WHERE status = 3 AND created_by IS DISTINCT FROM ''claimbench-history''', part);
        EXECUTE format(
            'INSERT INTO jobs_dead_letter (id, queue, type, payload, tags, idempotency_key,
                                           priority, attempt_count, worker_id, scheduled_at,
                                           created_at, failed_at, created_by, last_modified_by)
             SELECT id, queue, type, payload, tags, idempotency_key, priority, attempt_count,
                    worker_id, scheduled_at, created_at, last_updated_at, created_by,
                    last_modified_by
               FROM %I WHERE status = 4 AND created_by IS DISTINCT FROM ''claimbench-history''',
            part);
        EXECUTE format('TRUNCATE %I', part);
        RETURN n;
    END LOOP;
    RETURN 0;
END
$$;

-- step: keys
-- Replaces keys.sql: a partitioned table's primary key must hold its partition key.
ALTER TABLE jobs_hot ADD PRIMARY KEY (id, slot);
SELECT setval(pg_get_serial_sequence('jobs_hot', 'id'),
              COALESCE((SELECT max(id) FROM jobs_hot), 0) + 1, false);

-- step: clean
-- One statement of the cleanup job: $1 retention (seconds), $2 batch (unused).
SELECT claimbench_rotate($1::float8, $2::bigint)
