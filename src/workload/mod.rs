//! Workload files: TOML as the user typed it (`raw`), then a validated [`Workload`].
//!
//! Validation happens before any connection opens, and every error names the file, the
//! field and what is allowed. The runner only ever sees a [`Workload`], never the raw
//! structs, so it does not re-check anything.

mod coherence;
mod toml_errors;

use crate::backend_kind::BackendKind;
pub use crate::names::{INDEX_LAYOUTS, check_declared_name, is_plain_name, leak};
use crate::strategy::Strategy;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Why a workload file was refused.
#[derive(Debug, thiserror::Error)]
pub enum WorkloadError {
    #[error("{file}: cannot read workload: {source}")]
    Read {
        file: PathBuf,
        source: std::io::Error,
    },
    #[error("{file}: {message}")]
    Parse { file: PathBuf, message: String },
    #[error("{file}: {field}: {message}")]
    Invalid {
        file: PathBuf,
        field: String,
        message: String,
    },
}

/// The raw TOML shape. Every table rejects unknown keys so a typo is an error, not a
/// silently ignored setting.
mod raw {
    use super::*;

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    pub struct Workload {
        pub name: String,
        #[serde(default)]
        pub description: String,
        #[serde(default = "default_seed")]
        pub seed: u64,
        pub population: Population,
        #[serde(default)]
        pub producers: Option<Producers>,
        #[serde(default)]
        pub handler: Handler,
        #[serde(default)]
        pub worker: Worker,
        #[serde(default)]
        pub faults: Faults,
        /// One `[matrix]` table, or several `[[matrix]]` blocks: parsed block by block so
        /// an error can name the block.
        pub matrix: toml::Value,
        pub trial: Trial,
        #[serde(default)]
        pub slo: Option<crate::slo::RawSlos>,
        #[serde(default)]
        pub gate: Vec<Gate>,
        /// `compare`'s relative thresholds per metric, replacing its defaults.
        #[serde(default)]
        pub thresholds: BTreeMap<String, f64>,
        #[serde(default)]
        pub embedded: Embedded,
        #[serde(default)]
        pub mssql: Mssql,
        /// `[session.<backend>]`: settings for every worker connection of that backend.
        #[serde(default)]
        pub session: BTreeMap<String, BTreeMap<String, toml::Value>>,
        /// `[strategies.<name>]`: the workload's own claim statements.
        #[serde(default)]
        pub strategies: BTreeMap<String, CustomStrategy>,
        /// `[layouts.<name>]`: the workload's own index DDL.
        #[serde(default)]
        pub layouts: BTreeMap<String, CustomLayout>,
    }

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    pub struct CustomLayout {
        pub postgres: PathBuf,
    }

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    pub struct CustomStrategy {
        #[serde(default)]
        pub postgres: Option<PathBuf>,
        #[serde(default)]
        pub mysql: Option<PathBuf>,
        #[serde(default)]
        pub mssql: Option<PathBuf>,
        #[serde(default)]
        pub promises: Vec<String>,
    }

    fn default_seed() -> u64 {
        42
    }

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    pub struct Population {
        pub backlog: i64,
        #[serde(default = "default_payload")]
        pub payload_bytes: i64,
        #[serde(default)]
        pub scheduled_share: f64,
        #[serde(default = "default_scheduled_within")]
        pub scheduled_within_s: f64,
        pub queues: Vec<Queue>,
        #[serde(default)]
        pub priorities: Vec<Priority>,
        #[serde(default)]
        pub history: Option<History>,
    }

    /// Rows that cannot run, left in the hot table beside the backlog.
    #[derive(Debug, Deserialize, Clone, Copy)]
    #[serde(deny_unknown_fields)]
    pub struct History {
        #[serde(default)]
        pub finished: i64,
        #[serde(default)]
        pub failed: i64,
        #[serde(default)]
        pub future: i64,
        #[serde(default)]
        pub paused: i64,
    }

    fn default_payload() -> i64 {
        64
    }
    fn default_scheduled_within() -> f64 {
        5.0
    }

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    pub struct Queue {
        pub name: String,
        #[serde(default = "one")]
        pub weight: f64,
        pub max_workers: Option<i64>,
        #[serde(default)]
        pub paused: bool,
        #[serde(default = "yes")]
        pub active: bool,
        /// Every job of this queue gets this priority, instead of one drawn from
        /// `population.priorities`: how a workload puts one queue's jobs first.
        #[serde(default)]
        pub priority: Option<i32>,
    }

    fn one() -> f64 {
        1.0
    }
    fn yes() -> bool {
        true
    }

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    pub struct Priority {
        pub value: i32,
        #[serde(default = "one")]
        pub weight: f64,
    }

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    pub struct Producers {
        pub rate_per_s: f64,
        #[serde(default)]
        pub arrivals: super::Arrivals,
    }

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    pub struct Handler {
        #[serde(default)]
        pub mode: super::HandlerMode,
        #[serde(default)]
        pub duration: Option<super::DurationDist>,
        #[serde(default)]
        pub failure_rate: f64,
        #[serde(default = "default_attempts")]
        pub max_attempts: i64,
        #[serde(default = "default_retry_delay")]
        pub retry_delay_ms: f64,
        #[serde(default = "yes")]
        pub start_gate: bool,
        #[serde(default)]
        pub heartbeat_ms: Option<f64>,
        #[serde(default)]
        pub complete: super::Completion,
    }

    impl Default for Handler {
        fn default() -> Self {
            Handler {
                complete: super::Completion::PerJob,
                mode: super::HandlerMode::Full,
                duration: None,
                failure_rate: 0.0,
                max_attempts: default_attempts(),
                retry_delay_ms: default_retry_delay(),
                start_gate: true,
                heartbeat_ms: None,
            }
        }
    }

    fn default_attempts() -> i64 {
        3
    }
    fn default_retry_delay() -> f64 {
        100.0
    }

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    pub struct Worker {
        #[serde(default = "default_backoff")]
        pub empty_backoff_ms: f64,
        #[serde(default = "default_backoff_max")]
        pub empty_backoff_max_ms: f64,
    }

    impl Default for Worker {
        fn default() -> Self {
            Worker {
                empty_backoff_ms: default_backoff(),
                empty_backoff_max_ms: default_backoff_max(),
            }
        }
    }

    fn default_backoff() -> f64 {
        2.0
    }
    fn default_backoff_max() -> f64 {
        50.0
    }

    #[derive(Debug, Deserialize, Default)]
    #[serde(deny_unknown_fields)]
    pub struct Faults {
        #[serde(default)]
        pub abandon_rate: f64,
        #[serde(default)]
        pub lease_s: Option<f64>,
        #[serde(default)]
        pub crash_after_start_rate: f64,
        #[serde(default)]
        pub poison_share: f64,
        #[serde(default)]
        pub hang_rate: f64,
        #[serde(default)]
        pub hang_s: Option<f64>,
        #[serde(default)]
        pub kill_connections_at_s: Vec<f64>,
        #[serde(default)]
        pub kill_connections_every_s: Option<f64>,
        #[serde(default)]
        pub restart_db_at_s: Vec<f64>,
        #[serde(default)]
        pub hold_snapshot_s: Option<Vec<f64>>,
        #[serde(default)]
        pub restart_command: Option<String>,
    }

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    pub struct Matrix {
        #[serde(default)]
        pub name: Option<String>,
        #[serde(default)]
        pub backends: Option<Vec<BackendKind>>,
        pub strategies: Vec<String>,
        pub index_layouts: Vec<String>,
        pub workers: Vec<i64>,
        pub batch_sizes: Vec<i64>,
        // The phase's own settings, each replacing the workload's for this block.
        #[serde(default)]
        pub backlog: Option<i64>,
        #[serde(default)]
        pub arrival_rate_per_s: Option<f64>,
        #[serde(default)]
        pub arrival_rate_from: Option<RateFrom>,
        #[serde(default)]
        pub handler_mode: Option<super::HandlerMode>,
        #[serde(default)]
        pub complete: Option<super::Completion>,
        #[serde(default)]
        pub empty_backoff_max_ms: Option<f64>,
        #[serde(default)]
        pub history: Option<History>,
        #[serde(default)]
        pub warmup_s: Option<f64>,
        #[serde(default)]
        pub duration_s: Option<f64>,
        #[serde(default)]
        pub repetitions: Option<i64>,
        #[serde(default)]
        pub search: Option<RateSearch>,
        /// This block's own `faults.hold_snapshot_s` (`[]`: none), so one workload can run
        /// the same cell with and without a held snapshot side by side.
        #[serde(default)]
        pub hold_snapshot_s: Option<Vec<f64>>,
        /// `[matrix.session.<backend>]`: this block's session settings, on top of the
        /// workload's (a block's value wins for the same name).
        #[serde(default)]
        pub session: BTreeMap<String, BTreeMap<String, toml::Value>>,
    }

    /// `arrival_rate_from = { phase = "batch", workers = 1, batch_size = 1, times = 1.5 }`
    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    pub struct RateFrom {
        pub phase: String,
        pub workers: u32,
        pub batch_size: u32,
        pub times: f64,
    }

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    pub struct Gate {
        pub check: String,
        #[serde(default)]
        pub phase: Option<String>,
        #[serde(default)]
        pub strategy: Option<String>,
        #[serde(default)]
        pub index_layout: Option<String>,
        #[serde(default)]
        pub workers: Option<u32>,
        #[serde(default)]
        pub batch_size: Option<u32>,
    }

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    pub struct RateSearch {
        pub start_per_s: f64,
        #[serde(default = "default_steps")]
        pub max_trials: i64,
        #[serde(default = "default_tolerance")]
        pub tolerance: f64,
    }

    fn default_steps() -> i64 {
        10
    }
    fn default_tolerance() -> f64 {
        0.1
    }

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    pub struct Trial {
        #[serde(default)]
        pub warmup_s: f64,
        #[serde(default)]
        pub duration_s: Option<f64>,
        #[serde(default)]
        pub stop: super::StopRule,
        #[serde(default = "default_max_s")]
        pub max_s: f64,
        #[serde(default = "one_i")]
        pub repetitions: i64,
        #[serde(default = "default_sample")]
        pub sample_interval_ms: f64,
    }

