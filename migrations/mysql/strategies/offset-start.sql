-- offset-start: production's skip-locked claim, but each claim starts at a random
-- offset among the first K eligible rows in fetch order and takes its batch from there,
-- wrapping to the head when the rows after the start run short. The usual advice for
-- pollers that all fight over the oldest rows: spread their starts. No per-queue cap.
-- One short transaction: `start`, `after`, `before` only when `after` came back short,
-- then production's `claim` UPDATE of the locked ids and COMMIT.
--
-- An InnoDB locking read keeps every row it read locked until COMMIT, also the rows a
-- condition then dropped (production.sql, note 5), so the documented shortcut written
-- as OFFSET inside the locking read would hold the K rows before its start, and every
-- other claimer would skip them. So:
-- 1. The start is read without locks (`start`): its fetch-order key (priority, due time,
--    id). The client draws the offset below K; an offset past the eligible rows reads
--    the head's key instead (offset 0), as the model does.
-- 2. The locking reads bound the index by that key with ranges the optimizer can seek:
--    an OR of three ranges, each an equality prefix of (status, priority, due_at, id)
--    and one bound. A row constructor `(priority, due_at, id) >= (...)`, or an OR with
--    a row comparison inside, is planned on MariaDB 10.11 as a range on (status,
--    priority) alone, read from the head of the start's priority, and every row of
--    that priority before the start is read and locked.
-- 3. Each locking read forces the fetch-order index ({force_index}, filled by the
--    session), and writes its status test `status >= 0 AND status <= 0`, not
--    `status = 0`. Without the hint MariaDB chose, by statistics, a scan of the whole
--    table and a sort (every matching row read and locked, the rows before the start
--    too for `before`), on about half the claims of a hot table of pending rows only.
--    With an equality on status the forced index may still be read by ref access on
--    (status) alone, from the head of the pending rows, with the ranges as a filter:
--    every row before the start locked. A range on status leaves no ref access, and
--    the ORDER BY starts with status so the range still yields the fetch order
--    (without it the range is read whole and sorted). On a layout without the index
--    (pk-only, status-created) the session prepares the reads without the hint, and
--    they read and lock every pending row, as production's locking read does there.
-- 4. `after` (the rows from the start on) and `before` (the rows ahead of it, read only
--    when `after` came back short) are two statements, not one UNION ALL: a branch run
--    for nothing would still lock its rows.
-- What it gives up is order: a claim takes rows up to K - 1 places behind the head while
-- older rows wait, so the oldest pending job ages more, and jobs are claimed out of
-- fetch order (the queue-wait and oldest-pending columns show the cost).
-- The behavioural suite holds this claim to model::offset_pick (src/model.rs) on
-- generated states, and checks that a production claim beside a deep start still gets
-- the head.
-- step: start
-- ? the offset, below K. A committed, unlocked read, like production's capacity step.
SELECT h.priority, h.due_at, h.id
FROM jobs_hot h
WHERE h.status = 0
  AND (h.scheduled_at IS NULL OR h.scheduled_at <= NOW(6))
  AND NOT EXISTS (SELECT 1 FROM queues p
                  WHERE p.name = h.queue AND (p.is_paused OR NOT p.is_active))
ORDER BY h.priority DESC, h.due_at ASC, h.id ASC
LIMIT 1 OFFSET ?
-- step: after
-- The start's key: ? priority, ? due time, ? id, ? priority, ? due time, ? priority;
-- then ? batch limit. Production's columns (its OUTPUT order, then the queue wait).
SELECT h.id, h.queue, h.type, h.payload, h.tags, h.idempotency_key, h.priority,
       h.status, h.attempt_count, h.worker_id, h.heartbeat_at, h.scheduled_at,
       h.created_at, h.started_at, h.last_updated_at, h.created_by, h.last_modified_by,
       TIMESTAMPDIFF(MICROSECOND, h.due_at, NOW(6)) AS queue_wait_us
FROM jobs_hot h {force_index}
WHERE h.status >= 0 AND h.status <= 0
  AND ((h.priority = ? AND h.due_at = ? AND h.id >= ?)
       OR (h.priority = ? AND h.due_at > ?)
       OR h.priority < ?)
  AND (h.scheduled_at IS NULL OR h.scheduled_at <= NOW(6))
  AND NOT EXISTS (SELECT 1 FROM queues p
                  WHERE p.name = h.queue AND (p.is_paused OR NOT p.is_active))
ORDER BY h.status, h.priority DESC, h.due_at ASC, h.id ASC
LIMIT ?
FOR UPDATE SKIP LOCKED
-- step: before
-- The start's key: ? priority, ? priority, ? due time, ? priority, ? due time, ? id;
-- then ? the rows `after` left short. The rows ahead of the start, from the head.
SELECT h.id, h.queue, h.type, h.payload, h.tags, h.idempotency_key, h.priority,
       h.status, h.attempt_count, h.worker_id, h.heartbeat_at, h.scheduled_at,
       h.created_at, h.started_at, h.last_updated_at, h.created_by, h.last_modified_by,
       TIMESTAMPDIFF(MICROSECOND, h.due_at, NOW(6)) AS queue_wait_us
FROM jobs_hot h {force_index}
WHERE h.status >= 0 AND h.status <= 0
  AND (h.priority > ?
       OR (h.priority = ? AND h.due_at < ?)
       OR (h.priority = ? AND h.due_at = ? AND h.id < ?))
  AND (h.scheduled_at IS NULL OR h.scheduled_at <= NOW(6))
  AND NOT EXISTS (SELECT 1 FROM queues p
                  WHERE p.name = h.queue AND (p.is_paused OR NOT p.is_active))
ORDER BY h.status, h.priority DESC, h.due_at ASC, h.id ASC
LIMIT ?
FOR UPDATE SKIP LOCKED
