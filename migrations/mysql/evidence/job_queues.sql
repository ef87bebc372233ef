-- After a trial: the queue of every job of the capped queues, wherever the job ended, for
-- the ledger's exact max-workers figures (the cleanup job's removed rows included). ? the capped queues' names as a JSON array.
SELECT j.id, j.queue
FROM (SELECT id, queue FROM jobs_hot
      UNION ALL
      SELECT id, queue FROM jobs_archive
      UNION ALL
      SELECT id, queue FROM jobs_cleaned
      UNION ALL
      SELECT id, queue FROM jobs_dead_letter) j
WHERE JSON_CONTAINS(?, JSON_QUOTE(j.queue))
