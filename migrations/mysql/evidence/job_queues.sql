-- After a trial: the queue of every job of the capped queues, wherever the job ended, for
-- the ledger's exact max-workers figures (the cleanup job's removed rows included; under
-- storage = "delete", a job whose row is gone by the queue its runs' effects kept). ? the
-- capped queues' names as a JSON array.
SELECT j.id, j.queue
FROM (SELECT id, queue FROM jobs_hot
      UNION ALL
      SELECT id, queue FROM jobs_archive
      UNION ALL
      SELECT id, queue FROM jobs_cleaned
      UNION ALL
      SELECT id, queue FROM jobs_dead_letter
      UNION ALL
      SELECT e.job_id, MAX(e.queue) FROM effects e
       WHERE (SELECT storage FROM claimbench_schema LIMIT 1) = 'delete'
         AND NOT EXISTS (SELECT 1 FROM jobs_hot h WHERE h.id = e.job_id)
         AND NOT EXISTS (SELECT 1 FROM jobs_dead_letter d WHERE d.id = e.job_id)
       GROUP BY e.job_id) j
WHERE JSON_CONTAINS(?, JSON_QUOTE(j.queue))
