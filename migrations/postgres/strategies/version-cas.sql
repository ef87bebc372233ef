-- version-cas: compare-and-set on a version column, the claim of stores that have
-- conditional writes but no row locks to skip (DynamoDB's condition expressions,
-- Cassandra's lightweight transactions) and of schedulers' optimistic modes (db-scheduler
-- without SKIP LOCKED, Quartz). Read candidates and their versions without locks, then
-- claim them with one UPDATE that changes a row only while its version is still the one
-- read, and bumps it. A candidate whose version moved is a lost race: another worker
-- claimed it first. No duplicates, but workers that read the same candidates collide,
-- as in `conditional`.
-- The check is the version alone, as in those stores: it is sound because every way out
-- of pending is a claim, and this claim bumps the version, so a row still at the version
-- read has not left pending since (a job put back by fail or rescue keeps its bumped
-- version, so an old read cannot take it). A writer that took rows out of pending without
-- bumping the version would break that; no other strategy shares a trial with this one.
-- The same eligibility and fetch order as production; no per-queue cap.
-- step: select
-- $1 batch limit. Returns each candidate's id and version.
SELECT h.id, h.version
FROM jobs_hot h
LEFT JOIN queues q ON q.name = h.queue
WHERE h.status = 0
  AND q.is_paused IS NOT TRUE
  AND q.is_active IS NOT FALSE
  AND (h.scheduled_at IS NULL OR h.scheduled_at <= now())
ORDER BY h.priority DESC, COALESCE(h.scheduled_at, h.created_at) ASC, h.id ASC
LIMIT $1
-- step: claim-batch
-- $1 the ids read, $2 their versions (same order), $3 worker id. One statement for the
-- whole batch; each returned row is claimed, each missing id lost its race. A row another
-- claim is changing makes this wait for that transaction's end, then re-check the version
-- on the row it left (READ COMMITTED's re-check), so a committed rival's claim loses it.
UPDATE jobs_hot h
SET status = 1,
    worker_id = $3,
    version = h.version + 1,
    last_updated_at = now()
FROM unnest($1::bigint[], $2::bigint[]) AS c(id, version)
WHERE h.id = c.id
  AND h.version = c.version
RETURNING h.id, h.queue, h.type, h.payload, h.tags, h.idempotency_key, h.priority,
          h.status, h.attempt_count, h.worker_id, h.heartbeat_at, h.scheduled_at,
          h.created_at, h.started_at, h.last_updated_at, h.created_by, h.last_modified_by,
          (extract(epoch FROM clock_timestamp() - COALESCE(h.scheduled_at, h.created_at))
           * 1000000)::bigint AS queue_wait_us
