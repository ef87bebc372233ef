-- waiting: the production claim with a lock that waits (FOR UPDATE without SKIP LOCKED).
--
-- Identical to production.sql but for the lock clauses: a worker that meets a row locked
-- by another claim waits for that transaction to end (up to innodb_lock_wait_timeout),
-- then re-reads the row; it is no longer pending, so it drops out and the scan goes on.
-- Workers queue behind each other on the first rows in fetch order: the convoy the seed
-- avoids with READPAST. Every claim locks its branches in the same order (uncapped
-- queues, then capped queues by name), so two waiting claims never wait in a cycle.
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
 FOR UPDATE)
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
 FOR UPDATE)
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
