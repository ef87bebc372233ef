-- produce: an open-loop producer's insert of $1 new jobs, due now.
-- $2 queue names, $3 queue lower bounds, $4 priorities, $5 priority lower bounds,
-- $6 payload bytes, $7 each queue's own priority (NULL: drawn from $4).
INSERT INTO jobs_hot (queue, type, payload, priority, status, created_at, created_by)
SELECT ($2::text[])[q],
       'bench',
       repeat('x', $6::int),
       COALESCE(($7::int[])[q], ($4::int[])[width_bucket(random(), $5::float8[])]),
       0,
       now(),
       'claimbench-producer'
FROM (SELECT width_bucket(random(), $3::float8[]) AS q
      FROM generate_series(1, $1::bigint)) AS drawn
