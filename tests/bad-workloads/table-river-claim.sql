UPDATE river_job SET state = 'running', worker = :worker_id
WHERE id IN (SELECT id FROM river_job WHERE state = 'available' LIMIT :batch
             FOR UPDATE SKIP LOCKED)
RETURNING id