    fn default_max_s() -> f64 {
        120.0
    }
    fn one_i() -> i64 {
        1
    }
    fn default_sample() -> f64 {
        200.0
    }

    #[derive(Debug, Deserialize, Default)]
    #[serde(deny_unknown_fields)]
    pub struct Embedded {
        #[serde(default)]
        pub settings: BTreeMap<String, toml::Value>,
    }

    #[derive(Debug, Deserialize, Default)]
    #[serde(deny_unknown_fields)]
    pub struct Mssql {
        #[serde(default)]
        pub lock_escalation: Option<super::LockEscalation>,
    }
}

/// SQL Server's LOCK_ESCALATION option for the hot table (`[mssql] lock_escalation`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LockEscalation {
    /// SQL Server's default: many row locks in one statement become a table lock.
    #[default]
    Table,
    /// To the partition on a partitioned table, else the table.
    Auto,
    /// Never escalate (the lock memory limit still applies).
    Disable,
}

impl LockEscalation {
    pub fn as_sql(self) -> &'static str {
        match self {
            LockEscalation::Table => "TABLE",
            LockEscalation::Auto => "AUTO",
            LockEscalation::Disable => "DISABLE",
        }
    }
}

/// How a worker acknowledges the jobs it finished.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Completion {
    /// One `complete` statement per job, as soon as it finishes.
    #[default]
    PerJob,
    /// One statement for every job of the batch that succeeded, after the batch: fewer
    /// round trips and commits, but a finished job stays `processing` until then (a
    /// crash in between re-runs it after the lease).
    Batched,
}

/// What a worker does with a claimed job.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum HandlerMode {
    /// claim, start, handler, complete or fail: the whole lifecycle.
    #[default]
    Full,
    /// claim and drop: measures the claim path alone; claimed rows stay fetched.
    ClaimOnly,
}

/// The simulated handler's run time. Times are milliseconds; tokio's timer rounds a
/// sleep up to the next millisecond, so sub-millisecond means are only approximate.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "dist", rename_all = "kebab-case", deny_unknown_fields)]
pub enum DurationDist {
    Fixed { ms: f64 },
    Uniform { min_ms: f64, max_ms: f64 },
    Exponential { mean_ms: f64 },
    Lognormal { median_ms: f64, sigma: f64 },
}

/// When a trial ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StopRule {
    /// After warm-up plus `duration_s`.
    #[default]
    Duration,
    /// When no job is left in an unpaused queue (capped by `max_s`).
    Drain,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct QueueSpec {
    pub name: String,
    pub weight: f64,
    pub max_workers: Option<i32>,
    pub paused: bool,
    pub active: bool,
    /// Every job of this queue has this priority (else one drawn from the population's).
    #[serde(default)]
    pub priority: Option<i32>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Population {
    pub backlog: u64,
    pub payload_bytes: u32,
    pub scheduled_share: f64,
    pub scheduled_within_s: f64,
    pub queues: Vec<QueueSpec>,
    /// (priority, weight); never empty (defaults to priority 0).
    pub priorities: Vec<(i32, f64)>,
    /// Finished and failed rows left in the hot table (no archive step), seeded after
    /// the backlog: history no claim may take, which scans may still have to read.
    #[serde(default)]
    pub history: History,
}

/// `population.history`: rows left in the hot table that no claim may take.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct History {
    /// Finished jobs no archive step moved (status 3).
    pub finished: u64,
    /// Failed jobs kept where they failed (status 4).
    pub failed: u64,
    /// Pending jobs scheduled a day or more ahead.
    #[serde(default)]
    pub future: u64,
    /// Pending jobs of a paused queue (`claimbench-paused`), created over the past day:
    /// ahead of new jobs in fetch order.
    #[serde(default)]
    pub paused: u64,
}

impl History {
    pub fn rows(&self) -> u64 {
        self.finished + self.failed + self.future + self.paused
    }

    /// The history rows that are pending (future-dated or paused): they stay pending
    /// through a trial and count with the seeded jobs.
    pub fn pending(&self) -> u64 {
        self.future + self.paused
    }
}

impl Population {
    /// Each queue's own priority, in the workload's order (`None`: drawn).
    pub fn queue_priorities(&self) -> Vec<Option<i32>> {
        self.queues.iter().map(|q| q.priority).collect()
    }

    /// Jobs a claim may take at the trial's start: the backlog in unpaused, active
    /// queues that is not scheduled ahead (producers add to it later).
    pub fn eligible_at_start(&self) -> u64 {
        let total: f64 = self.queues.iter().map(|q| q.weight).sum();
        let open: f64 = self
            .queues
            .iter()
            .filter(|q| !q.paused && q.active)
            .map(|q| q.weight)
            .sum();
        let share = if total > 0.0 { open / total } else { 0.0 };
        (self.backlog as f64 * share * (1.0 - self.scheduled_share)).round() as u64
    }

    /// Lower bounds of each queue's share of [0, 1), for the server-side `width_bucket`.
    pub fn queue_bounds(&self) -> (Vec<String>, Vec<f64>) {
        let names = self.queues.iter().map(|q| q.name.clone()).collect();
        (names, lower_bounds(self.queues.iter().map(|q| q.weight)))
    }

    /// Every priority a job can have: the drawn ones and the queues' own, for the
    /// sampler's one probe per priority.
    pub fn all_priorities(&self) -> Vec<i32> {
        let mut all: Vec<i32> = self.priorities.iter().map(|p| p.0).collect();
        all.extend(self.queues.iter().filter_map(|q| q.priority));
        all.sort_unstable();
        all.dedup();
        all
    }

    pub fn priority_bounds(&self) -> (Vec<i32>, Vec<f64>) {
        let values = self.priorities.iter().map(|p| p.0).collect();
        (values, lower_bounds(self.priorities.iter().map(|p| p.1)))
    }
}

/// Cumulative lower bounds of normalised weights: [0, w0, w0+w1, ...]. Buckets with
/// zero weight get an empty interval (equal bounds), which width_bucket never selects
/// except when it is the last bucket; validation rejects an all-zero list.
fn lower_bounds(weights: impl Iterator<Item = f64>) -> Vec<f64> {
    let w: Vec<f64> = weights.collect();
    let total: f64 = w.iter().sum();
    let mut acc = 0.0;
    let mut out = Vec::with_capacity(w.len());
    for x in w {
        out.push(acc / total);
        acc += x;
    }
    out
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Handler {
    pub mode: HandlerMode,
    pub duration: Option<DurationDist>,
    pub failure_rate: f64,
    pub max_attempts: u32,
    pub retry_delay: Duration,
    pub start_gate: bool,
    /// How often a running handler extends its lease (`heartbeat_at`); `None`: never, so
    /// a handler that outlives `faults.lease_s` is rescued while it runs.
    #[serde(default)]
    pub heartbeat: Option<Duration>,
    /// Per job, or once per batch (`handler.complete`).
    #[serde(default)]
    pub complete: Completion,
}

/// One matrix block: the cells it expands to, and the phase settings that replace the
/// workload's for its trials. A workload has one (`[matrix]`) or several (`[[matrix]]`),
/// so one file can compare strategies at one batch size and sweep another dimension
/// without the full cartesian product.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Matrix {
    /// The phase's name, part of every cell's key ("" for a lone `[matrix]`).
    pub name: String,
    pub strategies: Vec<Strategy>,
    pub index_layouts: Vec<String>,
    pub workers: Vec<u32>,
    pub batch_sizes: Vec<u32>,
    pub phase: PhaseSettings,
}

/// What a matrix block changes for its own trials; `None` keeps the workload's value.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct PhaseSettings {
    pub backlog: Option<u64>,
    /// Open-loop arrivals per second; `Some(0.0)` turns the workload's producers off.
    pub arrival_rate_per_s: Option<f64>,
    /// Arrivals at a multiple of what a cell of an earlier block measured in this run
    /// (the runner sets the rate before each cell), so the story holds on any host.
    #[serde(default)]
    pub arrival_rate_from: Option<RateFrom>,
    pub handler_mode: Option<HandlerMode>,
    /// Replaces `handler.complete` for this block.
    #[serde(default)]
    pub complete: Option<Completion>,
    /// Replaces `worker.empty_backoff_max_ms` (the longest idle poll) for this block.
    #[serde(default)]
    pub empty_backoff_max: Option<Duration>,
    /// Replaces `population.history` for this block.
    #[serde(default)]
    pub history: Option<History>,
    pub warmup: Option<Duration>,
    pub duration: Option<Duration>,
    pub repetitions: Option<u32>,
    /// Search the sustainable arrival rate instead of running one trial per cell.
    pub search: Option<RateSearch>,
    /// Replaces `faults.hold_snapshot_s` for this block (`Some(None)`: no hold).
    #[serde(default)]
    pub hold_snapshot: Option<Option<(Duration, Duration)>>,
    /// Session settings of this block, over the workload's.
    #[serde(default)]
    pub session_settings: Vec<crate::session_settings::SessionSetting>,
}

/// `arrival_rate_from`: `times` the steady throughput (claimed/s in a claim-only phase)
/// of the cell of block `phase` with this cell's backend, strategy and layout at
/// `workers` and `batch_size`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RateFrom {
    pub phase: String,
    pub workers: u32,
    pub batch_size: u32,
    pub times: f64,
}

impl RateFrom {
    /// "1.5 x the claim rate of 1 worker, batch 1, in phase batch".
    pub fn describe(&self) -> String {
        format!(
            "{} x what {} worker{} at batch {} took in phase {}",
            self.times,
            self.workers,
            if self.workers == 1 { "" } else { "s" },
            self.batch_size,
            self.phase
        )
    }
}

/// The arrival-rate search of a phase: geometric steps up from `start_per_s` until the
/// SLOs break, then bisection, each step its own trial, at most `max_trials` per cell.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RateSearch {
    pub start_per_s: f64,
    pub max_trials: u32,
    /// Stop bisecting when the bracket is narrower than this share of its low end.
    pub tolerance: f64,
}

