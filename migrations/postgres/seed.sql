-- Server-side population of the hot table: one INSERT ... SELECT, no client round trip
-- per row. Deterministic for a given setseed() value (run right before, same session).
-- Ids are 1..$1 in creation order; keys.sql then adds the primary key.
-- $1 rows, $2 queue names, $3 queue lower bounds (cumulative weights in [0,1)),
-- $4 priorities, $5 priority lower bounds, $6 share scheduled in the future,
-- $7 seconds within which scheduled jobs become due, $8 payload bytes, $9 each queue's
-- own priority (NULL: drawn from $4).
INSERT INTO jobs_hot (id, queue, type, payload, priority, status, scheduled_at, created_at, created_by)
SELECT g,
       ($2::text[])[q],
       'bench',
       repeat('x', $8::int),
       COALESCE(($9::int[])[q], ($4::int[])[width_bucket(random(), $5::float8[])]),
       0,
       CASE WHEN random() < $6::float8
            THEN now() + make_interval(secs => random() * $7::float8)
       END,
       now(),
       'claimbench'
FROM (SELECT g, width_bucket(random(), $3::float8[]) AS q
      FROM generate_series(1, $1::bigint) AS g) AS drawn
