//! The seam between the runner and a database: the [`Backend`] and [`Session`] traits,
//! the data they return, and classified errors.
//!
//! The runner never sees SQL. A backend owns its statements (under `migrations/<backend>/`)
//! and turns the database's errors into a [`BackendError`] whose [`ErrorKind`] says what
//! the runner may do about it (retry a deadlock, give up on a lost connection).

pub mod any;
mod broker;
pub mod claim;
pub mod cluster;
mod connections;
pub mod files;
pub mod layouts;
pub mod lifecycle;
pub mod lock_service;
pub mod mssql;
pub mod mssql_target;
pub mod mysql;
pub mod nats;
pub mod ownership;
pub mod plan;
pub mod postgres;
pub mod rabbitmq;
pub mod recipe;
pub mod redis;
mod shared;
pub mod target;

use crate::strategy::Strategy;
use crate::workload::Workload;
use serde::{Deserialize, Serialize};
use std::future::Future;
use std::time::Duration;

pub use crate::results::{DbReconciliation, ServerCounters, ServerInfo, TableStats};
pub use crate::statements as sql;
pub use crate::statements::sql_steps;
pub use claim::ClaimSteps;
pub use lifecycle::{Lifecycle, Step};
pub use target::DbTarget;

pub use crate::backend_kind::BackendKind;
pub use crate::resources::ServerProcess;

/// What one reset builds: the workload's population seeded from `seed`, and the
/// indexes of `layout` (its DDL as `layout_sql`).
#[derive(Clone, Copy)]
pub struct Reset<'a> {
    pub workload: &'a Workload,
    pub layout: &'a str,
    pub layout_sql: &'a str,
    pub seed: u64,
}

/// The role declared SQL runs as ([`Backend::workload_role`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkloadRole {
    /// As the server names it (`claimbench_workload`, `postgres`, `root@localhost`).
    pub name: String,
    /// Its rights that reach the server's host, as the server names them (`SUPERUSER`,
    /// `pg_execute_server_program`, `FILE`); empty for a role claimbench may hand
    /// workload SQL to.
    pub reaches_host: Vec<String>,
}

/// One job as a claim hands it to a worker: only what the lifecycle and the ledger need.
/// The claim statements return every column of the seed's `OUTPUT`; the rest is read off
/// the wire and dropped, as a production worker would deserialize it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClaimedJob {
    pub id: i64,
    /// `attempt_count` at claim time: which attempt this execution belongs to.
    pub attempt: i32,
    /// Server-side time from the job becoming eligible to this claim, µs.
    pub queue_wait_us: i64,
}

/// What a claim call observed besides the jobs it returned.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ClaimOutcome {
    /// Conditional claims whose UPDATE changed 0 rows: another worker got there first.
    pub lost_races: u32,
}

/// What the effect insert reports back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EffectReceipt {
    /// The finish time on the database's clock, µs since the epoch.
    pub finished_us: i64,
    /// Whether the worker still owned the row (same worker, processing, same token).
    pub owned: bool,
}

/// Result of a `fail` call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailOutcome {
    Retried,
    DeadLettered,
    /// The worker no longer owned the job; nothing changed.
    NotOwned,
}

/// One sampler reading, taken on its own connection during a trial.
#[derive(Debug, Clone, Default)]
pub struct Sample {
    /// Age of the oldest eligible pending job (due, in an unpaused active queue), ms.
    pub oldest_pending_ms: Option<f64>,
    /// Worker connections waiting on a lock right now.
    pub lock_waiting: u32,
    /// Worker connections running a statement right now.
    pub active: u32,
    /// Active (fetched or processing) jobs per queue that has a max workers limit, in the
    /// order of the workload's queues; `None` for queues without a limit.
    pub queue_active: Vec<Option<i64>>,
    /// Whether any job is left in an unpaused queue (drain stop rule).
    pub work_left: bool,
    /// Age of each queue's oldest eligible pending job, ms, in the workload's order;
    /// empty when the workload has one queue (then it is `oldest_pending_ms`).
    pub queue_oldest_ms: Vec<Option<f64>>,
    /// The hot table's health (PostgreSQL); `at_s` is filled in by the sampler.
    pub table: Option<crate::results::TableSample>,
    /// InnoDB's history list length (MySQL, MariaDB).
    pub history_length: Option<i64>,
}

