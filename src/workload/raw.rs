//! The raw TOML shape. Every table rejects unknown keys so a typo is an error, not a
//! silently ignored setting.

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
    #[serde(default)]
    pub cleanup: Option<Cleanup>,
    #[serde(default)]
    pub storage: Option<super::Storage>,
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
    /// `[topology]`: the servers claimbench starts for the run.
    #[serde(default)]
    pub topology: Option<Topology>,
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
    /// `[table]`: the workload's own queue table and lifecycle.
    #[serde(default)]
    pub table: Option<CustomTable>,
}

/// `[table] name = "river_job", postgres = "river-table.sql"`
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CustomTable {
    pub name: String,
    #[serde(default)]
    pub also: Vec<String>,
    #[serde(default)]
    pub postgres: Option<PathBuf>,
    #[serde(default)]
    pub mysql: Option<PathBuf>,
    #[serde(default)]
    pub mssql: Option<PathBuf>,
}

/// `[[matrix.timeline]] name = "surge", for_s = 60, rate_times = 3, pin = "snapshot"`
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TimelinePhase {
    pub name: String,
    pub for_s: f64,
    #[serde(default)]
    pub rate_per_s: Option<f64>,
    #[serde(default)]
    pub rate_times: Option<f64>,
    #[serde(default)]
    pub pin: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CustomLayout {
    #[serde(default)]
    pub postgres: Option<PathBuf>,
    #[serde(default)]
    pub mysql: Option<PathBuf>,
    #[serde(default)]
    pub mssql: Option<PathBuf>,
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
    /// Idle workers wait for the producer's NOTIFY instead of polling (PostgreSQL).
    #[serde(default)]
    pub listens: bool,
    /// Constants its statements read by name.
    #[serde(default)]
    pub params: BTreeMap<String, toml::Value>,
    /// The reference model its pick follows (seed, uncapped, advisory, none).
    #[serde(default)]
    pub model: Option<String>,
    /// The columns the uncapped model orders by, where the claim's order is not the
    /// seed's (priority, due, created, id).
    #[serde(default)]
    pub order: Option<Vec<String>>,
    /// Where the technique honours a paused queue: "claim" (default) or "worker".
    #[serde(default)]
    pub pauses: Option<String>,
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
    #[serde(default)]
    pub archived: i64,
}

/// `[cleanup]`: the job that removes finished rows beside the workers.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Cleanup {
    pub retain_s: f64,
    pub every_s: f64,
    #[serde(default = "default_cleanup_batch")]
    pub batch: i64,
}

fn default_cleanup_batch() -> i64 {
    1000
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
    pub restart_lock_service_at_s: Vec<f64>,
    #[serde(default)]
    pub failover_at_s: Vec<f64>,
    #[serde(default)]
    pub failover_command: Option<String>,
    #[serde(default)]
    pub hold_snapshot_s: Option<Vec<f64>>,
    /// What the hold is: "snapshot" (default) or "idle-in-transaction".
    #[serde(default)]
    pub hold_kind: Option<String>,
    /// `[from, to]`: another client holds server connections of the workers' pooler.
    #[serde(default)]
    pub hold_pool_s: Option<Vec<f64>>,
    /// How many (default 1).
    #[serde(default)]
    pub hold_pool_connections: Option<i64>,
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
    pub storage: Option<super::Storage>,
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
    /// The round trips added between the workers and the server, one block each.
    #[serde(default)]
    pub network: Option<Vec<String>>,
    /// Where the workers write on a cluster, one block each.
    #[serde(default)]
    pub placement: Option<Vec<super::Placement>>,
    /// The server connections of the pooler claimbench starts, one block each.
    #[serde(default)]
    pub pool_sizes: Option<Vec<i64>>,
    #[serde(default)]
    pub durability: Option<super::Durability>,
    /// When the sharded strategies' shards move, and how long both owners claim.
    #[serde(default)]
    pub shard_moves: Option<ShardMoves>,
    /// Run the block's two variants interleaved and judge them by paired ratios.
    #[serde(default)]
    pub paired: Option<bool>,
    /// Run the block only when `--db` names a server for each of its backends.
    #[serde(default)]
    pub if_db_given: Option<bool>,
    #[serde(default)]
    pub paired_threshold: Option<f64>,
    /// `[[matrix.timeline]]`: the block's trials as named phases, each with its own
    /// arrival rate and at most one with a pin.
    #[serde(default)]
    pub timeline: Vec<TimelinePhase>,
}

/// `shard_moves = { at_s = [3, 6], overlap_s = 0.5 }`
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShardMoves {
    pub at_s: Vec<f64>,
    pub overlap_s: f64,
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

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Topology {
    /// `single` when left out: a pooler alone needs no other kind.
    #[serde(default)]
    pub kind: super::TopologyKind,
    #[serde(default)]
    pub synchronous: bool,
    /// The round trip between the standby and its primary, e.g. `"4ms"`.
    #[serde(default)]
    pub standby_network: Option<String>,
    /// How many nodes a `galera` cluster has.
    #[serde(default)]
    pub nodes: Option<i64>,
    /// A PgBouncer claimbench starts between the workers and PostgreSQL: `"transaction"`
    /// or `"session"`.
    #[serde(default)]
    pub pooler: Option<String>,
    /// The pooler's server connections (per database and user).
    #[serde(default)]
    pub pool_size: Option<i64>,
}

#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct Mssql {
    #[serde(default)]
    pub lock_escalation: Option<super::LockEscalation>,
}
