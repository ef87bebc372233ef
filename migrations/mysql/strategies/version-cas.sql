-- version-cas: compare-and-set on a version column, the claim of stores that have
-- conditional writes but no row locks to skip (DynamoDB's condition expressions,
-- Cassandra's lightweight transactions) and of schedulers' optimistic modes (db-scheduler
-- without SKIP LOCKED, Quartz). Read candidates and their versions without locks, then
-- claim each with an UPDATE that changes the row only while its version is still the one
-- read, and bumps it. 0 affected rows is a lost race: another worker claimed it first.
-- One UPDATE per candidate: MySQL has no UPDATE ... RETURNING to say which rows of a
-- batched compare-and-set were won.
-- The check is the version alone, as in those stores: it is sound because every way out
-- of pending is a claim, and this claim bumps the version, so a row still at the version
-- read has not left pending since. No other strategy shares a trial with this one.
-- The same eligibility and fetch order as production; no per-queue cap.
-- step: select
-- ? batch limit. Returns the seed's OUTPUT columns and the queue wait, as read, then the
-- version.
SELECT h.id, h.queue, h.type, h.payload, h.tags, h.idempotency_key, h.priority,
       h.status, h.attempt_count, h.worker_id, h.heartbeat_at, h.scheduled_at,
       h.created_at, h.started_at, h.last_updated_at, h.created_by, h.last_modified_by,
       TIMESTAMPDIFF(MICROSECOND, h.due_at, NOW(6)) AS queue_wait_us, h.version
FROM jobs_hot h
WHERE h.status = 0
  AND (h.scheduled_at IS NULL OR h.scheduled_at <= NOW(6))
  AND NOT EXISTS (SELECT 1 FROM queues p
                  WHERE p.name = h.queue AND (p.is_paused OR NOT p.is_active))
ORDER BY h.priority DESC, h.due_at ASC, h.id ASC
LIMIT ?
-- step: claim-one
-- ? worker id, ? one candidate id, ? its version as read. Sent once per candidate;
-- 1 affected row = claimed, 0 = lost the race.
UPDATE jobs_hot
SET status = 1,
    worker_id = ?,
    version = version + 1,
    last_updated_at = NOW(6)
WHERE id = ?
  AND version = ?
