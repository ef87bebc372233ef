-- After a trial: the queue of every job of the capped queues, wherever the job ended, for
-- the ledger's exact max-workers figures (the cleanup job's removed rows included;
-- seeded archive history, ids below 1, left out). $1 the capped queues' names.
SELECT id, queue FROM jobs_hot WHERE queue = ANY($1)
UNION ALL
SELECT id, queue FROM jobs_archive WHERE queue = ANY($1) AND id >= 1
UNION ALL
SELECT id, queue FROM jobs_cleaned WHERE queue = ANY($1)
UNION ALL
SELECT id, queue FROM jobs_dead_letter WHERE queue = ANY($1)
