-- Server-side population of the hot table: one INSERT ... SELECT, no client round trip
-- per row. Ids are 1..n in creation order. Deterministic for a given seed: each row's
-- four uniform numbers are four 32-bit slices of MD5(seed, row number). Not RAND(seed): RAND's
-- streams for different seeds are linear in each other, and with them queue, priority and
-- schedule came out correlated.
-- ? rows, ? seed, ? payload bytes, ? share scheduled in the future, ? microseconds
-- within which scheduled jobs become due.
INSERT INTO jobs_hot (id, queue, type, payload, priority, status, scheduled_at, created_at, created_by)
WITH RECURSIVE g (n) AS (
    SELECT 1
    UNION ALL
    SELECT n + 1 FROM g WHERE n < ?
),
h AS (
    SELECT n, MD5(CONCAT(?, ':', n)) AS md5 FROM g
),
r AS (
    SELECT n,
           CONV(SUBSTR(md5, 1, 8), 16, 10) / 4294967296 AS rq,
           CONV(SUBSTR(md5, 9, 8), 16, 10) / 4294967296 AS rp,
           CONV(SUBSTR(md5, 17, 8), 16, 10) / 4294967296 AS rs,
           CONV(SUBSTR(md5, 25, 8), 16, 10) / 4294967296 AS rw
    FROM h
)
SELECT r.n,
       (SELECT sq.name FROM seed_queues sq WHERE sq.lo <= r.rq ORDER BY sq.lo DESC, sq.ord DESC LIMIT 1),
       'bench',
       REPEAT('x', ?),
       COALESCE((SELECT sq.priority FROM seed_queues sq WHERE sq.lo <= r.rq ORDER BY sq.lo DESC, sq.ord DESC LIMIT 1),
                (SELECT sp.value FROM seed_priorities sp WHERE sp.lo <= r.rp ORDER BY sp.lo DESC, sp.ord DESC LIMIT 1)),
       0,
       CASE WHEN r.rs < ? THEN NOW(6) + INTERVAL FLOOR(r.rw * ?) MICROSECOND END,
       NOW(6),
       'claimbench'
FROM r
ORDER BY r.n