/// How the open-loop producer spaces arrivals.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Arrivals {
    /// Exponential gaps (a Poisson process), drawn from the workload's seed: how
    /// independent clients arrive, bursts included.
    #[default]
    Poisson,
    /// Evenly spaced.
    Uniform,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Trial {
    pub warmup: Duration,
    pub duration: Option<Duration>,
    pub stop: StopRule,
    pub max: Duration,
    pub repetitions: u32,
    /// `None`: no sampler (no oldest-pending, lock-wait or max-workers evidence), so
    /// the database carries exactly the workers' load, e.g. to compare with pgbench.
    pub sample_interval: Option<Duration>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Faults {
    /// Share of claimed jobs whose worker crashes before starting them.
    pub abandon_rate: f64,
    pub lease: Option<Duration>,
    /// Share of started runs whose worker crashes before finishing them: the row stays
    /// processing, with no effect, until its lease expires.
    #[serde(default)]
    pub crash_after_start_rate: f64,
    /// Share of jobs (chosen by id, the same in every trial) whose handler always fails:
    /// they retry until `handler.max_attempts`, then go to the dead-letter table.
    #[serde(default)]
    pub poison_share: f64,
    /// Share of runs whose handler hangs for `hang` without heartbeats: the rescuer
    /// returns the job while the hung handler still believes it owns it.
    #[serde(default)]
    pub hang_rate: f64,
    #[serde(default)]
    pub hang: Duration,
    /// Instants after the trial's start at which the server ends every worker
    /// connection (`pg_terminate_backend`, MySQL's and SQL Server's `KILL`).
    #[serde(default)]
    pub kill_connections_at: Vec<Duration>,
    /// And one such kill every this often, from the trial's start.
    #[serde(default)]
    pub kill_connections_every: Option<Duration>,
    /// Instants after the trial's start at which the database server restarts: the
    /// embedded PostgreSQL is stopped in immediate mode and started again; a `--db`
    /// server only through the command the person running claimbench gives
    /// (`--restart-command`): a workload file never carries one.
    #[serde(default)]
    pub restart_at: Vec<Duration>,
    /// From when to when (since the trial's start) a session holds one snapshot open.
    #[serde(default)]
    pub hold_snapshot: Option<(Duration, Duration)>,
}

impl Faults {
    /// The instants of every connection kill in a trial planned to last `planned`,
    /// earliest first.
    pub fn kill_schedule(&self, planned: Duration) -> Vec<Duration> {
        let mut at: Vec<Duration> = self
            .kill_connections_at
            .iter()
            .copied()
            .filter(|t| *t < planned)
            .collect();
        if let Some(every) = self.kill_connections_every {
            let mut t = every;
            while t < planned {
                at.push(t);
                t += every;
            }
        }
        at.sort();
        at.dedup();
        at
    }

    pub fn kills_connections(&self) -> bool {
        !self.kill_connections_at.is_empty() || self.kill_connections_every.is_some()
    }

    /// Whether the server ends connections mid-trial (kills or restarts): then every
    /// task reconnects and goes on, instead of ending the trial.
    pub fn breaks_connections(&self) -> bool {
        self.kills_connections() || !self.restart_at.is_empty()
    }

    /// Whether a fault can leave a job claimed or processing when the trial ends.
    pub fn strands_jobs(&self) -> bool {
        self.abandon_rate > 0.0
            || self.crash_after_start_rate > 0.0
            || self.hang_rate > 0.0
            || self.breaks_connections()
    }

    /// Whether `job` is one of the poison jobs: a hash of its id and the seed below
    /// `poison_share`, so the same jobs are poison in every trial and repetition.
    pub fn is_poison(&self, job: i64, seed: u64) -> bool {
        if self.poison_share <= 0.0 {
            return false;
        }
        // splitmix64's finalizer: every bit of the id moves every bit of the result.
        let mut z = (job as u64) ^ seed;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        (z as f64 / u64::MAX as f64) < self.poison_share
    }
}

/// A validated workload: everything the runner needs, nothing it must re-check.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Workload {
    pub name: String,
    pub description: String,
    pub seed: u64,
    pub population: Population,
    pub producer_rate_per_s: Option<f64>,
    #[serde(default)]
    pub arrivals: Arrivals,
    pub handler: Handler,
    pub empty_backoff: Duration,
    pub empty_backoff_max: Duration,
    pub faults: Faults,
    /// Backends to run every cell on, side by side. Empty: the backends of the `--db`
    /// URLs given (the embedded PostgreSQL when none is); `main` fills it in before a run.
    pub backends: Vec<BackendKind>,
    /// Never empty. A workload made by [`Workload::phase`] holds only that phase's.
    pub matrices: Vec<Matrix>,
    pub trial: Trial,
    /// Service-level objectives the run's cells are judged by (`recommend`, verdict).
    #[serde(default)]
    pub slos: Vec<crate::slo::Slo>,
    /// Absolute gates: a matching cell that misses one fails the run (exit 3).
    #[serde(default)]
    pub gates: Vec<crate::results::Gate>,
    /// `compare`'s thresholds for runs of this workload (`[thresholds]`), by metric.
    #[serde(default)]
    pub thresholds: Vec<(String, f64)>,
    /// PostgreSQL settings for the embedded cluster (`-c name=value`).
    pub embedded_settings: BTreeMap<String, String>,
    /// Set on every worker connection of their backend (`[session.<backend>]`).
    #[serde(default)]
    pub session_settings: Vec<crate::session_settings::SessionSetting>,
    /// SQL Server only: the hot table's LOCK_ESCALATION.
    #[serde(default)]
    pub lock_escalation: LockEscalation,
    /// The strategies the workload declares, with their statements as read.
    #[serde(default)]
    pub custom_strategies: Vec<crate::strategy::custom::Declared>,
    /// The index layouts the workload declares, with their DDL as read.
    #[serde(default)]
    pub custom_layouts: Vec<crate::custom_layout::DeclaredLayout>,
    /// The file's text and its SHA-256, so a run records exactly what it ran.
    pub source_text: String,
    pub source_hash: String,
    pub source_path: PathBuf,
}

/// Connection kills closer together than this would leave workers no time to reconnect.
pub const MIN_KILL_EVERY_S: f64 = 0.1;

impl Workload {
    pub fn load(path: &Path) -> Result<Workload, WorkloadError> {
        Workload::load_with(path, Files::BesideOnly)
    }

    /// [`Workload::load`], with the rule for the statement and layout files it names.
    pub fn load_with(path: &Path, files: Files) -> Result<Workload, WorkloadError> {
        let text = std::fs::read_to_string(path).map_err(|source| WorkloadError::Read {
            file: path.to_path_buf(),
            source,
        })?;
        Workload::parse_with(path, &text, files)
    }

    /// Parse and validate `text`; `path` names it in messages and the record, and its
    /// folder is where declared files are read from.
    pub fn parse(path: &Path, text: &str) -> Result<Workload, WorkloadError> {
        Workload::parse_with(path, text, Files::BesideOnly)
    }

    fn parse_with(path: &Path, text: &str, files: Files) -> Result<Workload, WorkloadError> {
        let raw: raw::Workload = toml_errors::parse(text).map_err(|e| match e.field {
            Some(field) => WorkloadError::Invalid {
                file: path.to_path_buf(),
                field,
                message: e.message,
            },
            None => WorkloadError::Parse {
                file: path.to_path_buf(),
                message: e.message,
            },
        })?;
        let mut v = Validator {
            file: path,
            files,
            declared: Vec::new(),
            layouts: Vec::new(),
        };
        let declared = v.declare_strategies(&raw.strategies)?;
        let layouts = v.declare_layouts(&raw.layouts)?;
        v.declared = declared.iter().map(|(s, _)| *s).collect();
        v.layouts = layouts.iter().map(|l| l.name.clone()).collect();
        let mut w = v.workload(raw, text)?;
        coherence::check(&w).map_err(|(field, message)| v.err(&field, message))?;
        w.custom_strategies = declared.into_iter().map(|(_, d)| d).collect();
        w.custom_layouts = layouts;
        if !w.custom_strategies.is_empty() || !w.custom_layouts.is_empty() {
            // The files are part of what ran: a changed file is a changed workload.
            let mut h = Sha256::new();
            h.update(text.as_bytes());
            for sql in w.custom_strategies.iter().map(|d| &d.sql) {
                h.update(sql.as_bytes());
            }
            for sql in w.custom_layouts.iter().map(|d| &d.sql) {
                h.update(sql.as_bytes());
            }
            w.source_hash = hex::encode(h.finalize());
        }
        Ok(w)
    }

    /// How many trials the matrices expand to (a rate search counts its most).
    pub fn trial_count(&self) -> usize {
        self.matrices
            .iter()
            .map(|m| {
                let per_cell = match m.phase.search {
                    Some(s) => s.max_trials,
                    None => m.phase.repetitions.unwrap_or(self.trial.repetitions),
                };
                self.backends.len().max(1)
                    * m.strategies.len()
                    * m.index_layouts.len()
                    * m.workers.len()
                    * m.batch_sizes.len()
                    * per_cell as usize
            })
            .sum()
    }

    /// The workload as the trials of matrix block `i` see it: the block's phase
    /// settings in place of the workload's, and only that block.
    pub fn phase(&self, i: usize) -> Workload {
        let m = &self.matrices[i];
        let p = &m.phase;
        let mut w = self.clone();
        if let Some(b) = p.backlog {
            w.population.backlog = b;
        }
        if let Some(r) = p.arrival_rate_per_s {
            w.producer_rate_per_s = (r > 0.0).then_some(r);
        }
        if let Some(mode) = p.handler_mode {
            w.handler.mode = mode;
        }
        if let Some(c) = p.complete {
            w.handler.complete = c;
        }
        if let Some(h) = p.history {
            w.population.history = h;
        }
        if let Some(hold) = p.hold_snapshot {
            w.faults.hold_snapshot = hold;
        }
        if let Some(d) = p.empty_backoff_max {
            w.empty_backoff_max = d;
            w.empty_backoff = w.empty_backoff.min(d);
        }
        if let Some(d) = p.warmup {
            w.trial.warmup = d;
        }
        if let Some(d) = p.duration {
            w.trial.duration = Some(d);
            w.trial.stop = StopRule::Duration;
        }
        if let Some(n) = p.repetitions {
            w.trial.repetitions = n;
        }
        for s in &p.session_settings {
            w.session_settings
                .retain(|o| o.backend != s.backend || o.name != s.name);
            w.session_settings.push(s.clone());
        }
        w.matrices = vec![m.clone()];
        w
    }

