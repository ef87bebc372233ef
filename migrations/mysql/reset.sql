-- A trial's reset, around schema.sql, the lifecycle procedures, seed.sql and the layout's
-- file, on the control connection. {db} is the run's database, quoted; claimbench
-- checked it is its own first.

-- step: drop-database
DROP DATABASE IF EXISTS {db}

-- step: create-database
CREATE DATABASE {db}

-- step: use-database
USE {db}

-- step: storage
-- ? the workload's storage model (archive-move, delete): the evidence read after the
-- trial (evidence/) looks here for where the finished jobs went.
INSERT INTO claimbench_schema (storage) VALUES (?)

-- step: queues
-- One row per queue of the workload: name, paused, active, max workers.
INSERT INTO queues (name, is_paused, is_active, max_workers) VALUES (?, ?, ?, ?)

-- step: seed-queues
-- One row per queue: its order, name, lower bound of its share in [0, 1), priority.
INSERT INTO seed_queues (ord, name, lo, priority) VALUES (?, ?, ?, ?)

-- step: seed-priorities
-- One row per priority: its order, value, lower bound of its share in [0, 1).
INSERT INTO seed_priorities (ord, value, lo) VALUES (?, ?, ?)

-- step: recursion-mariadb
-- {limit} rows: the recursive CTE of seed.sql makes one row per job, and MariaDB stops a
-- recursion at 1000 by default.
SET SESSION max_recursive_iterations = {limit}

-- step: recursion-mysql
-- The MySQL name for the same limit.
SET SESSION cte_max_recursion_depth = {limit}

-- step: analyze
ANALYZE TABLE jobs_hot, queues
