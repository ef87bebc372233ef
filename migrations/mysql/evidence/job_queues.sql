-- After a trial: the queue of every job of the capped queues, wherever the job ended, for
-- the ledger's exact max-workers figures. ? the capped queues' names as a JSON array.
SELECT id, queue FROM jobs_hot WHERE JSON_CONTAINS(?, JSON_QUOTE(queue))
UNION ALL
SELECT id, queue FROM jobs_archive WHERE JSON_CONTAINS(?, JSON_QUOTE(queue))
UNION ALL
SELECT id, queue FROM jobs_dead_letter WHERE JSON_CONTAINS(?, JSON_QUOTE(queue))
