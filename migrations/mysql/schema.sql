-- claimbench: the production queue schema of the seed, ported to MySQL 8 / MariaDB 10.6+.
-- Runs in the trial's own database (the runner creates it first). Column names are the
-- seed's, in snake_case, as in the PostgreSQL port. Status: 0 pending, 1 fetched,
-- 2 processing. Times are UTC DATETIME(6) (every session runs with time_zone '+00:00').
--
-- Differences from the PostgreSQL port, and why:
-- 1. `due_at` is a stored generated column, COALESCE(scheduled_at, created_at). MariaDB
--    has no index on an expression, and the fetch order must come from an index: without
--    one, a locking read sorts every pending row first and keeps them all locked until
--    commit (InnoDB locks each row it reads before the sort), so one claim would lock
--    the whole backlog.
-- 2. The primary key is declared with the table: InnoDB stores the table in its primary
--    key order, so appending ids in order is the fast way to load it.
-- 3. seed_queues and seed_priorities hold the workload's weighted choices for the seed
--    and the producer (MySQL has no arrays to bind them as one parameter).

-- The marker: claimbench created this database, so a later run may drop it
-- (src/backend/ownership.rs refuses a database that exists without it).
-- Its one row (reset.sql) names the trial's storage model, which the counts after the
-- trial (evidence/) read to know where finished jobs went.
CREATE TABLE claimbench_schema (
    created_by VARCHAR(100) NOT NULL DEFAULT 'claimbench',
    created_at DATETIME(6)  NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
    storage    VARCHAR(40)  NOT NULL DEFAULT 'archive-move'
) ENGINE = InnoDB;

CREATE TABLE queues (
    name            VARCHAR(200) NOT NULL PRIMARY KEY,
    is_paused       BOOLEAN      NOT NULL DEFAULT FALSE,
    is_active       BOOLEAN      NOT NULL DEFAULT TRUE,
    max_workers     INT          NULL,
    last_updated_at DATETIME(6)  NOT NULL DEFAULT CURRENT_TIMESTAMP(6)
) ENGINE = InnoDB;

CREATE TABLE jobs_hot (
    id               BIGINT       NOT NULL AUTO_INCREMENT PRIMARY KEY,
    queue            VARCHAR(200) NOT NULL,
    type             VARCHAR(200) NOT NULL,
    payload          MEDIUMTEXT   NOT NULL,
    tags             TEXT         NULL,
    idempotency_key  VARCHAR(200) NULL,
    priority         INT          NOT NULL DEFAULT 0,
    status           SMALLINT     NOT NULL DEFAULT 0,
    attempt_count    INT          NOT NULL DEFAULT 0,
    worker_id        VARCHAR(200) NULL,
    heartbeat_at     DATETIME(6)  NULL,
    scheduled_at     DATETIME(6)  NULL,
    created_at       DATETIME(6)  NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
    started_at       DATETIME(6)  NULL,
    last_updated_at  DATETIME(6)  NULL,
    created_by       VARCHAR(200) NULL,
    last_modified_by VARCHAR(200) NULL,
    due_at           DATETIME(6)  AS (COALESCE(scheduled_at, created_at)) STORED,
    -- claimbench's own: the token of the execution that owns the row (set by start),
    -- which the effect procedure reads back as the database's witness of that execution.
    exec_token       BIGINT       NULL,
    -- The row's version for `version-cas`, whose claim compares and bumps it; no other
    -- statement reads it.
    version          BIGINT       NOT NULL DEFAULT 0
) ENGINE = InnoDB;

-- The shard map of the `sharded` strategies: a worker claims only jobs of the queues
-- (its shards) it has a row for here. claimbench writes it before a trial and at each of
-- the phase's shard moves; a moved shard has two owners until the move's overlap ends,
-- the stale map a real sharded poller lives with. No other statement reads it.
CREATE TABLE shard_owners (
    queue     VARCHAR(200) NOT NULL,
    worker_id VARCHAR(200) NOT NULL,
    PRIMARY KEY (queue, worker_id)
) ENGINE = InnoDB;