    /// Every index layout any block uses, once each, in order of first use.
    pub fn index_layouts(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for l in self.matrices.iter().flat_map(|m| &m.index_layouts) {
            if !out.contains(l) {
                out.push(l.clone());
            }
        }
        out
    }

    /// Whether jobs arrive during block `i`'s trials: producers, a rate search, or a rate
    /// derived from an earlier block.
    pub fn block_has_arrivals(&self, i: usize) -> bool {
        let p = &self.matrices[i].phase;
        self.phase(i).producer_rate_per_s.is_some()
            || p.search.is_some()
            || p.arrival_rate_from.is_some()
    }

    /// Refuses a workload in which no job can be claimed, for a command that would
    /// measure it (`run`, `validate`): it would measure empty polls only.
    pub fn check_runnable(&self) -> Result<(), WorkloadError> {
        coherence::something_to_claim(self).map_err(|(field, message)| WorkloadError::Invalid {
            file: self.source_path.clone(),
            field,
            message,
        })
    }

    /// How long a trial's clock runs at most: warm-up plus duration, or the drain cap.
    /// Fault instants count from the same start.
    pub fn planned_trial(&self) -> Duration {
        match self.trial.stop {
            StopRule::Duration => self.trial.warmup + self.trial.duration.expect("validated"),
            StopRule::Drain => self.trial.max,
        }
    }

    /// `--repetitions N`: every block runs N repetitions, whatever its own setting.
    pub fn set_repetitions(&mut self, n: u32) {
        self.trial.repetitions = n;
        for m in &mut self.matrices {
            m.phase.repetitions = None;
        }
    }
}

/// The longest queue name every backend's schema stores: MySQL's `VARCHAR(200)`
/// (PostgreSQL's `text` has no limit; SQL Server's `varchar(255)` is checked per backend,
/// see [`queue_name_fits`]).
pub const MAX_QUEUE_NAME_CHARS: usize = 200;

/// A queue name every backend can store and every report can show: no control
/// characters (PostgreSQL's text refuses NUL, and a newline breaks every table), and at
/// most [`MAX_QUEUE_NAME_CHARS`] characters.
fn check_queue_name(name: &str) -> Result<(), String> {
    if let Some(c) = name.chars().find(|c| c.is_control()) {
        return Err(format!(
            "`{}` holds the control character {c:?}; give printable text",
            name.escape_debug()
        ));
    }
    let n = name.chars().count();
    if n > MAX_QUEUE_NAME_CHARS {
        return Err(format!(
            "is {n} characters long; give at most {MAX_QUEUE_NAME_CHARS} (the MySQL schema's VARCHAR({MAX_QUEUE_NAME_CHARS}))"
        ));
    }
    Ok(())
}

/// Whether `name` fits `kind`'s queue columns: SQL Server's are `varchar(255)`, not
/// Unicode, so a name outside printable ASCII would be stored as another name.
pub fn queue_name_fits(kind: BackendKind, name: &str) -> Result<(), String> {
    if kind == BackendKind::Mssql && !name.chars().all(|c| c.is_ascii_graphic() || c == ' ') {
        return Err(format!(
            "`{name}` holds characters outside printable ASCII, which SQL Server's varchar(255) queue columns do not store as given; use ASCII letters, digits and punctuation"
        ));
    }
    Ok(())
}

/// Where the statement and layout files a workload names may be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Files {
    /// In the workload's folder or below it: a workload from someone else cannot make
    /// claimbench read (and record in run.json) a file elsewhere on the machine.
    BesideOnly,
    /// Anywhere (`--allow-outside-files`).
    Anywhere,
}

struct Validator<'a> {
    file: &'a Path,
    files: Files,
    /// The strategies `[strategies.<name>]` declared, for the matrices to name.
    declared: Vec<Strategy>,
    /// The layouts `[layouts.<name>]` declared.
    layouts: Vec<String>,
}

/// The longest time a workload may give anywhere: a week.
const MAX_TIME_S: f64 = 604_800.0;

/// A number as a person wrote it, or in exponent form when it would print hundreds of
/// digits (1e300 is one line, not a screenful).
fn short_float(v: f64) -> String {
    if v.abs() >= 1e9 {
        format!("{v:e}")
    } else {
        v.to_string()
    }
}

