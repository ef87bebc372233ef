-- After a trial: the queue of every job of the capped queues, wherever the job ended, for
-- the ledger's exact max-workers figures (the cleanup job's removed rows included;
-- seeded archive history, ids below 1, left out; under storage = "delete", a job whose
-- row is gone by the queue its runs' effects kept). $1 the capped queues' names.
SELECT id, queue FROM jobs_hot WHERE queue = ANY($1)
UNION ALL
SELECT id, queue FROM jobs_archive WHERE queue = ANY($1) AND id >= 1
UNION ALL
SELECT id, queue FROM jobs_cleaned WHERE queue = ANY($1)
UNION ALL
SELECT id, queue FROM jobs_dead_letter WHERE queue = ANY($1)
UNION ALL
SELECT job_id, max(queue) FROM effects e
 WHERE (SELECT storage FROM claimbench_schema LIMIT 1) = 'delete'
   AND NOT EXISTS (SELECT 1 FROM jobs_hot h WHERE h.id = e.job_id)
   AND NOT EXISTS (SELECT 1 FROM jobs_dead_letter d WHERE d.id = e.job_id)
 GROUP BY job_id
HAVING max(queue) = ANY($1)
