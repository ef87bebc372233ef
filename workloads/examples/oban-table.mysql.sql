-- oban-table.sql's table and lifecycle on MySQL/MariaDB, in the shape of Oban's MySQL
-- engine (Dolphin): oban_jobs with its states as an ENUM, JSON columns and the fetch
-- index, written for this example; timestamps in UTC, as Oban keeps them (claimbench's
-- MySQL sessions run in UTC, so NOW(6) is UTC). MySQL has no UPDATE … RETURNING: a step
-- that gives jobs back is a locking read of their ids (`requeue-lock`, `rescue-lock`)
-- and an UPDATE of those ids, run in one transaction. claimbench runs each step as the
-- workload's account: docs/strategies.md, Your own table.
-- step: ddl
CREATE TABLE oban_jobs (
    id           BIGINT       NOT NULL AUTO_INCREMENT PRIMARY KEY,
    state        ENUM('available', 'scheduled', 'executing', 'retryable', 'completed',
                      'discarded', 'cancelled') NOT NULL DEFAULT 'available',
    queue        VARCHAR(255) NOT NULL DEFAULT 'default',
    worker       VARCHAR(255) NOT NULL,
    args         JSON         NOT NULL DEFAULT (JSON_OBJECT()),
    meta         JSON                  DEFAULT (JSON_OBJECT()),
    tags         JSON                  DEFAULT (JSON_ARRAY()),
    errors       JSON                  DEFAULT (JSON_ARRAY()),
    attempt      INT          NOT NULL DEFAULT 0,
    max_attempts INT          NOT NULL DEFAULT 20,
    priority     TINYINT      NOT NULL DEFAULT 0,
    attempted_by JSON,
    inserted_at  DATETIME(6)  NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
    scheduled_at DATETIME(6)  NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
    attempted_at DATETIME(6),
    cancelled_at DATETIME(6),
    completed_at DATETIME(6),
    discarded_at DATETIME(6),
    CONSTRAINT attempt_range CHECK (attempt >= 0 AND attempt <= max_attempts),
    CONSTRAINT positive_max_attempts CHECK (max_attempts > 0),
    CONSTRAINT non_negative_priority CHECK (priority >= 0),
    INDEX oban_jobs_state_queue_priority_scheduled_at_id_index
        (state, queue, priority, scheduled_at, id)
) ENGINE = InnoDB;
-- step: seed
-- claimbench's seeded rows in this table's shape, as oban-table.sql writes them: a
-- pending job due later is 'scheduled'; claimbench's priorities, highest first, become
-- Oban's, 0 first.
INSERT INTO oban_jobs (id, state, queue, worker, args, attempt, inserted_at, scheduled_at,
                       attempted_at, attempted_by, priority)
SELECT id,
       CASE WHEN status <> 0 THEN 'executing'
            WHEN COALESCE(scheduled_at, created_at) <= NOW(6) THEN 'available'
            ELSE 'scheduled' END,
       queue, type, JSON_OBJECT('payload', payload),
       IF(status <> 0, 1, 0),
       created_at, COALESCE(scheduled_at, created_at),
       IF(status <> 0, NOW(6), NULL),
       IF(status <> 0, JSON_ARRAY('another-node'), NULL),
       CASE WHEN priority >= 20 THEN 0 WHEN priority >= 10 THEN 1 WHEN priority >= 5 THEN 2
            ELSE 3 END
FROM jobs_hot
-- step: enqueue
-- Oban's insert_all: the producer's jobs, each due its age ago. The arrays come as
-- JSON, joined by their position.
INSERT INTO oban_jobs (state, queue, worker, args, inserted_at, scheduled_at, priority)
SELECT 'available', q.queue, 'Bench.Worker',
       JSON_OBJECT('payload', REPEAT('x', :payload_bytes)),
       NOW(6) - INTERVAL a.age_us MICROSECOND, NOW(6) - INTERVAL a.age_us MICROSECOND,
       CASE WHEN p.priority >= 20 THEN 0 WHEN p.priority >= 10 THEN 1
            WHEN p.priority >= 5 THEN 2 ELSE 3 END
FROM JSON_TABLE(:ages_us, '$[*]' COLUMNS (n FOR ORDINALITY, age_us BIGINT PATH '$')) a
JOIN JSON_TABLE(:queues, '$[*]' COLUMNS (n FOR ORDINALITY, queue VARCHAR(255) PATH '$')) q
  ON q.n = a.n
JOIN JSON_TABLE(:priorities, '$[*]' COLUMNS (n FOR ORDINALITY, priority INT PATH '$')) p
  ON p.n = a.n
-- step: complete
-- Oban completes a job by its id alone: it does not check that the job is still
-- executing, or whose it is.
UPDATE oban_jobs SET state = 'completed', completed_at = NOW(6)
WHERE id = :id
-- step: fail
-- Oban records the error and makes the job retryable after its backoff, or discards it
-- on its last attempt (the attempt its claim counted). MySQL assigns left to right, so
-- the error is appended before the state and attempt it reads change.
UPDATE oban_jobs
SET errors = JSON_ARRAY_APPEND(COALESCE(errors, JSON_ARRAY()), '$', JSON_OBJECT(
        'attempt', attempt, 'at', NOW(6), 'error', 'the handler failed')),
    discarded_at = IF(attempt >= max_attempts, NOW(6), NULL),
    scheduled_at = NOW(6) + INTERVAL ROUND(:retry_delay_s * 1000000) MICROSECOND,
    state = IF(attempt >= max_attempts, 'discarded', 'available')
WHERE id = :id AND state = 'executing'
-- step: requeue-lock
-- Jobs claimed and never started (the trial's end hands them back), still executing.
SELECT id FROM oban_jobs WHERE id IN (:ids) AND state = 'executing' FOR UPDATE
-- step: requeue
-- Available again, their claim's attempt taken back.
UPDATE oban_jobs SET state = 'available', attempt = attempt - 1, attempted_at = NULL
WHERE id IN (:ids)
-- step: rescue-lock
-- Oban's Lifeline: executing jobs whose attempt began longer ago than the lease, with
-- attempts left.
SELECT id FROM oban_jobs
WHERE state = 'executing' AND attempt < max_attempts
  AND attempted_at < NOW(6) - INTERVAL ROUND(:lease_s * 1000000) MICROSECOND
FOR UPDATE SKIP LOCKED
-- step: rescue
UPDATE oban_jobs SET state = 'available' WHERE id IN (:ids)
-- step: oldest
-- The head of each queue's claim order, one probe of the fetch index per queue.
SELECT TIMESTAMPDIFF(MICROSECOND, MIN(head), NOW(6)) / 1000.0 AS oldest_pending_ms
FROM (SELECT (SELECT scheduled_at FROM oban_jobs
              WHERE state = 'available' AND queue = 'default'
              ORDER BY priority, scheduled_at, id LIMIT 1) AS head
      UNION ALL
      SELECT (SELECT scheduled_at FROM oban_jobs
              WHERE state = 'available' AND queue = 'mailers'
              ORDER BY priority, scheduled_at, id LIMIT 1)) AS heads
-- step: counts
SELECT CAST(SUM(state IN ('available', 'scheduled', 'retryable')) AS SIGNED) AS pending,
       CAST(SUM(state = 'executing') AS SIGNED) AS running,
       CAST(SUM(state = 'completed') AS SIGNED) AS completed,
       CAST(SUM(state IN ('discarded', 'cancelled')) AS SIGNED) AS dead
FROM oban_jobs
