-- produce: an open-loop producer's insert of one job per element of $1, each created
-- that many microseconds before now (its intended arrival time, so a late producer shows
-- in queue wait). $2 queue names, $3 queue lower bounds, $4 priorities, $5 priority lower bounds,
-- $6 payload bytes, $7 each queue's own priority (NULL: drawn from $4).
INSERT INTO jobs_hot (queue, type, payload, priority, status, created_at, created_by)
SELECT ($2::text[])[q],
       'bench',
       repeat('x', $6::int),
       COALESCE(($7::int[])[q], ($4::int[])[width_bucket(random(), $5::float8[])]),
       0,
       now() - make_interval(secs => drawn.age_us / 1e6),
       'claimbench-producer'
FROM (SELECT a.age_us, width_bucket(random(), $3::float8[]) AS q
      FROM unnest($1::bigint[]) AS a (age_us)) AS drawn
