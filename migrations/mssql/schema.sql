-- claimbench: the seed's queue schema on SQL Server, in the schema {SCHEMA} (claimbench
-- creates it first, and drops these tables before every trial). Table and column names
-- are the seed's; types are the seed's where it shows them and conventional otherwise.
-- Status: 0 pending, 1 fetched, 2 processing. Times are UTC (SYSUTCDATETIME()).
--
-- DueUtc is a computed column, ISNULL(ScheduledAtUtc, CreatedAtUtc): the seed orders by
-- that expression, and SQL Server matches an expression in a query to an indexed
-- computed column of the same definition, so the fetch-order layout can serve it.

CREATE TABLE [{SCHEMA}].[Queues] (
    [Name]           varchar(255) NOT NULL CONSTRAINT [PK_Queues] PRIMARY KEY,
    [IsPaused]       bit          NULL CONSTRAINT [DF_Queues_IsPaused] DEFAULT 0,
    [IsActive]       bit          NULL CONSTRAINT [DF_Queues_IsActive] DEFAULT 1,
    [MaxWorkers]     int          NULL,
    [LastUpdatedUtc] datetime2(7) NOT NULL CONSTRAINT [DF_Queues_LastUpdatedUtc] DEFAULT SYSUTCDATETIME()
);

CREATE TABLE [{SCHEMA}].[JobsHot] (
    [Id]             bigint        NOT NULL IDENTITY(1, 1) CONSTRAINT [PK_JobsHot] PRIMARY KEY CLUSTERED,
    [Queue]          varchar(255)  NOT NULL,
    [Type]           varchar(255)  NOT NULL,
    [Payload]        nvarchar(max) NOT NULL,
    [Tags]           varchar(1000) NULL,
    [IdempotencyKey] varchar(255)  NULL,
    [Priority]       int           NOT NULL CONSTRAINT [DF_JobsHot_Priority] DEFAULT 0,
    [Status]         tinyint       NOT NULL CONSTRAINT [DF_JobsHot_Status] DEFAULT 0,
    [AttemptCount]   int           NOT NULL CONSTRAINT [DF_JobsHot_AttemptCount] DEFAULT 0,
    [WorkerId]       varchar(100)  NULL,
    [HeartbeatUtc]   datetime2(7)  NULL,
    [ScheduledAtUtc] datetime2(7)  NULL,
    [CreatedAtUtc]   datetime2(7)  NOT NULL CONSTRAINT [DF_JobsHot_CreatedAtUtc] DEFAULT SYSUTCDATETIME(),
    [StartedAtUtc]   datetime2(7)  NULL,
    [LastUpdatedUtc] datetime2(7)  NULL,
    [CreatedBy]      varchar(100)  NULL,
    [LastModifiedBy] varchar(100)  NULL,
    [DueUtc]         AS ISNULL([ScheduledAtUtc], [CreatedAtUtc]) PERSISTED,
    -- claimbench's own: the token of the execution that owns the row (set by start),
    -- which the effect insert reads back as the database's witness of that execution.
    [ExecToken]      bigint        NULL,
    -- The row's version for `version-cas`: SQL Server moves it on every change of the row.
    [Version]        rowversion    NOT NULL
);

-- The shard map of the `sharded` strategies: a worker claims only jobs of the queues
-- (its shards) it has a row for here. claimbench writes it before a trial and at each of
-- the phase's shard moves; a moved shard has two owners until the move's overlap ends.
CREATE TABLE [{SCHEMA}].[ShardOwners] (
    [Queue]    varchar(255) NOT NULL,
    [WorkerId] varchar(100) NOT NULL,
    CONSTRAINT [PK_ShardOwners] PRIMARY KEY ([Queue], [WorkerId])
);

CREATE TABLE [{SCHEMA}].[JobsArchive] (
    [Id]             bigint        NOT NULL CONSTRAINT [PK_JobsArchive] PRIMARY KEY,
    [Queue]          varchar(255)  NOT NULL,
    [Type]           varchar(255)  NOT NULL,
    [Payload]        nvarchar(max) NOT NULL,
    [Tags]           varchar(1000) NULL,
    [IdempotencyKey] varchar(255)  NULL,
    [Priority]       int           NOT NULL,
    [AttemptCount]   int           NOT NULL,
    [WorkerId]       varchar(100)  NULL,
    [ScheduledAtUtc] datetime2(7)  NULL,
    [CreatedAtUtc]   datetime2(7)  NOT NULL,
    [StartedAtUtc]   datetime2(7)  NULL,
    [FinishedAtUtc]  datetime2(7)  NOT NULL CONSTRAINT [DF_JobsArchive_FinishedAtUtc] DEFAULT SYSUTCDATETIME(),
    [CreatedBy]      varchar(100)  NULL,
    [LastModifiedBy] varchar(100)  NULL
);

CREATE TABLE [{SCHEMA}].[JobsDLQ] (
    [Id]             bigint        NOT NULL CONSTRAINT [PK_JobsDLQ] PRIMARY KEY,
    [Queue]          varchar(255)  NOT NULL,
    [Type]           varchar(255)  NOT NULL,
    [Payload]        nvarchar(max) NOT NULL,
    [Tags]           varchar(1000) NULL,
    [IdempotencyKey] varchar(255)  NULL,
    [Priority]       int           NOT NULL,
    [AttemptCount]   int           NOT NULL,
    [WorkerId]       varchar(100)  NULL,
    [ScheduledAtUtc] datetime2(7)  NULL,
    [CreatedAtUtc]   datetime2(7)  NOT NULL,
    [FailedAtUtc]    datetime2(7)  NOT NULL CONSTRAINT [DF_JobsDLQ_FailedAtUtc] DEFAULT SYSUTCDATETIME(),
    [CreatedBy]      varchar(100)  NULL,
    [LastModifiedBy] varchar(100)  NULL
);

-- The simulated handler's side effect: one row per handler run, written by the database
-- from the row the worker owns (lifecycle/effect.sql), not from what the worker
-- remembers: the independent witness of duplicate executions.
CREATE TABLE [{SCHEMA}].[Effects] (
    [Id]            bigint       NOT NULL IDENTITY(1, 1) CONSTRAINT [PK_Effects] PRIMARY KEY,
    [JobId]         bigint       NOT NULL,
    [Attempt]       int          NOT NULL,
    [WorkerId]      varchar(100) NOT NULL,
    [Outcome]       tinyint      NOT NULL,
    [StartedAtUtc]  datetime2(6) NOT NULL,
    [FinishedAtUtc] datetime2(6) NOT NULL,
    [Owned]         bit          NOT NULL,
    [Token]         bigint       NULL
);

-- The workload's weighted choices for the seed and the producer: a row is picked when its
-- lower bound is the largest one at or below a uniform random number.
CREATE TABLE [{SCHEMA}].[SeedQueues] (
    [Ord]      int          NOT NULL CONSTRAINT [PK_SeedQueues] PRIMARY KEY,
    [Name]     varchar(255) NOT NULL,
    [Lo]       float        NOT NULL,
    -- The queue's own priority for all its jobs; NULL: drawn from SeedPriorities.
    [Priority] int          NULL
);

CREATE TABLE [{SCHEMA}].[SeedPriorities] (
    [Ord]   int   NOT NULL CONSTRAINT [PK_SeedPriorities] PRIMARY KEY,
    [Value] int   NOT NULL,
    [Lo]    float NOT NULL
);
