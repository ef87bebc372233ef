-- The simulated handler's side effect. $1 job id, $2 attempt (attempt_count at claim),
-- $3 worker id, $4 outcome (0 ok, 1 failed).
INSERT INTO effects (job_id, attempt, worker_id, outcome) VALUES ($1, $2, $3, $4)
