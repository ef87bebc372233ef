-- The handler's side effect on a declared table (docs/strategies.md, Your own table):
-- the table is the team's, so nothing of it is read here; whether the worker still
-- owned the job is its complete step's answer, and the effects row is written as the
-- worker saw the run, start and finish on the worker's clock (µs since the epoch), so
-- that two runs of one job are compared on one clock.
-- $1 job id, $2 attempt (the claim's), $3 worker id, $4 outcome (0 ok, 1 failed),
-- $5 start, $6 token, $7 finish, $8 the queue the worker's claim asked for (NULL when
-- the claim binds no :queue): the per-queue completions' only source. Returns the finish
-- time and true (owned).
INSERT INTO effects (job_id, attempt, worker_id, outcome, started_at, finished_at, owned, token,
                     queue)
VALUES ($1, $2, $3, $4,
        'epoch'::timestamptz + $5::bigint * interval '1 microsecond',
        'epoch'::timestamptz + $7::bigint * interval '1 microsecond',
        true, $6, $8::text)
RETURNING (extract(epoch FROM finished_at) * 1000000)::bigint, owned