/// What went wrong, as far as the runner needs to know.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ErrorKind {
    Deadlock,
    Serialization,
    LockTimeout,
    ConnectionLost,
    Other,
}

#[derive(Debug, thiserror::Error)]
pub enum BackendError {
    #[error("cannot connect to {target}: {reason}; {hint}")]
    Connect {
        target: String,
        reason: String,
        hint: &'static str,
    },
    #[error("refusing to drop and recreate a schema on {target}: {refusal}; {hint}", hint = ownership::REFUSAL_HINT)]
    ForeignSchema {
        target: String,
        refusal: ownership::Refusal,
    },
    #[error("{what} failed ({kind:?}{code}): {message}", code = .code.as_deref().map(|c| format!(", SQLSTATE {c}")).unwrap_or_default())]
    Query {
        what: &'static str,
        kind: ErrorKind,
        code: Option<String>,
        message: String,
    },
}

impl BackendError {
    /// This error with `whose` (a file, the declaration it belongs to) before the
    /// server's message, when the server gave one.
    pub fn in_file(self, whose: &str) -> BackendError {
        match self {
            BackendError::Query {
                what,
                kind,
                code,
                message,
            } => BackendError::Query {
                what,
                kind,
                code,
                message: format!("{whose}: {message}"),
            },
            other => other,
        }
    }

    /// A statement the server refused or the connection lost; `kind` says what the
    /// runner may do about it, `code` is the server's own (SQLSTATE, error number).
    pub fn query(
        what: &'static str,
        kind: ErrorKind,
        code: Option<String>,
        message: String,
    ) -> BackendError {
        BackendError::Query {
            what,
            kind,
            code,
            message,
        }
    }

    /// A statement whose answer claimbench cannot use (no row where one was due, a
    /// technique an engine lacks): never retried.
    pub fn other(what: &'static str, message: impl Into<String>) -> BackendError {
        BackendError::query(what, ErrorKind::Other, None, message.into())
    }

    pub fn kind(&self) -> ErrorKind {
        match self {
            BackendError::Connect { .. } => ErrorKind::ConnectionLost,
            BackendError::ForeignSchema { .. } => ErrorKind::Other,
            BackendError::Query { kind, .. } => *kind,
        }
    }

    /// Deadlocks, serialization failures and lock timeouts: the statement may be sent
    /// again after a short backoff. Everything else ends the trial.
    pub fn is_retryable(&self) -> bool {
        matches!(
            self.kind(),
            ErrorKind::Deadlock | ErrorKind::Serialization | ErrorKind::LockTimeout
        )
    }
}

/// What a new primary lacks after a failover: the handler effects the workers saw
/// written, as (job, start µs), and the jobs whose acknowledged completion is gone.
pub type Missing = (Vec<(i64, i64)>, Vec<i64>);

/// Where one connection goes: which node of the target (0 on a single server), and
/// through which delaying proxy, if any.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Endpoint {
    pub node: usize,
    pub via: Option<std::net::SocketAddr>,
}

impl Endpoint {
    pub fn via(via: Option<std::net::SocketAddr>) -> Endpoint {
        Endpoint { node: 0, via }
    }
}