impl Validator<'_> {
    fn err(&self, field: &str, message: impl Into<String>) -> WorkloadError {
        WorkloadError::Invalid {
            file: self.file.to_path_buf(),
            field: field.to_string(),
            message: message.into(),
        }
    }

    /// A strategy the workload names: declared by it, or built in.
    fn strategy(&self, field: &str, name: &str) -> Result<Strategy, WorkloadError> {
        self.declared
            .iter()
            .copied()
            .find(|s| s.as_str() == name)
            .or_else(|| Strategy::builtin_named(name))
            .ok_or_else(|| {
                let declared: String = self
                    .declared
                    .iter()
                    .map(|s| format!(", {s}"))
                    .collect();
                self.err(
                    field,
                    format!(
                        "unknown strategy `{name}`; expected one of: {}{declared}, or one declared under [strategies.<name>]",
                        Strategy::builtin_names()
                    ),
                )
            })
    }

    /// A layout the workload names: shipped, or declared by it.
    fn layout(&self, field: &str, name: &str) -> Result<(), WorkloadError> {
        if INDEX_LAYOUTS.contains(&name) || self.layouts.iter().any(|l| l == name) {
            return Ok(());
        }
        let declared: String = self.layouts.iter().map(|l| format!(", {l}")).collect();
        Err(self.err(
            field,
            format!(
                "unknown layout `{name}`; expected one of: {}{declared}, or one declared under [layouts.<name>]",
                INDEX_LAYOUTS.join(", ")
            ),
        ))
    }

    /// A file a workload names, relative to the workload's own: its path as shown in
    /// messages and records, and its text.
    fn read_beside(&self, field: &str, path: &Path) -> Result<(String, String), WorkloadError> {
        let dir = match self.file.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        let full = dir.join(path);
        let text = std::fs::read_to_string(&full)
            .map_err(|e| self.err(field, format!("cannot read {}: {e}", full.display())))?;
        if self.files == Files::BesideOnly {
            // Links resolved: a link beside the workload to a file elsewhere is elsewhere.
            let inside = match (dir.canonicalize(), full.canonicalize()) {
                (Ok(d), Ok(f)) => f.starts_with(d),
                _ => false,
            };
            if !inside {
                return Err(self.err(
                    field,
                    format!(
                        "`{}` is outside the workload's folder; keep the file beside the workload (or below it), or pass --allow-outside-files",
                        path.display()
                    ),
                ));
            }
        }
        Ok((full.display().to_string(), text))
    }

    /// Reads and registers `[layouts.<name>]`: each DDL file, relative to the workload.
    fn declare_layouts(
        &self,
        raw: &BTreeMap<String, raw::CustomLayout>,
    ) -> Result<Vec<crate::custom_layout::DeclaredLayout>, WorkloadError> {
        let mut out = Vec::new();
        for (name, l) in raw {
            let field = format!("layouts.{name}.postgres");
            let (file, sql) = self.read_beside(&field, &l.postgres)?;
            let d = crate::custom_layout::DeclaredLayout {
                name: name.clone(),
                file,
                sql,
            };
            crate::custom_layout::declare(&d).map_err(|m| self.err(&field, m))?;
            out.push(d);
        }
        Ok(out)
    }

    /// Reads and registers `[strategies.<name>]`: each statement file, relative to the
    /// workload, with what it promises.
    fn declare_strategies(
        &self,
        raw: &BTreeMap<String, raw::CustomStrategy>,
    ) -> Result<Vec<(Strategy, crate::strategy::custom::Declared)>, WorkloadError> {
        let mut out = Vec::new();
        for (name, c) in raw {
            let f = |x: &str| format!("strategies.{name}.{x}");
            if c.mysql.is_some() || c.mssql.is_some() {
                let which = if c.mysql.is_some() { "mysql" } else { "mssql" };
                return Err(self.err(
                    &f(which),
                    "custom strategies run on PostgreSQL only for now (give `postgres = \"file.sql\"`): MySQL has no RETURNING for a one-statement claim, and no SQL Server runs here to check one",
                ));
            }
            let Some(path) = &c.postgres else {
                return Err(self.err(
                    &f("postgres"),
                    "is missing; give the claim statement's file, relative to this workload",
                ));
            };
            let (file, sql) = self.read_beside(&f("postgres"), path)?;
            let promise = |p: &str| c.promises.iter().any(|x| x == p);
            for p in &c.promises {
                if !["prevents-duplicates", "respects-max-workers"].contains(&p.as_str()) {
                    return Err(self.err(
                        &f("promises"),
                        format!("unknown promise `{p}`; expected prevents-duplicates, respects-max-workers"),
                    ));
                }
            }
            let d = crate::strategy::custom::Declared {
                name: name.clone(),
                file,
                sql,
                prevents_duplicates: promise("prevents-duplicates"),
                respects_max_workers: promise("respects-max-workers"),
            };
            let s =
                crate::strategy::custom::declare(&d).map_err(|m| self.err(&f("postgres"), m))?;
            out.push((s, d));
        }
        Ok(out)
    }

    /// `[from, to]` in seconds since the trial's start, from before to (`[]`, where
    /// `may_be_empty`: no hold).
    fn hold_window(
        &self,
        field: &str,
        w: &[f64],
        may_be_empty: bool,
    ) -> Result<Option<(Duration, Duration)>, WorkloadError> {
        match *w {
            [] if may_be_empty => Ok(None),
            [from, to] if from < to => Ok(Some((
                self.positive_secs(field, from)?,
                self.positive_secs(field, to)?,
            ))),
            _ => Err(self.err(
                field,
                format!(
                    "give [from, to]: two times in seconds since the trial's start, from before to{}",
                    if may_be_empty { " ([] for none)" } else { "" }
                ),
            )),
        }
    }

    fn non_negative(&self, field: &str, v: f64) -> Result<f64, WorkloadError> {
        if v.is_finite() && v >= 0.0 {
            Ok(v)
        } else {
            Err(self.err(field, format!("{v} is not allowed; give a number >= 0")))
        }
    }

    fn positive(&self, field: &str, v: f64) -> Result<f64, WorkloadError> {
        if v.is_finite() && v > 0.0 {
            Ok(v)
        } else {
            Err(self.err(field, format!("{v} is not allowed; give a number > 0")))
        }
    }

    fn share(&self, field: &str, v: f64) -> Result<f64, WorkloadError> {
        if (0.0..=1.0).contains(&v) {
            Ok(v)
        } else {
            Err(self.err(
                field,
                format!("{v} is not allowed; give a share between 0 and 1"),
            ))
        }
    }

    /// A time of `secs` seconds, refused above a week: no trial means more, and
    /// `Duration` (then `Instant` arithmetic) cannot hold every finite float.
    fn bounded(
        &self,
        field: &str,
        secs: f64,
        shown: f64,
        unit: &str,
    ) -> Result<Duration, WorkloadError> {
        if secs <= MAX_TIME_S {
            Ok(Duration::from_secs_f64(secs))
        } else {
            let most = if unit == "ms" {
                MAX_TIME_S * 1000.0
            } else {
                MAX_TIME_S
            };
            Err(self.err(
                field,
                format!(
                    "{} is not allowed; give at most {most} {unit} (a week)",
                    short_float(shown)
                ),
            ))
        }
    }

    fn ms(&self, field: &str, v: f64) -> Result<Duration, WorkloadError> {
        self.bounded(field, self.non_negative(field, v)? / 1000.0, v, "ms")
    }

    fn positive_ms(&self, field: &str, v: f64) -> Result<Duration, WorkloadError> {
        self.bounded(field, self.positive(field, v)? / 1000.0, v, "ms")
    }

    fn secs(&self, field: &str, v: f64) -> Result<Duration, WorkloadError> {
        self.bounded(field, self.non_negative(field, v)?, v, "s")
    }

    fn positive_secs(&self, field: &str, v: f64) -> Result<Duration, WorkloadError> {
        self.bounded(field, self.positive(field, v)?, v, "s")
    }

    fn counts(&self, field: &str, v: &[i64], max: i64) -> Result<Vec<u32>, WorkloadError> {
        if v.is_empty() {
            return Err(self.err(field, "is empty; list at least one value"));
        }
        v.iter()
            .map(|&n| {
                if (1..=max).contains(&n) {
                    Ok(n as u32)
                } else {
                    Err(self.err(field, format!("{n} is not allowed; give 1 to {max}")))
                }
            })
            .collect()
    }

    /// `[faults]`: each rate a share, each time bounded, and the lease every fault that
    /// strands jobs needs.
    fn faults(&self, f: raw::Faults) -> Result<Faults, WorkloadError> {
        let lease = match f.lease_s {
            Some(s) => Some(self.positive_secs("faults.lease_s", s)?),
            None => None,
        };
        let faults = Faults {
            abandon_rate: self.share("faults.abandon_rate", f.abandon_rate)?,
            lease,
            crash_after_start_rate: self
                .share("faults.crash_after_start_rate", f.crash_after_start_rate)?,
            poison_share: self.share("faults.poison_share", f.poison_share)?,
            hang_rate: self.share("faults.hang_rate", f.hang_rate)?,
            // Past the lease by default: a hang shorter than it is only a slow handler.
            hang: match (f.hang_s, lease) {
                (Some(s), _) => self.positive_secs("faults.hang_s", s)?,
                (None, Some(l)) => l * 2,
                (None, None) => Duration::ZERO,
            },
            kill_connections_at: f
                .kill_connections_at_s
                .iter()
                .map(|&t| self.positive_secs("faults.kill_connections_at_s", t))
                .collect::<Result<_, _>>()?,
            kill_connections_every: match f.kill_connections_every_s {
                Some(t) if t.is_finite() && t < MIN_KILL_EVERY_S => {
                    return Err(self.err(
                        "faults.kill_connections_every_s",
                        format!(
                            "{} is not allowed; give at least {MIN_KILL_EVERY_S} s (workers need time to reconnect)",
                            short_float(t)
                        ),
                    ));
                }
                Some(t) => Some(self.positive_secs("faults.kill_connections_every_s", t)?),
                None => None,
            },
            restart_at: f
                .restart_db_at_s
                .iter()
                .map(|&t| self.positive_secs("faults.restart_db_at_s", t))
                .collect::<Result<_, _>>()?,
            hold_snapshot: match f.hold_snapshot_s.as_deref() {
                None => None,
                Some(w) => self.hold_window("faults.hold_snapshot_s", w, false)?,
            },
        };
        if f.restart_command.is_some() {
            return Err(self.err(
                "faults.restart_command",
                "a workload file carries no commands; give it to `claimbench run --restart-command CMD` (or CLAIMBENCH_RESTART_COMMAND) and keep faults.restart_db_at_s here",
            ));
        }
        for (field, on) in [
            (
                "crash_after_start_rate",
                faults.crash_after_start_rate > 0.0,
            ),
            ("hang_rate", faults.hang_rate > 0.0),
        ] {
            if on && faults.lease.is_none() {
                return Err(self.err(
                    "faults.lease_s",
                    format!("is required when faults.{field} > 0: the jobs it strands come back only through the rescuer"),
                ));
            }
        }
        if faults.breaks_connections() && faults.lease.is_none() {
            return Err(self.err(
                "faults.lease_s",
                "is required when connections are killed or the server restarts: the claims a worker held come back only through the rescuer",
            ));
        }
        if faults.abandon_rate > 0.0 && faults.lease.is_none() {
            return Err(self.err(
                "faults.lease_s",
                "is required when faults.abandon_rate > 0: abandoned jobs come back only through the rescuer",
            ));
        }
        Ok(faults)
    }

    fn workload(&self, w: raw::Workload, text: &str) -> Result<Workload, WorkloadError> {
        if !is_plain_name(&w.name) {
            return Err(self.err(
                "name",
                format!("`{}` is not allowed; use letters, digits, - and _", w.name),
            ));
        }
        let population = self.population(w.population)?;
        let handler = self.handler(w.handler)?;
        let (producer_rate_per_s, arrivals) = match w.producers {
            Some(p) => (
                Some(self.non_negative("producers.rate_per_s", p.rate_per_s)?),
                p.arrivals,
            ),
            None => (None, Arrivals::default()),
        };
        let producer_rate_per_s = producer_rate_per_s.filter(|&r| r > 0.0);
        let empty_backoff = self.ms("worker.empty_backoff_ms", w.worker.empty_backoff_ms)?;
        let empty_backoff_max =
            self.ms("worker.empty_backoff_max_ms", w.worker.empty_backoff_max_ms)?;
        if empty_backoff_max < empty_backoff {
            return Err(self.err(
                "worker.empty_backoff_max_ms",
                "is below worker.empty_backoff_ms; give a maximum >= the base",
            ));
        }
        let faults = self.faults(w.faults)?;
        let (backends, matrices) = self.matrices(w.matrix)?;
        let trial = self.trial(w.trial)?;
        for m in &matrices {
            let arrivals = match m.phase.arrival_rate_per_s {
                Some(r) => r > 0.0,
                None => producer_rate_per_s.is_some() || m.phase.arrival_rate_from.is_some(),
            };
            if trial.stop == StopRule::Drain && m.phase.duration.is_none() && arrivals {
                return Err(self.err(
                    "trial.stop",
                    "\"drain\" cannot be combined with producers: the queue never drains; use \"duration\"",
                ));
            }
        }
        let slos = match w.slo {
            Some(raw) => raw
                .parse()
                .map_err(|(field, e)| self.err(&format!("slo.{field}"), e.to_string()))?,
            None => Vec::new(),
        };
        let gates = w
            .gate
            .into_iter()
            .enumerate()
            .map(|(i, g)| self.gate(i, g, &matrices))
            .collect::<Result<Vec<_>, _>>()?;
        let thresholds = w
            .thresholds
            .into_iter()
            .map(|(k, v)| {
                crate::slo::parse_threshold(&format!("{k}={v}"))
                    .map_err(|e| self.err(&format!("thresholds.{k}"), e))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let embedded_settings = self.embedded_settings(w.embedded.settings)?;
        let session_settings = self.session_settings("session", w.session)?;
        Ok(Workload {
            name: w.name,
            description: w.description,
            seed: w.seed,
            population,
            producer_rate_per_s,
            arrivals,
            handler,
            empty_backoff,
            empty_backoff_max,
            faults,
            backends,
            matrices,
            trial,
            slos,
            gates,
            thresholds,
            embedded_settings,
            session_settings,
            lock_escalation: w.mssql.lock_escalation.unwrap_or_default(),
            custom_strategies: Vec::new(),
            custom_layouts: Vec::new(),
            source_text: text.to_string(),
            source_hash: hex::encode(Sha256::digest(text.as_bytes())),
            source_path: self.file.to_path_buf(),
        })
    }

    /// `[embedded.settings]`: names and values the embedded server may take from a
    /// workload (see `embedded::settings`), each later one `-c name=value` argument.
    fn embedded_settings(
        &self,
        settings: BTreeMap<String, toml::Value>,
    ) -> Result<BTreeMap<String, String>, WorkloadError> {
        settings
            .into_iter()
            .map(|(k, v)| {
                let field = format!("embedded.settings.{k}");
                let value = self.setting_value(&field, v)?;
                crate::embedded::settings::check(&k, &value).map_err(|e| self.err(&field, e))?;
                Ok((k, value))
            })
            .collect()
    }

    /// A setting's value as the server reads it: text, a number, or on/off.
    fn setting_value(&self, field: &str, v: toml::Value) -> Result<String, WorkloadError> {
        Ok(match v {
            toml::Value::String(s) => s,
            toml::Value::Integer(i) => i.to_string(),
            toml::Value::Float(f) => f.to_string(),
            toml::Value::Boolean(b) => if b { "on" } else { "off" }.to_string(),
            other => {
                return Err(self.err(
                    field,
                    format!("{other} is not allowed; give a string, number or boolean"),
                ));
            }
        })
    }

    fn session_settings(
        &self,
        prefix: &str,
        by_backend: BTreeMap<String, BTreeMap<String, toml::Value>>,
    ) -> Result<Vec<crate::session_settings::SessionSetting>, WorkloadError> {
        let mut out = Vec::new();
        for (backend, settings) in by_backend {
            let Some(kind) = BackendKind::named(&backend) else {
                return Err(self.err(
                    &format!("{prefix}.{backend}"),
                    "is not a backend; expected postgres, mysql or mssql",
                ));
            };
            for (name, v) in settings {
                let field = format!("{prefix}.{backend}.{name}");
                let value = self.setting_value(&field, v)?;
                crate::session_settings::check(kind, &name, &value)
                    .map_err(|e| self.err(&field, e))?;
                out.push(crate::session_settings::SessionSetting {
                    backend: kind,
                    name,
                    value,
                });
            }
        }
        Ok(out)
    }

    fn population(&self, p: raw::Population) -> Result<Population, WorkloadError> {
        if !(0..=100_000_000).contains(&p.backlog) {
            return Err(self.err(
                "population.backlog",
                format!("{} is not allowed; give 0 to 100000000 jobs", p.backlog),
            ));
        }
        if !(0..=1_000_000).contains(&p.payload_bytes) {
            return Err(self.err(
                "population.payload_bytes",
                format!(
                    "{} is not allowed; give 0 to 1000000 bytes",
                    p.payload_bytes
                ),
            ));
        }
        if p.queues.is_empty() {
            return Err(self.err("population.queues", "is empty; define at least one queue"));
        }
        let mut queues = Vec::with_capacity(p.queues.len());
        for (i, q) in p.queues.into_iter().enumerate() {
            let field = |f: &str| format!("population.queues[{i}].{f}");
            if q.name.is_empty() || queues.iter().any(|x: &QueueSpec| x.name == q.name) {
                return Err(self.err(&field("name"), format!("`{}` is empty or repeated", q.name)));
            }
            check_queue_name(&q.name).map_err(|m| self.err(&field("name"), m))?;
            self.non_negative(&field("weight"), q.weight)?;
            let max_workers = match q.max_workers {
                Some(n) if (1..=i32::MAX as i64).contains(&n) => Some(n as i32),
                Some(n) => {
                    return Err(self.err(
                        &field("max_workers"),
                        format!("{n} is not allowed; give 1 or more, or leave it out for no limit"),
                    ));
                }
                None => None,
            };
            queues.push(QueueSpec {
                name: q.name,
                weight: q.weight,
                max_workers,
                paused: q.paused,
                active: q.active,
                priority: q.priority,
            });
        }
        if queues.iter().all(|q| q.weight == 0.0) {
            return Err(self.err(
                "population.queues",
                "every weight is 0; give one a weight > 0",
            ));
        }
        let mut priorities = Vec::new();
        for (i, pr) in p.priorities.into_iter().enumerate() {
            self.non_negative(&format!("population.priorities[{i}].weight"), pr.weight)?;
            priorities.push((pr.value, pr.weight));
        }
        if priorities.is_empty() {
            priorities.push((0, 1.0));
        }
        if priorities.iter().all(|p| p.1 == 0.0) {
            return Err(self.err(
                "population.priorities",
                "every weight is 0; give one a weight > 0",
            ));
        }
        Ok(Population {
            backlog: p.backlog as u64,
            payload_bytes: p.payload_bytes as u32,
            scheduled_share: self.share("population.scheduled_share", p.scheduled_share)?,
            scheduled_within_s: self
                .non_negative("population.scheduled_within_s", p.scheduled_within_s)?,
            queues,
            priorities,
            history: match p.history {
                Some(h) => self.history("population.history", h)?,
                None => History::default(),
            },
        })
    }

    /// Up to 10 million rows of each kind.
    fn history(&self, field: &str, h: raw::History) -> Result<History, WorkloadError> {
        let count = |what: &str, n: i64| {
            if (0..=10_000_000).contains(&n) {
                Ok(n as u64)
            } else {
                Err(self.err(
                    &format!("{field}.{what}"),
                    format!("{n} is not allowed; give 0 to 10000000 rows"),
                ))
            }
        };
        Ok(History {
            finished: count("finished", h.finished)?,
            failed: count("failed", h.failed)?,
            future: count("future", h.future)?,
            paused: count("paused", h.paused)?,
        })
    }

    fn handler(&self, h: raw::Handler) -> Result<Handler, WorkloadError> {
        if let Some(d) = h.duration {
            let f = "handler.duration";
            match d {
                DurationDist::Fixed { ms } => {
                    self.ms(&format!("{f}.ms"), ms)?;
                }
                DurationDist::Uniform { min_ms, max_ms } => {
                    self.ms(&format!("{f}.min_ms"), min_ms)?;
                    self.ms(&format!("{f}.max_ms"), max_ms)?;
                    if max_ms < min_ms {
                        return Err(self.err(&format!("{f}.max_ms"), "is below min_ms"));
                    }
                }
                DurationDist::Exponential { mean_ms } => {
                    self.positive_ms(&format!("{f}.mean_ms"), mean_ms)?;
                }
                DurationDist::Lognormal { median_ms, sigma } => {
                    self.positive_ms(&format!("{f}.median_ms"), median_ms)?;
                    self.non_negative(&format!("{f}.sigma"), sigma)?;
                }
            }
        }
        if !(1..=1000).contains(&h.max_attempts) {
            return Err(self.err(
                "handler.max_attempts",
                format!("{} is not allowed; give 1 to 1000", h.max_attempts),
            ));
        }
        Ok(Handler {
            mode: h.mode,
            duration: h.duration,
            failure_rate: self.share("handler.failure_rate", h.failure_rate)?,
            max_attempts: h.max_attempts as u32,
            retry_delay: self.ms("handler.retry_delay_ms", h.retry_delay_ms)?,
            start_gate: h.start_gate,
            heartbeat: match h.heartbeat_ms {
                Some(ms) => Some(self.positive_ms("handler.heartbeat_ms", ms)?),
                None => None,
            },
            complete: h.complete,
        })
    }

    /// `[matrix]` (one block, fields named `matrix.x`) or `[[matrix]]` (fields named
    /// `matrix[i].x`), and the backends the blocks list (they must agree).
    #[allow(clippy::type_complexity)]
    fn matrices(
        &self,
        value: toml::Value,
    ) -> Result<(Vec<BackendKind>, Vec<Matrix>), WorkloadError> {
        let blocks: Vec<(String, toml::Value)> = match value {
            toml::Value::Array(items) => items
                .into_iter()
                .enumerate()
                .map(|(i, v)| (format!("matrix[{i}]"), v))
                .collect(),
            other @ toml::Value::Table(_) => vec![("matrix".to_string(), other)],
            other => {
                return Err(self.err(
                    "matrix",
                    format!(
                        "is a {}; give a [matrix] table or [[matrix]] blocks",
                        other.type_str()
                    ),
                ));
            }
        };
        if blocks.is_empty() {
            return Err(self.err("matrix", "is empty; give at least one [[matrix]] block"));
        }
        let many = blocks.len() > 1;
        let mut backends: Option<(String, Vec<BackendKind>)> = None;
        let mut out: Vec<Matrix> = Vec::new();
        for (field, value) in blocks {
            let raw: raw::Matrix = toml_errors::from_value(value).map_err(|(path, message)| {
                let at = if path == "." {
                    field.clone()
                } else {
                    format!("{field}.{path}")
                };
                self.err(&at, message)
            })?;
            if let Some(b) = self.block_backends(&field, raw.backends.clone())? {
                match &backends {
                    Some((first, listed)) if *listed != b => {
                        return Err(self.err(
                            &format!("{field}.backends"),
                            format!("differs from {first}.backends; every block runs on the same backends, so list them once"),
                        ));
                    }
                    Some(_) => {}
                    None => backends = Some((field.clone(), b)),
                }
            }
            let m = self.matrix(&field, raw)?;
            if many && m.name.is_empty() {
                return Err(self.err(
                    &format!("{field}.name"),
                    "is missing; with several [[matrix]] blocks each needs a name (it labels its cells)",
                ));
            }
            if out.iter().any(|o| o.name == m.name) {
                return Err(self.err(
                    &format!("{field}.name"),
                    format!("`{}` names two blocks; give each its own", m.name),
                ));
            }
            out.push(m);
        }
        Ok((backends.map(|b| b.1).unwrap_or_default(), out))
    }

    fn block_backends(
        &self,
        field: &str,
        b: Option<Vec<BackendKind>>,
    ) -> Result<Option<Vec<BackendKind>>, WorkloadError> {
        match b {
            None => Ok(None),
            Some(b) if b.is_empty() => Err(self.err(
                &format!("{field}.backends"),
                "is empty; list backends (postgres, mysql), or leave it out to run on the backend of --db",
            )),
            Some(b) => {
                if let Some(d) = b.iter().enumerate().find(|(i, k)| b[..*i].contains(k)) {
                    return Err(self.err(
                        &format!("{field}.backends"),
                        format!("lists `{}` twice", d.1),
                    ));
                }
                Ok(Some(b))
            }
        }
    }

    fn matrix(&self, field: &str, m: raw::Matrix) -> Result<Matrix, WorkloadError> {
        let f = |x: &str| format!("{field}.{x}");
        if m.strategies.is_empty() {
            return Err(self.err(&f("strategies"), "is empty; list at least one strategy"));
        }
        let strategies = m
            .strategies
            .iter()
            .map(|name| self.strategy(&f("strategies"), name))
            .collect::<Result<Vec<_>, _>>()?;
        if m.index_layouts.is_empty() {
            return Err(self.err(&f("index_layouts"), "is empty; list at least one layout"));
        }
        for l in &m.index_layouts {
            self.layout(&f("index_layouts"), l)?;
        }
        let name = m.name.unwrap_or_default();
        if !name.is_empty() && !is_plain_name(&name) {
            return Err(self.err(
                &f("name"),
                format!("`{name}` is not allowed; use letters, digits, - and _"),
            ));
        }
        let phase = PhaseSettings {
            backlog: match m.backlog {
                Some(b) if (0..=100_000_000).contains(&b) => Some(b as u64),
                Some(b) => {
                    return Err(self.err(
                        &f("backlog"),
                        format!("{b} is not allowed; give 0 to 100000000 jobs"),
                    ));
                }
                None => None,
            },
            arrival_rate_per_s: match m.arrival_rate_per_s {
                Some(r) => Some(self.non_negative(&f("arrival_rate_per_s"), r)?),
                None => None,
            },
            arrival_rate_from: match m.arrival_rate_from {
                Some(r) => {
                    let times = self.positive(&f("arrival_rate_from.times"), r.times)?;
                    if times > 100.0 {
                        return Err(self.err(
                            &f("arrival_rate_from.times"),
                            format!("{times} is not allowed; give a multiple above 0, at most 100"),
                        ));
                    }
                    Some(RateFrom {
                        phase: r.phase,
                        workers: r.workers,
                        batch_size: r.batch_size,
                        times,
                    })
                }
                None => None,
            },
            handler_mode: m.handler_mode,
            complete: m.complete,
            history: match m.history {
                Some(h) => Some(self.history(&f("history"), h)?),
                None => None,
            },
            empty_backoff_max: match m.empty_backoff_max_ms {
                Some(ms) => Some(self.positive_ms(&f("empty_backoff_max_ms"), ms)?),
                None => None,
            },
            warmup: match m.warmup_s {
                Some(s) => Some(self.secs(&f("warmup_s"), s)?),
                None => None,
            },
            duration: match m.duration_s {
                Some(s) => Some(self.positive_secs(&f("duration_s"), s)?),
                None => None,
            },
            repetitions: match m.repetitions {
                Some(n) if (1..=10_000).contains(&n) => Some(n as u32),
                Some(n) => {
                    return Err(self.err(
                        &f("repetitions"),
                        format!("{n} is not allowed; give 1 to 10000"),
                    ));
                }
                None => None,
            },
            search: match m.search {
                Some(s) => Some(self.search(&f("search"), s)?),
                None => None,
            },
            hold_snapshot: match m.hold_snapshot_s.as_deref() {
                Some(w) => Some(self.hold_window(&f("hold_snapshot_s"), w, true)?),
                None => None,
            },
            session_settings: self.session_settings(&f("session"), m.session)?,
        };
        if phase.arrival_rate_from.is_some()
            && (phase.search.is_some() || phase.arrival_rate_per_s.is_some())
        {
            return Err(self.err(
                &f("arrival_rate_from"),
                "cannot be combined with arrival_rate_per_s or search: it sets the rate itself",
            ));
        }
        if phase.search.is_some() && m.arrival_rate_per_s.is_some() {
            return Err(self.err(
                &f("arrival_rate_per_s"),
                "cannot be combined with search: the search chooses the rate",
            ));
        }
        Ok(Matrix {
            name,
            strategies,
            index_layouts: m.index_layouts,
            workers: self.counts(&f("workers"), &m.workers, 512)?,
            batch_sizes: self.counts(&f("batch_sizes"), &m.batch_sizes, 10_000)?,
            phase,
        })
    }

    fn gate(
        &self,
        i: usize,
        g: raw::Gate,
        matrices: &[Matrix],
    ) -> Result<crate::results::Gate, WorkloadError> {
        let field = |f: &str| format!("gate[{i}].{f}");
        let check = crate::slo::Slo::parse(&g.check)
            .map_err(|e| self.err(&field("check"), e.to_string()))?;
        if let Some(p) = &g.phase
            && !matrices.iter().any(|m| &m.name == p)
        {
            return Err(self.err(
                &field("phase"),
                format!("no [[matrix]] block is named `{p}`"),
            ));
        }
        if let Some(l) = &g.index_layout {
            self.layout(&field("index_layout"), l)?;
        }
        let strategy = match &g.strategy {
            Some(name) => Some(self.strategy(&field("strategy"), name)?),
            None => None,
        };
        Ok(crate::results::Gate {
            check,
            phase: g.phase,
            strategy,
            index_layout: g.index_layout,
            workers: g.workers,
            batch_size: g.batch_size,
        })
    }

    fn search(&self, field: &str, s: raw::RateSearch) -> Result<RateSearch, WorkloadError> {
        let start_per_s = self.positive(&format!("{field}.start_per_s"), s.start_per_s)?;
        if !(2..=100).contains(&s.max_trials) {
            return Err(self.err(
                &format!("{field}.max_trials"),
                format!("{} is not allowed; give 2 to 100", s.max_trials),
            ));
        }
        if !(s.tolerance > 0.0 && s.tolerance < 1.0) {
            return Err(self.err(
                &format!("{field}.tolerance"),
                format!(
                    "{} is not allowed; give a share between 0 and 1, e.g. 0.1",
                    s.tolerance
                ),
            ));
        }
        Ok(RateSearch {
            start_per_s,
            max_trials: s.max_trials as u32,
            tolerance: s.tolerance,
        })
    }

    fn trial(&self, t: raw::Trial) -> Result<Trial, WorkloadError> {
        let duration = match t.duration_s {
            Some(s) => Some(self.positive_secs("trial.duration_s", s)?),
            None => None,
        };
        if t.stop == StopRule::Duration && duration.is_none() {
            return Err(self.err(
                "trial.duration_s",
                "is required when trial.stop = \"duration\" (the default)",
            ));
        }
        if !(1..=10_000).contains(&t.repetitions) {
            return Err(self.err(
                "trial.repetitions",
                format!("{} is not allowed; give 1 to 10000", t.repetitions),
            ));
        }
        let sample_interval = self.ms("trial.sample_interval_ms", t.sample_interval_ms)?;
        let sample_interval = if sample_interval.is_zero() {
            if t.stop == StopRule::Drain {
                return Err(self.err(
                    "trial.sample_interval_ms",
                    "0 turns the sampler off, but trial.stop = \"drain\" needs it to see the queue empty",
                ));
            }
            None
        } else if sample_interval < Duration::from_millis(10) {
            return Err(self.err(
                "trial.sample_interval_ms",
                "is below 10; the sampler would load the database it measures (0 turns it off)",
            ));
        } else {
            Some(sample_interval)
        };
        Ok(Trial {
            warmup: self.secs("trial.warmup_s", t.warmup_s)?,
            duration,
            stop: t.stop,
            max: self.positive_secs("trial.max_s", t.max_s)?,
            repetitions: t.repetitions as u32,
            sample_interval,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINIMAL: &str = r#"
name = "t"
[population]
backlog = 100
queues = [{ name = "default" }]
[matrix]
strategies = ["production"]
index_layouts = ["fetch-order"]
workers = [2]
batch_sizes = [5]
[trial]
duration_s = 1
"#;

    fn parse(text: &str) -> Result<Workload, WorkloadError> {
        Workload::parse(Path::new("w.toml"), text)
    }

    fn error_of(text: &str) -> String {
        parse(text).unwrap_err().to_string()
    }

    #[test]
    fn kill_schedule_merges_instants_and_the_period_within_the_trial() {
        let f = Faults {
            abandon_rate: 0.0,
            crash_after_start_rate: 0.0,
            poison_share: 0.0,
            hang_rate: 0.0,
            hang: Duration::ZERO,
            lease: Some(Duration::from_secs(1)),
            kill_connections_at: vec![Duration::from_millis(2500), Duration::from_secs(9)],
            kill_connections_every: Some(Duration::from_secs(2)),
            restart_at: vec![],
            hold_snapshot: None,
        };
        let s = |v: &[u64]| {
            v.iter()
                .map(|&ms| Duration::from_millis(ms))
                .collect::<Vec<_>>()
        };
        // 9 s is past a 7 s trial; 2 s, 4 s and 6 s from the period, 2.5 s listed.
        assert_eq!(
            f.kill_schedule(Duration::from_secs(7)),
            s(&[2000, 2500, 4000, 6000])
        );
        assert!(f.kills_connections());
        let none = Faults {
            kill_connections_at: vec![],
            kill_connections_every: None,
            ..f
        };
        assert!(none.kill_schedule(Duration::from_secs(7)).is_empty());
        assert!(!none.kills_connections());
    }

    #[test]
    fn poison_jobs_are_a_stable_share_chosen_by_id() {
        let w = Workload::parse(
            Path::new("t.toml"),
            &format!("{MINIMAL}\n[faults]\npoison_share = 0.1\n"),
        )
        .unwrap();
        let f = &w.faults;
        let poison = (1..=20_000).filter(|&id| f.is_poison(id, 7)).count();
        assert!((1_800..2_200).contains(&poison), "{poison} of 20000");
        // The same ids under the same seed; other ids under another.
        assert!((1..=200).all(|id| f.is_poison(id, 7) == f.is_poison(id, 7)));
        assert!((1..=200).any(|id| f.is_poison(id, 7) != f.is_poison(id, 8)));
        assert!(
            !Faults {
                poison_share: 0.0,
                ..f.clone()
            }
            .is_poison(1, 7)
        );
    }

    #[test]
    fn minimal_workload_gets_defaults() {
        let w = parse(MINIMAL).unwrap();
        assert!(w.backends.is_empty(), "the backends of --db");
        assert_eq!(w.handler.max_attempts, 3);
        assert!(w.handler.start_gate);
        assert_eq!(w.population.priorities, vec![(0, 1.0)]);
        assert_eq!(w.trial_count(), 1);
        assert_eq!(w.source_hash.len(), 64);
    }

    #[test]
    fn zero_workers_names_file_and_field() {
        let e = error_of(&MINIMAL.replace("workers = [2]", "workers = [0]"));
        assert_eq!(e, "w.toml: matrix.workers: 0 is not allowed; give 1 to 512");
    }

    #[test]
    fn unknown_strategy_lists_the_choices() {
        let e = error_of(&MINIMAL.replace("[\"production\"]", "[\"fastest\"]"));
        assert!(e.starts_with("w.toml: "), "{e}");
        assert!(
            e.contains("matrix.strategies: unknown strategy `fastest`"),
            "{e}"
        );
        assert!(e.contains("production"), "{e}");
        assert!(!e.contains('\n'), "one line: {e}");
    }

    #[test]
    fn unknown_layout_lists_the_choices() {
        let e = error_of(&MINIMAL.replace("[\"fetch-order\"]", "[\"btree\"]"));
        assert!(
            e.contains("matrix.index_layouts: unknown layout `btree`"),
            "{e}"
        );
        assert!(e.contains("pending-partial"), "{e}");
    }

    #[test]
    fn backends_are_listed_once_each_and_not_empty() {
        let with = |b: &str| MINIMAL.replace("[matrix]", &format!("[matrix]\nbackends = {b}"));
        let w = parse(&with("[\"mysql\", \"postgres\"]")).unwrap();
        assert_eq!(w.backends, vec![BackendKind::Mysql, BackendKind::Postgres]);
        assert_eq!(w.trial_count(), 2);
        let e = error_of(&with("[]"));
        assert!(e.contains("matrix.backends: is empty"), "{e}");
        let e = error_of(&with("[\"mysql\", \"mysql\"]"));
        assert!(e.contains("matrix.backends: lists `mysql` twice"), "{e}");
        let e = error_of(&with("[\"oracle\"]"));
        assert!(e.contains("matrix.backends") || e.contains("oracle"), "{e}");
    }

    #[test]
    fn negative_durations_are_refused() {
        let e = error_of(&MINIMAL.replace("duration_s = 1", "duration_s = -1"));
        assert_eq!(
            e,
            "w.toml: trial.duration_s: -1 is not allowed; give a number > 0"
        );
        let e = error_of(&format!(
            "{MINIMAL}\n[handler]\nduration = {{ dist = \"fixed\", ms = -2.5 }}\n"
        ));
        assert_eq!(
            e,
            "w.toml: handler.duration.ms: -2.5 is not allowed; give a number >= 0"
        );
    }

    #[test]
    fn malformed_toml_and_typos_are_one_line_errors() {
        let e = error_of("name = \"t\"\n[population\n");
        assert!(e.starts_with("w.toml: "), "{e}");
        assert!(!e.contains('\n'), "{e}");
        let e = error_of(&MINIMAL.replace("backlog = 100", "backlog = 100\nbaclog = 3"));
        assert!(e.contains("unknown field `baclog`"), "{e}");
    }

    #[test]
    fn abandon_without_lease_is_refused() {
        let e = error_of(&format!("{MINIMAL}\n[faults]\nabandon_rate = 0.1\n"));
        assert!(e.contains("faults.lease_s"), "{e}");
    }

    #[test]
    fn bounds_are_cumulative_lower_bounds() {
        assert_eq!(lower_bounds([3.0, 1.0].into_iter()), vec![0.0, 0.75]);
        assert_eq!(lower_bounds([1.0].into_iter()), vec![0.0]);
    }

    const TWO_BLOCKS: &str = r#"
name = "t"
[population]
backlog = 100
queues = [{ name = "default" }]
[producers]
rate_per_s = 50
[[matrix]]
name = "compare"
strategies = ["production", "naive"]
index_layouts = ["fetch-order"]
workers = [1, 4]
batch_sizes = [10]
arrival_rate_per_s = 0
[[matrix]]
name = "sweep"
strategies = ["production"]
index_layouts = ["pk-only", "fetch-order"]
workers = [2]
batch_sizes = [1, 50]
backlog = 5000
handler_mode = "claim-only"
duration_s = 3
repetitions = 2
[trial]
duration_s = 1
[slo]
claim_p99 = "<=20ms"
duplicates = "==0"
"#;

    #[test]
    fn matrix_blocks_each_get_their_own_phase_settings() {
        let w = parse(TWO_BLOCKS).unwrap();
        assert_eq!(w.matrices.len(), 2);
        assert_eq!(
            w.trial_count(),
            4 + 4 * 2,
            "compare: 4 cells x 1 rep; sweep: 4 cells x 2 reps"
        );
        let compare = w.phase(0);
        assert_eq!(compare.producer_rate_per_s, None, "0 turns producers off");
        assert_eq!(compare.population.backlog, 100);
        let sweep = w.phase(1);
        assert_eq!(
            sweep.producer_rate_per_s,
            Some(50.0),
            "kept from [producers]"
        );
        assert_eq!(sweep.population.backlog, 5000);
        assert_eq!(sweep.handler.mode, HandlerMode::ClaimOnly);
        assert_eq!(sweep.trial.duration, Some(Duration::from_secs(3)));
        assert_eq!(sweep.trial.repetitions, 2);
        assert_eq!(sweep.matrices.len(), 1);
        assert_eq!(sweep.matrices[0].name, "sweep");
        assert_eq!(w.index_layouts(), vec!["fetch-order", "pk-only"]);
        assert_eq!(w.slos.len(), 2);
    }

    #[test]
    fn a_derived_arrival_rate_names_an_earlier_cell() {
        let text = TWO_BLOCKS.replace(
            "backlog = 5000\n",
            "backlog = 5000\narrival_rate_from = { phase = \"compare\", workers = 4, batch_size = 10, times = 1.5 }\n",
        ).replace("index_layouts = [\"pk-only\", \"fetch-order\"]", "index_layouts = [\"fetch-order\"]");
        match parse(&text) {
            Ok(w) => {
                let from = w.matrices[1].phase.arrival_rate_from.as_ref().expect("set");
                assert_eq!((from.workers, from.times), (4, 1.5));
                assert!(w.block_has_arrivals(1));
            }
            Err(e) => panic!("{e}\n{text}"),
        }
    }

    #[test]
    fn repetitions_flag_overrides_every_block() {
        let mut w = parse(TWO_BLOCKS).unwrap();
        w.set_repetitions(3);
        assert_eq!(w.phase(1).trial.repetitions, 3);
        assert_eq!(w.trial_count(), 4 * 3 + 4 * 3);
    }

    #[test]
    fn matrix_block_errors_name_the_block() {
        let e = error_of(&TWO_BLOCKS.replace("name = \"sweep\"\n", ""));
        assert_eq!(
            e,
            "w.toml: matrix[1].name: is missing; with several [[matrix]] blocks each needs a name (it labels its cells)"
        );
        let e = error_of(&TWO_BLOCKS.replace("\"sweep\"", "\"compare\""));
        assert!(
            e.contains("matrix[1].name: `compare` names two blocks"),
            "{e}"
        );
        let e = error_of(&TWO_BLOCKS.replace("workers = [2]", "workers = [0]"));
        assert_eq!(
            e,
            "w.toml: matrix[1].workers: 0 is not allowed; give 1 to 512"
        );
        let e = error_of(&TWO_BLOCKS.replace("backlog = 5000", "backlog = -1"));
        assert!(e.contains("matrix[1].backlog: -1 is not allowed"), "{e}");
        let e = error_of(&TWO_BLOCKS.replace("backlog = 5000", "bakclog = 1"));
        assert!(
            e.contains("matrix[1].bakclog: unknown field `bakclog`"),
            "{e}"
        );
        let e = error_of(&TWO_BLOCKS.replace("duplicates = \"==0\"", "duplicates = \"==0ms\""));
        assert!(e.contains("slo.duplicates: `0ms` is a time"), "{e}");
        let e = error_of(&TWO_BLOCKS.replace(
            "repetitions = 2",
            "repetitions = 2\nsearch = { start_per_s = 100 }\narrival_rate_per_s = 5",
        ));
        assert!(
            e.contains("matrix[1].arrival_rate_per_s: cannot be combined with search"),
            "{e}"
        );
        let e = error_of(&TWO_BLOCKS.replace(
            "repetitions = 2",
            "search = { start_per_s = 100, tolerance = 2 }",
        ));
        assert!(
            e.contains("matrix[1].search.tolerance: 2 is not allowed"),
            "{e}"
        );
    }

    #[test]
    fn a_lone_matrix_table_keeps_its_old_field_names() {
        let w = parse(MINIMAL).unwrap();
        assert_eq!(w.matrices.len(), 1);
        assert_eq!(w.matrices[0].name, "");
        let e = error_of(&MINIMAL.replace("batch_sizes = [5]", "batch_sizes = []"));
        assert!(e.contains("w.toml: matrix.batch_sizes: is empty"), "{e}");
    }

    #[test]
    fn thresholds_name_compare_metrics() {
        let w = parse(&format!(
            "{MINIMAL}\n[thresholds]\nclaim_p99 = 0.5\nthroughput = 0.3\n"
        ))
        .unwrap();
        assert_eq!(
            w.thresholds,
            vec![
                ("claim_p99".to_string(), 0.5),
                ("throughput".to_string(), 0.3)
            ]
        );
        let e = error_of(&format!("{MINIMAL}\n[thresholds]\np99 = 0.5\n"));
        assert!(e.contains("thresholds.p99: unknown metric `p99`"), "{e}");
        let e = error_of(&format!("{MINIMAL}\n[thresholds]\nclaim_p99 = -1\n"));
        assert!(
            e.contains("thresholds.claim_p99: `-1` is not a share"),
            "{e}"
        );
    }

    #[test]
    fn gates_are_checked_objectives_with_optional_filters() {
        let w = parse(&format!(
            "{TWO_BLOCKS}\n[[gate]]\ncheck = \"claim_p99<=20ms\"\nstrategy = \"production\"\nphase = \"sweep\"\n[[gate]]\ncheck = \"lost==0\"\n"
        ))
        .unwrap();
        assert_eq!(w.gates.len(), 2);
        assert_eq!(
            w.gates[0].label(),
            "claim_p99<=20ms for phase sweep, production"
        );
        assert_eq!(w.gates[1].label(), "lost==0 for every cell");
        let e = error_of(&format!("{TWO_BLOCKS}\n[[gate]]\ncheck = \"p99<20\"\n"));
        assert!(e.contains("gate[0].check: unknown metric `p99`"), "{e}");
        let e = error_of(&format!(
            "{TWO_BLOCKS}\n[[gate]]\ncheck = \"lost==0\"\nphase = \"nightly\"\n"
        ));
        assert!(
            e.contains("gate[0].phase: no [[matrix]] block is named `nightly`"),
            "{e}"
        );
    }

    #[test]
    fn shipped_workloads_are_valid() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut seen = 0;
        for dir in ["workloads", "benches"] {
            for entry in std::fs::read_dir(root.join(dir)).unwrap() {
                let path = entry.unwrap().path();
                if path.extension().is_some_and(|e| e == "toml") {
                    Workload::load(&path).unwrap_or_else(|e| panic!("{e}"));
                    seen += 1;
                }
            }
        }
        assert!(seen >= 2, "quickstart and smoke at least");
    }
}
