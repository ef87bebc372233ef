-- Runs after seed.sql: the hot table's primary key, and the identity sequence moved past
-- the seeded ids so producers continue from there.
ALTER TABLE jobs_hot ADD PRIMARY KEY (id);
SELECT setval(pg_get_serial_sequence('jobs_hot', 'id'),
              COALESCE((SELECT max(id) FROM jobs_hot), 0) + 1, false);
