-- production: the seed's FetchNextBatch, ported to MySQL 8 / MariaDB 10.6+.
-- One short transaction: a read of each capped queue's room, one locking read that skips
-- locked rows, the pick, an UPDATE of the picked ids, COMMIT. Five round trips where
-- PostgreSQL needs one.
--
-- It claims exactly the rows the seed's statement claims (src/model.rs is the seed's
-- pick as a pure function; the behavioural suite checks this claim against it on
-- generated states). Where the port differs from the SQL Server original, and why:
-- 1. Several statements, not one. MySQL has no UPDATE ... OUTPUT/RETURNING, and rejects
--    `UPDATE ... WHERE id IN (SELECT ... LIMIT n)` (error 1235, LIMIT in an IN subquery)
--    as well as an UPDATE that reads its own table in a subquery (error 1093). So the
--    claim locks its rows with a SELECT, then updates them by id in the same transaction.
--    The rows stay locked from the SELECT to the COMMIT, so no other claim can take them.
-- 2. No ROW_NUMBER() in the locking read: InnoDB locks every row a locking read reads
--    before a window function or LIMIT applies, so ranking every eligible row would lock
--    the whole backlog. The seed keeps a row of rank r in its queue when active + r <=
--    max workers, so a capped queue contributes at most its room (max workers - active)
--    rows, its first in fetch order, and an uncapped queue any number. The port reads
--    each capped queue's room first (step `capacity`, without locks), then locks the
--    first `batch` rows of the uncapped queues and the first `room` rows of each capped
--    queue with room, in one UNION ALL (step `lock`, one branch `lock-capped` per such
--    queue), and the client keeps the first `batch` of them in fetch order (step `pick`).
--    Rows locked but not picked are released by the COMMIT.
-- 3. Ties in (priority, due time), which the seed leaves to the server, are broken by
--    id: the fetch-order index ends with id so InnoDB reads rows in the whole order.
-- 4. Queue eligibility is a NOT EXISTS subquery, not a join: InnoDB locks the rows of
--    every table joined in a locking read, so a join to `queues` would lock the queue row
--    and make every other claimer SKIP (and so lose) all of that queue's jobs. Subqueries
--    are read without locks. The seed's truth table holds: a job whose queue has no row,
--    or a row that is neither paused nor inactive, is eligible.
-- 5. Both SKIP LOCKED and READPAST skip rows another transaction has locked. But an
--    InnoDB locking read keeps every row it read locked until COMMIT, also at READ
--    COMMITTED and also when the row failed a condition the server checks after reading
--    it (measured on MariaDB 10.11: a free-queue branch that passed over five rows of a
--    capped queue held them, and a concurrent claim's branch for that queue skipped all
--    five). So a claim holds, besides its batch, the rows it passed over: other queues'
--    rows ahead of its branch's rows in fetch order, and higher-priority rows not yet
--    due. A concurrent claim skips those, as READPAST skips the rows the seed's
--    `Candidates` U-locks. Without an index that yields the fetch order (the pk-only and
--    status-created layouts) a branch reads and locks every pending row before the sort;
--    concurrent claimers then skip everything and come back empty.
-- 6. The committed active counts are not a semaphore: concurrent claims can overshoot
--    max workers, as in the seed; the ledger measures by how much, exactly.
-- step: begin
START TRANSACTION
-- step: capacity
-- ? batch limit. Each eligible capped queue with room left, its room capped at the batch:
-- a committed, unlocked read, like the seed's ActiveCounts CTE.
SELECT q.name, GREATEST(LEAST(q.max_workers - COUNT(a.id), ?), 0) AS room
FROM queues q
LEFT JOIN jobs_hot a ON a.queue = q.name AND a.status IN (1, 2)
WHERE q.max_workers IS NOT NULL
  AND NOT q.is_paused
  AND q.is_active
GROUP BY q.name, q.max_workers
HAVING room > 0
ORDER BY q.name
-- step: lock
-- ? batch limit: the first rows in fetch order of every queue without max workers.
-- Returns the seed's OUTPUT columns (the locked rows, before the UPDATE) and the queue
-- wait in microseconds (NOW(6) is the statement's start, the same in every branch, so
-- a larger wait is an earlier due time).
(SELECT h.id, h.queue, h.type, h.payload, h.tags, h.idempotency_key, h.priority,
        h.status, h.attempt_count, h.worker_id, h.heartbeat_at, h.scheduled_at,
        h.created_at, h.started_at, h.last_updated_at, h.created_by, h.last_modified_by,
        TIMESTAMPDIFF(MICROSECOND, h.due_at, NOW(6)) AS queue_wait_us
 FROM jobs_hot h
 WHERE h.status = 0
   AND (h.scheduled_at IS NULL OR h.scheduled_at <= NOW(6))
   AND NOT EXISTS (SELECT 1 FROM queues p
                   WHERE p.name = h.queue
                     AND (p.is_paused OR NOT p.is_active OR p.max_workers IS NOT NULL))
 ORDER BY h.priority DESC, h.due_at ASC, h.id ASC
 LIMIT ?
 FOR UPDATE SKIP LOCKED)
-- step: lock-capped
-- Appended to `lock` once per queue the capacity step returned, in its order.
-- ? queue name, ? its room: the queue's first `room` rows in fetch order.
UNION ALL
(SELECT h.id, h.queue, h.type, h.payload, h.tags, h.idempotency_key, h.priority,
        h.status, h.attempt_count, h.worker_id, h.heartbeat_at, h.scheduled_at,
        h.created_at, h.started_at, h.last_updated_at, h.created_by, h.last_modified_by,
        TIMESTAMPDIFF(MICROSECOND, h.due_at, NOW(6)) AS queue_wait_us
 FROM jobs_hot h
 WHERE h.queue = ?
   AND h.status = 0
   AND (h.scheduled_at IS NULL OR h.scheduled_at <= NOW(6))
 ORDER BY h.priority DESC, h.due_at ASC, h.id ASC
 LIMIT ?
 FOR UPDATE SKIP LOCKED)
-- step: pick
-- (client) The locked rows in fetch order, priority desc, queue wait desc (due time
-- asc), id asc; the first `batch` are claimed.
-- step: claim
-- ? worker id, then the picked ids. `:ids` stands for `batch` placeholders; ids beyond
-- those picked are bound to 0, which no job has, so one prepared statement serves
-- every claim of a trial.
UPDATE jobs_hot
SET status = 1,
    worker_id = ?,
    last_updated_at = NOW(6)
WHERE id IN (:ids)
-- step: commit
COMMIT
