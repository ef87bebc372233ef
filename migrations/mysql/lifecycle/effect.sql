-- The simulated handler's side effect. ? job id, ? attempt (attempt_count at claim),
-- ? worker id, ? outcome (0 ok, 1 failed).
INSERT INTO effects (job_id, attempt, worker_id, outcome) VALUES (?, ?, ?, ?)
