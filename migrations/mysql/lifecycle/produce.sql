-- produce: an open-loop producer's insert of ? new jobs with ? payload bytes, job n
-- created (? - (n - 1) * ?) microseconds before now: the intended arrival times, oldest
-- first, spread evenly between the first and the last of the batch (a late producer
-- shows in queue wait).
-- Queue and priority follow the workload's weights (seed_queues, seed_priorities).
INSERT INTO jobs_hot (queue, type, payload, priority, status, created_at, created_by)
WITH RECURSIVE g (n) AS (
    SELECT 1
    UNION ALL
    SELECT n + 1 FROM g WHERE n < ?
),
r AS (
    SELECT n, RAND() AS rq, RAND() AS rp FROM g
)
SELECT (SELECT sq.name FROM seed_queues sq WHERE sq.lo <= r.rq ORDER BY sq.lo DESC, sq.ord DESC LIMIT 1),
       'bench',
       REPEAT('x', ?),
       COALESCE((SELECT sq.priority FROM seed_queues sq WHERE sq.lo <= r.rq ORDER BY sq.lo DESC, sq.ord DESC LIMIT 1),
                (SELECT sp.value FROM seed_priorities sp WHERE sp.lo <= r.rp ORDER BY sp.lo DESC, sp.ord DESC LIMIT 1)),
       0,
       NOW(6) - INTERVAL ROUND(? - (r.n - 1) * ?) MICROSECOND,
       'claimbench-producer'
FROM r
