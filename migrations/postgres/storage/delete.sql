-- The delete storage model (storage = "delete"): a finished job's row is deleted from
-- jobs_hot and kept nowhere, the design of a queue that records nothing of what it ran.
-- A dead job still moves to jobs_dead_letter (lifecycle/fail.sql, shared), as such a
-- design keeps what it could not run. The steps replace lifecycle/complete.sql and
-- lifecycle/complete_batch.sql and answer as they do. What counts the completions after
-- the trial is the effects table (schema.sql): a job with a successful run whose row is
-- in neither jobs_hot nor jobs_dead_letter (evidence/).

-- step: complete
-- Only if this worker still owns the row. $1 job id, $2 worker id. 1 row changed =
-- completed; 0 = ownership was lost.
DELETE FROM jobs_hot
WHERE id = $1 AND worker_id = $2

-- step: complete-batch
-- Every finished row of a batch this worker still owns (handler.complete = "batched").
-- $1 job ids, $2 worker id. Returns the ids completed.
DELETE FROM jobs_hot
WHERE id = ANY($1) AND worker_id = $2
RETURNING id
