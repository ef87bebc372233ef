-- The MariaDB/MySQL form of claimed-table.sql: a narrow table of ready executions,
-- locked with SKIP LOCKED in its own index, and a table of claimed ones. MySQL's claim
-- step is one UPDATE of the job rows; the triggers the setup step makes record the
-- claim and give up the ready row in that UPDATE's transaction.
-- step: setup
CREATE TABLE ready_executions (
    job_id   BIGINT       NOT NULL PRIMARY KEY,
    queue    VARCHAR(200) NOT NULL,
    priority INT          NOT NULL,
    sort_at  DATETIME(6)  NOT NULL,
    KEY ix_ready_executions_poll (priority DESC, sort_at, job_id)
) ENGINE = InnoDB;
CREATE TABLE claimed_executions (
    job_id     BIGINT       NOT NULL PRIMARY KEY,
    process_id VARCHAR(200) NOT NULL,
    claimed_at DATETIME(6)  NOT NULL DEFAULT NOW(6)
) ENGINE = InnoDB;
INSERT INTO ready_executions (job_id, queue, priority, sort_at)
SELECT id, queue, priority, due_at FROM jobs_hot WHERE status = 0;
CREATE TRIGGER executions_on_insert AFTER INSERT ON jobs_hot FOR EACH ROW
    INSERT INTO ready_executions (job_id, queue, priority, sort_at)
    SELECT NEW.id, NEW.queue, NEW.priority, NEW.due_at FROM DUAL WHERE NEW.status = 0;
CREATE TRIGGER executions_on_update AFTER UPDATE ON jobs_hot FOR EACH ROW
BEGIN
    IF NEW.status = 0 THEN
        INSERT INTO ready_executions (job_id, queue, priority, sort_at)
        VALUES (NEW.id, NEW.queue, NEW.priority, NEW.due_at)
        ON DUPLICATE KEY UPDATE priority = NEW.priority, sort_at = NEW.due_at;
    ELSEIF OLD.status = 0 THEN
        DELETE FROM ready_executions WHERE job_id = NEW.id;
    END IF;
    IF OLD.status = 1 AND NEW.status <> 1 THEN
        DELETE FROM claimed_executions WHERE job_id = NEW.id;
    ELSEIF OLD.status = 0 AND NEW.status = 1 THEN
        INSERT INTO claimed_executions (job_id, process_id) VALUES (NEW.id, NEW.worker_id);
    END IF;
END;
CREATE TRIGGER executions_on_delete AFTER DELETE ON jobs_hot FOR EACH ROW
BEGIN
    DELETE FROM ready_executions WHERE job_id = OLD.id;
    DELETE FROM claimed_executions WHERE job_id = OLD.id;
END;
ANALYZE TABLE ready_executions
-- step: lock
-- The ready row and its job, locked (a job another transaction holds is skipped), the
-- ready table read first, in its own index.
SELECT r.job_id AS id
FROM ready_executions r FORCE INDEX (ix_ready_executions_poll)
STRAIGHT_JOIN jobs_hot j ON j.id = r.job_id
WHERE r.sort_at <= NOW(6)
  AND NOT EXISTS (SELECT 1 FROM queues p
                  WHERE p.name = r.queue AND (p.is_paused OR NOT p.is_active))
ORDER BY r.priority DESC, r.sort_at ASC, r.job_id ASC
LIMIT :batch
FOR UPDATE SKIP LOCKED
-- step: claim
UPDATE jobs_hot
SET status = 1,
    worker_id = :worker_id,
    last_updated_at = NOW(6)
WHERE id IN (:ids) AND status = 0
