-- The model check's statements (`prove` of a declared claim that names its reference
-- model): a generated table state loaded in place of the seed, and the rows other
-- claims in flight hold while the claim runs. DELETE, not TRUNCATE, so the triggers
-- of a declared setup step keep its own tables in step.

-- step: clear
DELETE FROM jobs_hot; DELETE FROM queues

-- step: now
-- One `now` for every row: NOW(6) is read per statement, and the state's ties (which
-- the model breaks by id) must reach the server as ties.
SET @now = NOW(6)

-- A state's rows go in one INSERT per table, its `:rows` replaced by the row step's
-- placeholders once per row: one round trip, where a row at a time cost the model
-- check most of its time. (Row steps hold no comment: they are repeated inside one.)

-- step: queues
INSERT INTO queues (name, is_paused, is_active, max_workers) VALUES :rows

-- step: queue-row
(?, ?, ?, ?)

-- step: jobs
-- Each row: id, queue, priority, status, creation and scheduled time in seconds from
-- @now (NULL: not scheduled); a row that is not pending belongs to another worker.
INSERT INTO jobs_hot (id, queue, type, payload, priority, status, worker_id, created_at, scheduled_at)
VALUES :rows

-- step: job-row
(?, ?, 'bench', '', ?, ?, IF(? > 0, 'other', NULL), @now + INTERVAL ? SECOND, @now + INTERVAL ? SECOND)

-- step: hold
-- Inside a transaction: the rows of claims in flight, by primary key (a locking read
-- of a secondary index would keep every row it read locked, not only these).
SELECT id FROM jobs_hot FORCE INDEX (PRIMARY) WHERE id IN (:ids) FOR UPDATE
