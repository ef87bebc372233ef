-- conditional: read candidates without locks, then claim each with a conditional UPDATE
-- that puts the expected state in its WHERE clause. An affected-row count of 0 is a lost
-- race (another worker changed the row first); the worker skips that id. Safe, but one
-- round trip per candidate, and workers that read the same candidates collide.
-- The expected state includes the attempt count read, so a job that was claimed,
-- failed and put back meanwhile is not claimed under its old attempt.
-- step: select
-- $1 batch limit. Returns each candidate's id and attempt count.
SELECT h.id, h.attempt_count
FROM jobs_hot h
LEFT JOIN queues q ON q.name = h.queue
WHERE h.status = 0
  AND q.is_paused IS NOT TRUE
  AND q.is_active IS NOT FALSE
  AND (h.scheduled_at IS NULL OR h.scheduled_at <= now())
ORDER BY h.priority DESC, COALESCE(h.scheduled_at, h.created_at) ASC, h.id ASC
LIMIT $1
-- step: claim-one
-- $1 one candidate id, $2 worker id, $3 its attempt count as read. Sent once per
-- candidate; a returned row = claimed, none = lost the race.
UPDATE jobs_hot h
SET status = 1,
    worker_id = $2,
    last_updated_at = now()
WHERE h.id = $1
  AND h.status = 0
  AND h.attempt_count = $3
RETURNING h.id, h.queue, h.type, h.payload, h.tags, h.idempotency_key, h.priority,
          h.status, h.attempt_count, h.worker_id, h.heartbeat_at, h.scheduled_at,
          h.created_at, h.started_at, h.last_updated_at, h.created_by, h.last_modified_by,
          (extract(epoch FROM clock_timestamp() - COALESCE(h.scheduled_at, h.created_at))
           * 1000000)::bigint AS queue_wait_us