/// A database the runner can reset, seed, and open sessions on.
///
/// Called from the runner's control path only (once per trial or less), never per claim.
/// The evidence a backend reads on its control connection is written once, in
/// [`recipe`], over the backend's [`recipe::Dialect`]: the methods that say so have
/// that as their default, and no engine overrides them.
pub trait Backend: recipe::Dialect + Send + Sync + 'static {
    type Session: Session;

    fn kind(&self) -> BackendKind {
        self.instance().kind
    }

    /// Opens one connection. `role` names it on the server (`application_name`) so the
    /// sampler can tell worker connections from everything else.
    fn connect(
        &self,
        role: &str,
        worker_id: &str,
    ) -> impl Future<Output = Result<Self::Session, BackendError>> + Send;

    /// Where the workers' connections go: the target's (first) host and port, resolved,
    /// for a delaying proxy in front of it; `None` when it cannot be told.
    fn worker_address(&self) -> Option<std::net::SocketAddr> {
        None
    }

    /// [`Backend::connect`] to one node of a cluster target (`[[matrix]] placement`), and
    /// through a delaying proxy in front of [`Backend::worker_address`] when given
    /// (`[[matrix]] network`), so that only the connections opened this way pay its
    /// round trip.
    fn connect_to(
        &self,
        role: &str,
        worker_id: &str,
        to: Endpoint,
    ) -> impl Future<Output = Result<Self::Session, BackendError>> + Send;

    /// How many nodes the target has that take claims: 1 but for a multi-primary
    /// cluster given (or started) as one target.
    fn nodes(&self) -> usize {
        1
    }

    /// The `application_name` given to worker connections of this process.
    fn worker_role(&self) -> String {
        self.instance().worker_role.clone()
    }

    fn server_info(&self) -> impl Future<Output = Result<ServerInfo, BackendError>> + Send {
        recipe::server_info(self)
    }

    /// Refuses, before anything is dropped, a schema claimbench did not create: a reserved
    /// name, or one that exists without the marker table (see [`ownership`]). `reset`
    /// checks too; the runner calls this once before the first trial, so a refusal ends
    /// the run before it starts.
    fn check_schema(&self) -> impl Future<Output = Result<(), BackendError>> + Send {
        recipe::check_schema(self, self.kind())
    }

    /// Drops and recreates the schema, seeds the backlog deterministically from `seed`,
    /// builds `layout`, and refreshes planner statistics. Returns the seeded job count.
    fn reset(
        &self,
        workload: &Workload,
        layout: &str,
        seed: u64,
    ) -> impl Future<Output = Result<u64, BackendError>> + Send {
        async move {
            let layout_sql = layouts::sql_for_reset(self.kind(), layout, &workload.custom_layouts)?;
            let r = Reset {
                workload,
                layout,
                layout_sql,
                seed,
            };
            self.rebuild(r).await
        }
    }

    /// The engine's part of [`Backend::reset`], with the layout's DDL already found.
    fn rebuild(&self, r: Reset<'_>) -> impl Future<Output = Result<u64, BackendError>> + Send;

    fn counters(&self) -> impl Future<Output = Result<ServerCounters, BackendError>> + Send;

    /// A process of the server on this host (the root of its processes, or one backend of
    /// a server that forks per connection), for reading the server's CPU; `None` when it
    /// runs elsewhere or cannot be told.
    fn server_pid(&self) -> impl Future<Output = Option<ServerProcess>> + Send;

    fn table_stats(&self) -> impl Future<Output = Result<TableStats, BackendError>> + Send {
        recipe::table_stats(self)
    }

    fn reconcile(&self) -> impl Future<Output = Result<DbReconciliation, BackendError>> + Send {
        recipe::reconcile(self)
    }

    /// Gives or takes shards of a `sharded` strategy's map: `queues[i]` to or from the
    /// worker `workers[i]`.
    fn change_shards(
        &self,
        change: recipe::ShardChange,
        queues: &[String],
        workers: &[String],
    ) -> impl Future<Output = Result<(), BackendError>> + Send {
        recipe::change_shards(self, change, queues, workers)
    }

    /// The server's clock, µs since the epoch: read once as a trial starts, so that
    /// `completed_by_queue` can be asked about the trial's steady window.
    fn server_clock_us(&self) -> impl Future<Output = Result<i64, BackendError>> + Send {
        recipe::server_clock_us(self)
    }

    /// After a trial: jobs completed per queue between two `server_clock_us` readings.
    fn completed_by_queue(
        &self,
        from_us: i64,
        to_us: i64,
    ) -> impl Future<Output = Result<Vec<(String, i64)>, BackendError>> + Send {
        recipe::completed_by_queue(self, from_us, to_us)
    }

    /// After a trial: (job, queue) for every job of `queues` wherever it ended (hot,
    /// archive or dead-letter table), for the ledger's exact max-workers figures.
    fn job_queues(
        &self,
        queues: &[String],
    ) -> impl Future<Output = Result<Vec<(i64, String)>, BackendError>> + Send {
        recipe::job_queues(self, queues)
    }

    /// Each node's counters on a multi-primary cluster target (with its settings when
    /// `settings`), in the target's order; none on a single server.
    fn cluster_readings(
        &self,
        settings: bool,
    ) -> impl Future<Output = Result<Vec<cluster::NodeReading>, BackendError>> + Send {
        let _ = settings;
        async { Ok(Vec::new()) }
    }

    /// Where the next cells' connections go on a cluster target (`[[matrix]]
    /// placement`); nothing to do on a single server.
    fn set_placement(
        &self,
        p: crate::workload::Placement,
    ) -> impl Future<Output = Result<(), BackendError>> + Send {
        let _ = p;
        async { Ok(()) }
    }

    /// The standbys this server streams to (PostgreSQL's `pg_stat_replication`); none
    /// where the engine or the server has none.
    fn standbys(
        &self,
    ) -> impl Future<Output = Result<Vec<crate::results::StandbyState>, BackendError>> + Send {
        async { Ok(Vec::new()) }
    }

    /// Runs the server at `d`'s durability from now on (`[[matrix]] durability`) and
    /// returns the three settings as the server then reports them. Only the embedded
    /// PostgreSQL does this (the run refuses it on a server claimbench did not start).
    fn set_durability(
        &self,
        _d: crate::workload::Durability,
    ) -> impl Future<Output = Result<Vec<(String, String)>, BackendError>> + Send {
        let kind = self.kind();
        async move {
            Err(BackendError::other(
                "set the block's durability",
                format!("only the embedded PostgreSQL changes its durability; not {kind}"),
            ))
        }
    }

    /// The server pool the workers go through from now on: `Some(n)` sizes the pool of
    /// the pooler claimbench started (`[[matrix]] pool_sizes`), `None` reads what a
    /// pooler of the person's has (its admin console, read-only). Returns the size in
    /// force; `None` where no pooler or no console is in the path.
    fn size_pool(
        &self,
        _n: Option<u32>,
    ) -> impl Future<Output = Result<Option<u32>, BackendError>> + Send {
        async { Ok(None) }
    }

    /// The pooler's pool right now: server connections serving a client and clients
    /// waiting for one, summed over its pools; `None` where no pooler console is read.
    /// Called a few times a second during a trial, on a connection of its own.
    fn pool_now(&self) -> impl Future<Output = Result<Option<(i64, i64)>, BackendError>> + Send {
        async { Ok(None) }
    }

    /// After a failover: of the writes the workers saw acknowledged ((job, start µs) of
    /// handler effects and of completions), those this server does not have, as (the
    /// effects missing, jobs whose acknowledged completion is missing). Engines claimbench cannot
    /// fail over (the workload check refuses them) say so.
    fn acknowledged_missing(
        &self,
        _effects: &[(i64, i64)],
        _completions: &[(i64, i64)],
    ) -> impl Future<Output = Result<Missing, BackendError>> + Send {
        let kind = self.kind();
        async move {
            Err(BackendError::other(
                "compare the ledger with the new primary",
                format!("failover is PostgreSQL's; {kind} has no accounting for it"),
            ))
        }
    }

    /// The role a workload's own SQL (declared layouts and claims) runs as, and which of
    /// its rights reach past claimbench's schema to the server's host; `None` where the
    /// engine runs no declared SQL. The runner asks once before the first trial of a
    /// workload that declares SQL, and refuses a role with such rights unless the person
    /// running claimbench allowed it.
    fn workload_role(
        &self,
    ) -> impl Future<Output = Result<Option<WorkloadRole>, BackendError>> + Send {
        async { Ok(None) }
    }

    /// Replaces the schema's jobs and queues with `state`, a generated state of the
    /// reference model (`prove` of a declared claim that names its model), through
    /// DELETE and INSERT so that a declared setup step's triggers see the rows.
    fn load_model_state(
        &self,
        _state: &crate::model::TableState,
    ) -> impl Future<Output = Result<(), BackendError>> + Send {
        async {
            Err(BackendError::other(
                "load a model state",
                format!("the model check is not built for {}", self.kind()),
            ))
        }
    }

    /// Runs `strategy`'s `setup` step, if its file has one, after a reset: the tables
    /// and triggers a technique needs beside the seed's schema (`ready-table`).
    fn setup_strategy(
        &self,
        _strategy: &Strategy,
    ) -> impl Future<Output = Result<(), BackendError>> + Send {
        async { Ok(()) }
    }

    /// Warnings this backend knows before a trial runs, from its configuration alone.
    fn trial_warnings(
        &self,
        _workload: &Workload,
        _layout: &str,
        _strategy: &Strategy,
    ) -> Vec<crate::warnings::Warning> {
        Vec::new()
    }

    /// Settings this backend chose for the run (such as which form of a statement it
    /// sends), recorded next to the server's own; known after the first reset.
    fn run_notes(&self) -> Vec<(String, String)> {
        Vec::new()
    }
}

