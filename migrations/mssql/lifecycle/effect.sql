-- The simulated handler's side effect. @P1 job id, @P2 attempt (AttemptCount at claim),
-- @P3 worker id, @P4 outcome (0 ok, 1 failed).
INSERT INTO [{SCHEMA}].[Effects] ([JobId], [Attempt], [WorkerId], [Outcome])
VALUES (@P1, @P2, @P3, @P4);
