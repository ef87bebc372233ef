-- production: the seed's FetchNextBatch, ported to MySQL 8 / MariaDB 10.6+.
-- One short transaction: a locking read that skips locked rows, the bulkhead check, an
-- UPDATE of the picked ids, COMMIT. Four round trips where PostgreSQL needs one.
--
-- Where the port differs from the SQL Server original, and why:
-- 1. Two statements, not one. MySQL has no UPDATE ... OUTPUT/RETURNING, and rejects
--    `UPDATE ... WHERE id IN (SELECT ... LIMIT n)` (error 1235, LIMIT in an IN subquery)
--    as well as an UPDATE that reads its own table in a subquery (error 1093). So the
--    claim locks its rows with a SELECT, then updates them by id in the same transaction.
--    The rows stay locked from the SELECT to the COMMIT, so no other claim can take them.
-- 2. The seed's ROW_NUMBER() per queue and capacity check run in the client, on the rows
--    the SELECT locked (step `pick` below). Ranking in SQL would need a window function
--    over every eligible row, and a locking read locks every row it reads before the
--    window and LIMIT apply: one claim would lock the whole backlog. The SELECT reads at
--    most a window of 4 x batch rows in fetch order, as the PostgreSQL port does, and
--    returns each row's queue capacity left (`room`) for the client to rank against.
-- 3. Queue eligibility is a NOT EXISTS subquery, and active counts come from a derived
--    table, not from joins: InnoDB locks the rows of every table joined in a locking
--    read, so a join to `queues` would lock the queue row and make every other claimer
--    SKIP (and so lose) all of that queue's jobs. Subqueries and derived tables are read
--    without locks.
-- 4. Eligibility keeps the seed's truth table: a job whose queue has no row, or a row
--    that is neither paused nor inactive, is eligible.
-- 5. Both SKIP LOCKED and READPAST skip rows another transaction has locked. InnoDB
--    does not escalate row locks, but without an index that yields the fetch order (the
--    pk-only and status-created layouts) the SELECT sorts all pending rows and locks
--    every one it read until COMMIT; concurrent claimers then skip everything and come
--    back empty.
-- 6. The committed active counts are not a semaphore: concurrent claims can overshoot
--    max workers, as in the seed; the sampler measures by how much.
-- step: begin
START TRANSACTION
-- step: lock
-- ? candidate window (rows locked before ranking). Returns the seed's OUTPUT columns
-- (the locked rows, before the UPDATE), the queue wait in microseconds, and the queue's
-- capacity left (NULL: no max workers).
SELECT h.id, h.queue, h.type, h.payload, h.tags, h.idempotency_key, h.priority,
       h.status, h.attempt_count, h.worker_id, h.heartbeat_at, h.scheduled_at,
       h.created_at, h.started_at, h.last_updated_at, h.created_by, h.last_modified_by,
       TIMESTAMPDIFF(MICROSECOND, h.due_at, NOW(6)) AS queue_wait_us,
       cap.room
FROM jobs_hot h
LEFT JOIN (
    SELECT q.name, q.max_workers - COUNT(a.id) AS room
    FROM queues q
    LEFT JOIN jobs_hot a ON a.queue = q.name AND a.status IN (1, 2)
    WHERE q.max_workers IS NOT NULL
    GROUP BY q.name, q.max_workers
) cap ON cap.name = h.queue
WHERE h.status = 0
  AND (h.scheduled_at IS NULL OR h.scheduled_at <= NOW(6))
  AND NOT EXISTS (SELECT 1 FROM queues p
                  WHERE p.name = h.queue AND (p.is_paused OR NOT p.is_active))
ORDER BY h.priority DESC, h.due_at ASC
LIMIT ?
FOR UPDATE SKIP LOCKED
-- step: pick
-- (client) In fetch order, the n-th locked row of its queue is picked when the queue has
-- no max workers (room IS NULL) or n <= room, until `batch` rows are picked: the seed's
-- `current_active + queue_rank <= max_workers`. Locked rows not picked are released by
-- the COMMIT.
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