/// One connection with its prepared statements, owned by one task (a worker, the
/// sampler, a producer or the rescuer). Hot-path methods take `&mut self` and reuse
/// caller-owned buffers, so a claim allocates nothing the caller did not ask for.
/// A backend without the cleanup job's statements (the run refuses `[cleanup]` on it
/// before it starts; this is the guard behind that).
fn cleanup_refused() -> BackendError {
    BackendError::other(
        "clean up finished rows ([cleanup])",
        "written for PostgreSQL only for now",
    )
}

pub trait Session: ClaimSteps + Lifecycle + Send + 'static {
    /// Claims up to `batch` jobs with `strategy`, appending them to `out`. On an error,
    /// `out` holds exactly the jobs this call claimed and committed before it (a
    /// conditional claim commits row by row), so a caller that retries keeps them.
    fn claim(
        &mut self,
        strategy: &Strategy,
        batch: u32,
        out: &mut Vec<ClaimedJob>,
    ) -> impl Future<Output = Result<ClaimOutcome, BackendError>> + Send {
        claim::by_shape(self, strategy, batch, out)
    }

    /// Prepares `strategy`'s statements now rather than at its first claim, so that a
    /// statement the server refuses (a custom one) fails before a trial starts.
    fn prepare(
        &mut self,
        _strategy: &Strategy,
    ) -> impl Future<Output = Result<(), BackendError>> + Send {
        async { Ok(()) }
    }

    /// Opens a transaction that holds `ids` as `strategy`'s claims in flight would,
    /// until [`Session::end`]: the model check's other claims. What is held is the
    /// declared claim's `hold` step where it has one (PostgreSQL), else their rows and,
    /// on PostgreSQL, the advisory locks an advisory claim takes on their ids.
    fn hold_in_flight(
        &mut self,
        _strategy: &Strategy,
        _ids: &[i64],
    ) -> impl Future<Output = Result<(), BackendError>> + Send {
        async {
            Err(BackendError::other(
                "hold rows",
                "the model check is not built for this backend",
            ))
        }
    }

    /// The queue this connection's worker serves: what a declared claim binds as
    /// `:queue` (worker `i` of a block serves the workload's queue `i mod n`).
    fn serve_queue(&mut self, _queue: &str) {}

    /// An idle worker of a listening strategy (`notify`): waits until the server
    /// announces new work on this connection, or `max` passes. `true` when woken.
    fn wait_for_work(&mut self, max: Duration) -> impl Future<Output = bool> + Send {
        async move {
            tokio::time::sleep(max).await;
            false
        }
    }

    /// The producer, after an insert that a listening strategy's workers wait for:
    /// tells them there is work (PostgreSQL `NOTIFY`).
    fn announce(&mut self) -> impl Future<Output = Result<(), BackendError>> + Send {
        async { Ok(()) }
    }

    /// Opens a transaction that the calls after it join, a claim included, until
    /// [`Session::end`]. Only `prove` uses it: it holds a claim open the way a worker
    /// stuck between its claim and its commit would, to see what other claimers do.
    fn begin(&mut self) -> impl Future<Output = Result<(), BackendError>> + Send;

    /// Ends the transaction [`Session::begin`] opened: commits, or rolls back.
    fn end(&mut self, commit: bool) -> impl Future<Output = Result<(), BackendError>> + Send;

    /// Sets session settings on this connection (`[session.<backend>]` in a workload,
    /// `prove --set`): names and SQL Server values checked by [`crate::session_settings`].
    fn apply(
        &mut self,
        settings: &[(String, String)],
    ) -> impl Future<Output = Result<(), BackendError>> + Send;

    /// Marks a fetched job as processing under `token` (one per execution, chosen by the
    /// worker). Returns the start time on the database's clock (µs since the epoch), or
    /// `None` when this worker no longer owns the job (with `gated`): the handler must
    /// then not run.
    fn start(
        &mut self,
        job: i64,
        gated: bool,
        token: i64,
    ) -> impl Future<Output = Result<Option<i64>, BackendError>> + Send {
        let step = Step::Start { job, gated, token };
        async move { self.run(step).await.map(lifecycle::started) }
    }

    /// Extends the lease of a running execution; `false` when this worker no longer owns
    /// the row under `token` (the rescuer took it back). Called every
    /// `handler.heartbeat_ms` while a handler runs.
    fn heartbeat(
        &mut self,
        job: i64,
        token: i64,
    ) -> impl Future<Output = Result<bool, BackendError>> + Send {
        let step = Step::Heartbeat { job, token };
        async move { self.run(step).await.map(lifecycle::heartbeat_held) }
    }

    /// Writes the handler's side effect (one effects row), which the database fills from
    /// the row this worker owns under `token`; `started_us` is what `start` returned.
    fn effect(
        &mut self,
        job: i64,
        attempt: i32,
        failed: bool,
        started_us: i64,
        token: i64,
    ) -> impl Future<Output = Result<EffectReceipt, BackendError>> + Send {
        let step = Step::Effect(lifecycle::Effect {
            job,
            attempt,
            failed,
            started_us,
            token,
        });
        async move { lifecycle::effect_receipt(self.run(step).await?) }
    }

    /// Archives the job if this worker still owns it; `false` when ownership was lost.
    fn complete(&mut self, job: i64) -> impl Future<Output = Result<bool, BackendError>> + Send {
        async move {
            let done = lifecycle::completed(self.run(Step::Complete { job }).await?);
            self.finished(&[job]).await?;
            Ok(done)
        }
    }

    /// Archives every job of `jobs` this worker still owns, in one statement
    /// (`handler.complete = "batched"`); yields the ids it archived. Backends without
    /// the statement refuse the setting before a run starts.
    fn complete_many(
        &mut self,
        _jobs: &[i64],
    ) -> impl Future<Output = Result<Vec<i64>, BackendError>> + Send {
        async {
            Err(BackendError::other(
                "complete a batch",
                "batched completion is written for PostgreSQL only",
            ))
        }
    }

    /// Returns the job to pending for another attempt after `retry_delay`, or moves it
    /// to the dead-letter table once it has had `max_attempts`.
    fn fail(
        &mut self,
        job: i64,
        retry_delay: Duration,
        max_attempts: u32,
    ) -> impl Future<Output = Result<FailOutcome, BackendError>> + Send {
        let step = Step::Fail {
            job,
            retry_delay,
            max_attempts,
        };
        async move {
            let outcome = lifecycle::fail_outcome(self.run(step).await?);
            self.finished(&[job]).await?;
            Ok(outcome)
        }
    }

    /// Returns fetched, unstarted jobs to pending; yields the ids actually released.
    fn release(
        &mut self,
        jobs: &[i64],
    ) -> impl Future<Output = Result<Vec<i64>, BackendError>> + Send;

    /// Returns expired claims and heartbeats to pending; yields the ids rescued.
    fn rescue(
        &mut self,
        lease: Duration,
    ) -> impl Future<Output = Result<Vec<i64>, BackendError>> + Send;

    /// One statement of the cleanup job (`[cleanup]`): removes up to `batch` of the
    /// oldest finished rows that finished more than `retain` ago; yields how many.
    fn clean(
        &mut self,
        _retain: Duration,
        _batch: u32,
    ) -> impl Future<Output = Result<u64, BackendError>> + Send {
        async { Err(cleanup_refused()) }
    }

    /// What the cleanup job has left: finished rows past `retain` (counted up to
    /// `cap`) and the archive's bytes.
    fn cleanup_state(
        &mut self,
        _retain: Duration,
        _cap: u64,
    ) -> impl Future<Output = Result<crate::results::CleanupState, BackendError>> + Send {
        async { Err(cleanup_refused()) }
    }

    /// Inserts one new due job per entry of `ages_us`, drawn from the workload's
    /// population, created that many µs before now: each job's intended arrival time,
    /// so a producer that runs late shows in queue wait rather than hiding in it.
    /// `ages_us` is oldest first and never empty.
    fn produce(
        &mut self,
        workload: &Workload,
        ages_us: &[i64],
    ) -> impl Future<Output = Result<u64, BackendError>> + Send;

    fn sample(
        &mut self,
        workload: &Workload,
    ) -> impl Future<Output = Result<Sample, BackendError>> + Send;

    /// The plan of this strategy's claim (or its select step) for `batch`, executed
    /// inside a transaction that is rolled back; `None` where the backend takes no plan
    /// sample yet. Sampled once per trial, mid-trial, on its own connection.
    fn explain_claim(
        &mut self,
        _strategy: &Strategy,
        _batch: u32,
    ) -> impl Future<Output = Result<Option<plan::PlanSample>, BackendError>> + Send {
        async { Ok(None) }
    }

    /// The plan alone of this strategy's claim for `batch` (EXPLAIN without ANALYZE:
    /// nothing runs, nothing is locked), taken beside [`Session::explain_claim`] so a
    /// claim too slow to sample still shows its shape; `None` where the backend has none.
    fn explain_claim_plan_only(
        &mut self,
        _strategy: &Strategy,
        _batch: u32,
    ) -> impl Future<Output = Result<Option<plan::PlanSample>, BackendError>> + Send {
        async { Ok(None) }
    }

    /// Opens a transaction that pins the server's horizon until [`Session::end`]: a
    /// report job's snapshot, or a forgotten session idle in a transaction that holds
    /// an xid (`faults.hold_kind`). While it is open, no row version that died after it
    /// may be removed, so the hot table's dead tuples pile up (`faults.hold_snapshot_s`).
    fn hold_snapshot(
        &mut self,
        _kind: crate::workload::HoldKind,
    ) -> impl Future<Output = Result<(), BackendError>> + Send {
        async {
            Err(BackendError::other(
                "hold a snapshot (faults.hold_snapshot_s)",
                "this backend cannot hold a snapshot open; run the workload on PostgreSQL or MySQL",
            ))
        }
    }

    /// Scans the hot table inside the snapshot [`Session::hold_snapshot`] opened
    /// (`repeatable-read-scans`): one read of every row the snapshot sees.
    fn scan_held(&mut self) -> impl Future<Output = Result<(), BackendError>> + Send {
        async {
            Err(BackendError::other(
                "scan the hot table (faults.hold_kind = \"repeatable-read-scans\")",
                "this backend cannot hold a snapshot open; run the workload on PostgreSQL or MySQL",
            ))
        }
    }

    /// The worker crashed holding `job` (the faults' crash after start, or an abandoned
    /// claim): what its connection's end does to the claim where that is more than
    /// waiting for the lease. Nothing by default: the claim stays until a rescue, or
    /// the server's own timeout, gives it back. A broker that hands a lost connection's
    /// deliveries back at once (RabbitMQ) closes the connection, as a dead process's
    /// would be, and the worker goes on as its replacement.
    fn crashed(&mut self, job: i64) -> impl Future<Output = Result<(), BackendError>> + Send {
        let _ = job;
        async { Ok(()) }
    }

    /// Ends every worker connection of this process (`role`, from
    /// [`Backend::worker_role`]) with the server's own kill, from this connection;
    /// returns how many it ended. The workload's injected fault
    /// (`faults.kill_connections_*`), as a DBA's kill, a failover or a pooler restart
    /// would end them.
    fn kill_workers(
        &mut self,
        role: &str,
    ) -> impl Future<Output = Result<u64, BackendError>> + Send;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each engine lists the steps it reads by name ([`sql::step`] panics on a missing
    /// one): every one is in its file.
    #[test]
    fn every_step_an_engine_reads_is_in_its_file() {
        let engines = [
            ("postgres", postgres::STEPS),
            ("mysql", mysql::STEPS),
            ("mssql", mssql::STEPS),
        ];
        for (engine, files) in engines {
            for (file, steps) in files {
                let steps: Vec<&str> = steps.split_whitespace().collect();
                let missing = sql::missing_steps(file, &steps);
                assert!(missing.is_empty(), "{engine}: {missing:?}");
            }
        }
    }

    #[test]
    fn only_lock_conflicts_are_retryable() {
        let q = |kind| BackendError::Query {
            what: "claim",
            kind,
            code: None,
            message: String::new(),
        };
        assert!(q(ErrorKind::Deadlock).is_retryable());
        assert!(q(ErrorKind::Serialization).is_retryable());
        assert!(q(ErrorKind::LockTimeout).is_retryable());
        assert!(!q(ErrorKind::ConnectionLost).is_retryable());
        assert!(!q(ErrorKind::Other).is_retryable());
    }
}
