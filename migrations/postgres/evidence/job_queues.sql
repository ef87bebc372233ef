-- After a trial: the queue of every job of the capped queues, wherever the job ended, for
-- the ledger's exact max-workers figures. $1 the capped queues' names.
SELECT id, queue FROM jobs_hot WHERE queue = ANY($1)
UNION ALL
SELECT id, queue FROM jobs_archive WHERE queue = ANY($1)
UNION ALL
SELECT id, queue FROM jobs_dead_letter WHERE queue = ANY($1)
