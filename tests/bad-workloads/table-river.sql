-- A small declared table for the refusals around it (the example is
-- workloads/examples/river-table.sql).
-- step: ddl
CREATE TABLE river_job (id bigint PRIMARY KEY, state text NOT NULL, worker text);
-- step: seed
INSERT INTO river_job (id, state) SELECT id, 'available' FROM jobs_hot
-- step: complete
DELETE FROM river_job WHERE id = :id AND worker = :worker_id
-- step: requeue
UPDATE river_job SET state = 'available', worker = NULL WHERE id = ANY(:ids) RETURNING id
-- step: oldest
SELECT NULL::float8 AS oldest_pending_ms
-- step: counts
SELECT count(*) AS pending, 0::bigint AS running, 0::bigint AS completed, 0::bigint AS dead
FROM river_job
