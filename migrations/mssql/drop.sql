-- Drops claimbench's tables in {SCHEMA} (and nothing else), so a trial starts clean.
DROP TABLE IF EXISTS [{SCHEMA}].[JobsHot], [{SCHEMA}].[Queues], [{SCHEMA}].[JobsArchive],
    [{SCHEMA}].[JobsDLQ], [{SCHEMA}].[Effects], [{SCHEMA}].[SeedQueues],
    [{SCHEMA}].[SeedPriorities], [{SCHEMA}].[ShardOwners];
