-- waiting: the production claim with a lock that waits (FOR UPDATE without SKIP LOCKED).
--
-- Identical to production.sql but for the lock clause: a worker that meets a row locked
-- by another claim waits for that transaction to end (up to innodb_lock_wait_timeout),
-- then re-reads the row; it is no longer pending, so it drops out and the scan goes on.
-- Workers queue behind each other on the first rows in fetch order: the convoy the seed
-- avoids with READPAST.
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
FOR UPDATE
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