CREATE TABLE jobs_archive (
    id               BIGINT       NOT NULL PRIMARY KEY,
    queue            VARCHAR(200) NOT NULL,
    type             VARCHAR(200) NOT NULL,
    payload          MEDIUMTEXT   NOT NULL,
    tags             TEXT         NULL,
    idempotency_key  VARCHAR(200) NULL,
    priority         INT          NOT NULL,
    attempt_count    INT          NOT NULL,
    worker_id        VARCHAR(200) NULL,
    scheduled_at     DATETIME(6)  NULL,
    created_at       DATETIME(6)  NOT NULL,
    started_at       DATETIME(6)  NULL,
    finished_at      DATETIME(6)  NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
    created_by       VARCHAR(200) NULL,
    last_modified_by VARCHAR(200) NULL
) ENGINE = InnoDB;

-- What the cleanup job ([cleanup], cleanup.sql) removed of the trial's own jobs: their
-- id, queue, start and finish, which the counts after the trial read beside the archive
-- (evidence/), so removing finished rows loses no job from them. No key: an insert here
-- is the only cost claimbench adds to the cleanup's statements.
CREATE TABLE jobs_cleaned (
    id          BIGINT       NOT NULL,
    queue       VARCHAR(200) NOT NULL,
    started_at  DATETIME(6)  NULL,
    finished_at DATETIME(6)  NOT NULL
) ENGINE = InnoDB;

CREATE TABLE jobs_dead_letter (
    id               BIGINT       NOT NULL PRIMARY KEY,
    queue            VARCHAR(200) NOT NULL,
    type             VARCHAR(200) NOT NULL,
    payload          MEDIUMTEXT   NOT NULL,
    tags             TEXT         NULL,
    idempotency_key  VARCHAR(200) NULL,
    priority         INT          NOT NULL,
    attempt_count    INT          NOT NULL,
    worker_id        VARCHAR(200) NULL,
    scheduled_at     DATETIME(6)  NULL,
    created_at       DATETIME(6)  NOT NULL,
    failed_at        DATETIME(6)  NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
    created_by       VARCHAR(200) NULL,
    last_modified_by VARCHAR(200) NULL
) ENGINE = InnoDB;

-- The simulated handler's side effect: one row per handler run, written by the database
-- from the row the worker owns (lifecycle/effect.sql), not from what the worker
-- remembers: the independent witness of duplicate executions.
CREATE TABLE effects (
    id          BIGINT       NOT NULL AUTO_INCREMENT PRIMARY KEY,
    job_id      BIGINT       NOT NULL,
    attempt     INT          NOT NULL,
    worker_id   VARCHAR(200) NOT NULL,
    outcome     SMALLINT     NOT NULL,
    started_at  DATETIME(6)  NOT NULL,
    finished_at DATETIME(6)  NOT NULL,
    owned       BOOLEAN      NOT NULL,
    token       BIGINT       NULL,
    -- The owned row's queue: under storage = "delete" nothing else keeps a finished
    -- job's queue for the per-queue counts.
    queue       VARCHAR(200) NULL
) ENGINE = InnoDB;

-- The workload's weighted choices: a row is picked when its lower bound is the largest
-- one at or below a uniform random number (PostgreSQL's width_bucket).
CREATE TABLE seed_queues (
    ord      INT          NOT NULL PRIMARY KEY,
    name     VARCHAR(200) NOT NULL,
    lo       DOUBLE       NOT NULL,
    -- The queue's own priority for all its jobs; NULL: drawn from seed_priorities.
    priority INT          NULL
) ENGINE = InnoDB;

CREATE TABLE seed_priorities (
    ord   INT    NOT NULL PRIMARY KEY,
    value INT    NOT NULL,
    lo    DOUBLE NOT NULL
) ENGINE = InnoDB;
