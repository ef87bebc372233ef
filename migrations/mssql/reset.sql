-- A trial's reset, around marker.sql, drop.sql, schema.sql, seed.sql and the layout's
-- file, on the control connection. [{SCHEMA}] is the run's schema.

-- step: create-schema
-- @P1 the run's schema. Created with its marker (marker.sql, next): a schema claimbench
-- created is never left without the marker that lets the next run drop its tables.
IF SCHEMA_ID(@P1) IS NULL EXEC(N'CREATE SCHEMA ' + QUOTENAME(@P1));

-- step: queues
-- One call per queue: name, paused, active, max workers.
INSERT INTO [{SCHEMA}].[Queues] ([Name], [IsPaused], [IsActive], [MaxWorkers]) VALUES (@P1, @P2, @P3, @P4);

-- step: seed-queues
-- One call per queue: its order, name, lower bound of its share in [0, 1), priority.
INSERT INTO [{SCHEMA}].[SeedQueues] ([Ord], [Name], [Lo], [Priority]) VALUES (@P1, @P2, @P3, @P4);

-- step: seed-priorities
-- One call per priority: its order, value, lower bound of its share in [0, 1).
INSERT INTO [{SCHEMA}].[SeedPriorities] ([Ord], [Value], [Lo]) VALUES (@P1, @P2, @P3);

-- step: lock-escalation
-- {escalation} the workload's lock_escalation (TABLE, AUTO or DISABLE; ALTER binds
-- nothing).
ALTER TABLE [{SCHEMA}].[JobsHot] SET (LOCK_ESCALATION = {escalation});

-- step: statistics
UPDATE STATISTICS [{SCHEMA}].[JobsHot]; UPDATE STATISTICS [{SCHEMA}].[Queues];
