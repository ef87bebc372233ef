//! The validated workload: what the runner, the backends and the reports see, every
//! value already checked (validate/ makes these from the raw TOML).

use super::*;

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

/// Where a finished job's row goes: the table's design, which decides what finished work
/// costs the claim and the cleanup job over hours.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Storage {
    /// The source design's: a finished job moves from the hot table to the archive (and a
    /// dead one to the dead-letter table); the hot table holds live jobs only.
    #[default]
    ArchiveMove,
    /// A finished job's row stays in the hot table with a final status (3 finished, 4
    /// dead): one UPDATE instead of a DELETE and an INSERT, and finished rows beside the
    /// live ones for every claim's index to skip, until a cleanup job removes them.
    UpdateInPlace,
    /// A finished job's row is deleted (a dead one still moves to the dead-letter
    /// table): the cheapest completion and nothing finished left to skip or clean, at
    /// the price of no record of what ran; claimbench's own effects table is then what
    /// counts the completions.
    Delete,
    /// The hot table partitioned by a rotating time slot (one per cleanup interval):
    /// finished rows stay in their partition with a final status, and the cleanup job
    /// truncates a partition once all of it is finished: nothing is vacuumed row by row,
    /// but every statement that does not name the slot reads every partition.
    Partitioned,
}

impl Storage {
    pub fn name(self) -> &'static str {
        match self {
            Storage::ArchiveMove => "archive-move",
            Storage::UpdateInPlace => "update-in-place",
            Storage::Delete => "delete",
            Storage::Partitioned => "partitioned",
        }
    }

    /// Whether MySQL and MariaDB have the model (the others are PostgreSQL's only).
    pub fn runs_on_mysql(self) -> bool {
        matches!(
            self,
            Storage::ArchiveMove | Storage::Delete | Storage::UpdateInPlace
        )
    }

    /// Whether finished rows stay in the hot table with a final status (else they
    /// leave it: to the archive, or nowhere under `delete`).
    pub fn finishes_in_place(self) -> bool {
        matches!(self, Storage::UpdateInPlace | Storage::Partitioned)
    }
}

/// Which servers claimbench starts for a run on its embedded PostgreSQL.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TopologyKind {
    /// One server (the embedded default).
    #[default]
    Single,
    /// A primary and a streaming standby (`pg_basebackup -R`), each on its own port
    /// and directory, both removed at exit. Workers, sampler and producer use the
    /// primary.
    PrimaryStandby,
    /// A MariaDB Galera cluster (synchronous multi-primary) of `nodes` nodes, each its
    /// own `mariadbd` on loopback ports, all removed at exit. Where the workers write
    /// is a block's `placement`; the sampler, producer and rescuer use the first node.
    Galera,
}

impl TopologyKind {
    /// The backend whose servers this topology is made of, and its name as written.
    pub fn backend(self) -> Option<(crate::backend_kind::BackendKind, &'static str)> {
        use crate::backend_kind::BackendKind;
        match self {
            TopologyKind::Single => None,
            TopologyKind::PrimaryStandby => Some((BackendKind::Postgres, "primary-standby")),
            TopologyKind::Galera => Some((BackendKind::Mysql, "galera")),
        }
    }
}

/// Why a topology has no backend of the run to apply to, if so: checked by `run` once
/// the `--db` URLs have filled in a workload that names no backends (validation refuses
/// a topology beside another backend the workload names itself).
pub fn topology_misfit(
    topology: TopologyKind,
    backends: &[crate::backend_kind::BackendKind],
) -> Option<String> {
    let (kind, name) = topology.backend()?;
    (!backends.is_empty() && !backends.contains(&kind)).then(|| {
        format!(
            "a `{name}` topology is made of {kind} servers, and this run's backends are {}: nothing would run on it; drop [topology], or add {kind} to matrix.backends",
            backends
                .iter()
                .map(|b| b.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        )
    })
}

/// Why killed-connection faults are refused on a cluster (the validator and `run`, for
/// a `--db` cluster, say the same).
pub const KILLS_ON_A_CLUSTER: &str = "kills worker connections by their ids on one server; on a cluster a worker's id belongs to its node, so it is not written for Galera yet";

/// Where a block's workers connect on a cluster of several nodes (`[[matrix]]
/// placement`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Placement {
    /// Worker i on node i mod N: every node takes claims.
    Spread,
    /// Every worker on the first node; the others only replicate (the usual advice
    /// for a queue on a multi-primary cluster).
    SingleWriter,
    /// Everything on a plain MariaDB server claimbench starts beside its cluster (no
    /// Galera, the same settings otherwise): the single server the cluster's figures
    /// are set against.
    Standalone,
}

impl Placement {
    pub fn label(&self) -> &'static str {
        match self {
            Placement::Spread => "spread",
            Placement::SingleWriter => "single-writer",
            Placement::Standalone => "standalone",
        }
    }

    /// The node (0-based) worker `i` connects to on a cluster of `nodes`; `None` off
    /// the cluster (standalone).
    pub fn node(&self, i: usize, nodes: usize) -> Option<usize> {
        match self {
            Placement::Spread => Some(i % nodes.max(1)),
            Placement::SingleWriter => Some(0),
            Placement::Standalone => None,
        }
    }
}

/// How durable a block's server is (`[[matrix]] durability`, the embedded PostgreSQL
/// only): its `fsync`, `synchronous_commit` and `full_page_writes`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Durability {
    /// The embedded default's shortcuts: all three off.
    Embedded,
    /// All three on, as a production server runs.
    Production,
}

/// `[topology]`, validated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Topology {
    pub kind: TopologyKind,
    /// The standby is synchronous (`synchronous_standby_names` names it): a commit
    /// with `synchronous_commit` = `on` or `remote_apply` waits for it.
    pub synchronous: bool,
    /// The round trip claimbench adds between the standby and its primary (a delaying
    /// proxy on the replication link, [`crate::netdelay`]): a standby in another zone,
    /// which is what gives an asynchronous standby a window of commits to lose.
    #[serde(default)]
    pub standby_network: crate::netdelay::Delay,
    /// A `galera` cluster's node count (0 for the other kinds).
    #[serde(default)]
    pub nodes: u32,
    /// The PgBouncer claimbench puts between the workers and the embedded PostgreSQL.
    #[serde(default)]
    pub pooler: Option<crate::pooler::Pooler>,
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
    /// Finished jobs already in the archive, finished over the past day: what a cleanup
    /// job finds on a system that has run for a while. Negative ids, so no count of the
    /// trial's jobs ever includes one.
    #[serde(default)]
    pub archived: u64,
}

impl History {
    /// Rows in the hot table.
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

    /// The queue worker `i` serves, as a declared claim's `:queue` binds it: the
    /// workload's queues dealt to the workers in order, round and round.
    pub fn worker_queue(&self, i: usize) -> &str {
        match self.queues.len() {
            0 => "",
            n => &self.queues[i % n].name,
        }
    }

    /// The queues' names, in the workload's order (the `sharded` strategies' shards).
    pub fn queue_names(&self) -> Vec<String> {
        self.queues.iter().map(|q| q.name.clone()).collect()
    }

    /// The queue a uniform draw `r` in [0, 1) falls in, by [`Population::queue_bounds`]'s
    /// `bounds` (the same for [`Population::priority_bounds`]): where a broker's producer
    /// draws each job's queue and priority as the SQL seed's `width_bucket` does.
    pub fn bucket(bounds: &[f64], r: f64) -> usize {
        bounds.iter().rposition(|&b| b <= r).unwrap_or(0)
    }

    /// Lower bounds of each queue's share of [0, 1), for the server-side `width_bucket`.
    pub fn queue_bounds(&self) -> (Vec<String>, Vec<f64>) {
        let weights = lower_bounds(self.queues.iter().map(|q| q.weight));
        (self.queue_names(), weights)
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

    /// What a broker's producer draws each job from, made once per batch of jobs.
    pub fn job_draw(&self) -> JobDraw {
        let (names, bounds) = self.queue_bounds();
        let (levels, level_bounds) = self.priority_bounds();
        JobDraw {
            names,
            bounds,
            own: self.queue_priorities(),
            levels,
            level_bounds,
        }
    }
}

/// A job's queue by the queues' weights, then its priority as the SQL seed gives it: the
/// queue's own, else one drawn by the priorities' weights.
pub struct JobDraw {
    names: Vec<String>,
    bounds: Vec<f64>,
    own: Vec<Option<i32>>,
    levels: Vec<i32>,
    level_bounds: Vec<f64>,
}

impl JobDraw {
    /// The queue and priority two uniform draws in [0, 1) fall in.
    pub fn draw(&self, r_queue: f64, r_level: f64) -> (&str, i32) {
        let i = Population::bucket(&self.bounds, r_queue);
        let k = Population::bucket(&self.level_bounds, r_level);
        let drawn = self.levels.get(k).copied().unwrap_or(0);
        (self.names[i].as_str(), self.own[i].unwrap_or(drawn))
    }
}

/// Cumulative lower bounds of normalised weights: [0, w0, w0+w1, ...]. Buckets with
/// zero weight get an empty interval (equal bounds), which width_bucket never selects
/// except when it is the last bucket; validation rejects an all-zero list.
pub(super) fn lower_bounds(weights: impl Iterator<Item = f64>) -> Vec<f64> {
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
    /// The backends this block runs on when it names its own (a SQL claim on postgres
    /// beside a broker's on redis, in one run); empty: every backend of the run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub backends: Vec<crate::backend_kind::BackendKind>,
    pub strategies: Vec<Strategy>,
    pub index_layouts: Vec<String>,
    pub workers: Vec<u32>,
    pub batch_sizes: Vec<u32>,
    pub phase: PhaseSettings,
    /// The block runs only when `--db` names a server of each of its backends (one
    /// claimbench cannot start, such as RabbitMQ); without, the run leaves it out and
    /// says so.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub if_db_given: bool,
}

impl Matrix {
    /// Whether this block's cells run on `kind`.
    pub fn runs_on(&self, kind: crate::backend_kind::BackendKind) -> bool {
        self.backends.is_empty() || self.backends.contains(&kind)
    }
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
    /// Replaces `storage` for this block.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub storage: Option<Storage>,
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
    /// The round trip added between the workers and the server (`network`): their
    /// connections go through a delaying proxy ([`crate::netdelay`]); the sampler,
    /// producer and rescuer connect directly. `None`: directly.
    #[serde(default)]
    pub network: Option<crate::netdelay::Delay>,
    /// Where the workers connect on a cluster (`placement`); `None`: one node, or
    /// spread when the target has several.
    #[serde(default)]
    pub placement: Option<Placement>,
    /// The server connections of the pooler claimbench starts, for this block's trials
    /// (`pool_sizes`); `None`: `topology.pool_size`.
    #[serde(default)]
    pub pool_size: Option<u32>,
    /// The server's durability for this block's trials; set on every block once one
    /// block sets it (the others `Embedded`), `None` when none does.
    #[serde(default)]
    pub durability: Option<Durability>,
    /// When the `sharded` strategies' shards change owner (`shard_moves`); `None`: the
    /// first owners keep them for the whole trial.
    #[serde(default)]
    pub shard_moves: Option<ShardMoves>,
    /// `paired = true`: the block's two variants (two strategies, or two layouts) run
    /// interleaved round by round and are judged by their paired ratios
    /// (analysis/paired.rs); `None`: each cell runs its repetitions in turn.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paired: Option<Pairing>,
    /// The block's trials as named phases from their start (`[[matrix.timeline]]`);
    /// empty: one rate and no phases. It sets the trial's length and pin.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub timeline: Vec<TimelinePhase>,
}

/// How a paired block judges B against A.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Pairing {
    /// The relative change that counts when it is also outside the paired interval.
    pub threshold: f64,
}

impl Pairing {
    /// `paired_threshold`'s default, chosen with benches/gate_power.sh on the 2-core
    /// development host: at 5 % a claim 9 % slower was caught in 10 of 10 runs and no
    /// A/A run alarmed, while significant but negligible moves (transactions per job
    /// ×1.007) stay unchanged (docs/nightly.md).
    pub const DEFAULT_THRESHOLD: f64 = 0.05;
    /// The fewest rounds whose ratios give an interval (two degrees of freedom).
    pub const MIN_ROUNDS: u32 = 3;
}

/// `shard_moves = { at_s = [...], overlap_s = ... }`: at each instant every shard moves
/// to the next worker (a rebalance: a deploy, a scale-out); the old owner keeps claiming
/// from it for `overlap`, the stale shard map a real poller lives with until it notices.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ShardMoves {
    /// Since the trial's start, warm-up included; increasing, each more than `overlap`
    /// after the one before.
    pub at: Vec<Duration>,
    pub overlap: Duration,
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
    /// Instants after the trial's start at which a `lock-service` claim's lock server
    /// restarts without persistence (every lease gone): the Redis claimbench starts for
    /// the leases, never a `--db` one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub restart_lock_service_at: Vec<Duration>,
    /// The instant after the trial's start at which the primary fails over to its
    /// standby: on the embedded topology, the primary stops in immediate mode and the
    /// standby is promoted (the pair is made again before the next trial); on a `--db`
    /// cluster, only through the operator's `--failover-command`. At most one per
    /// trial: after it there is no standby left to promote.
    #[serde(default)]
    pub failover_at: Vec<Duration>,
    /// From when to when (since the trial's start) a session holds one snapshot open.
    #[serde(default)]
    pub hold_snapshot: Option<(Duration, Duration)>,
    /// What that session holds.
    #[serde(default)]
    pub hold_kind: HoldKind,
    /// Another client holding server connections of the workers' pooler.
    #[serde(default)]
    pub hold_pool: Option<PoolHold>,
}

/// `[cleanup]`: the job a deployment runs beside its workers to remove finished rows, on
/// its own connection, as production's would: every `every`, it removes finished rows
/// older than `retain`, oldest first, `batch` per statement, until a statement removes
/// fewer than `batch`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Cleanup {
    pub retain: Duration,
    pub every: Duration,
    pub batch: u32,
}

/// What pins the server's horizon during `faults.hold_snapshot_s` (`faults.hold_kind`),
/// each on a connection claimbench opens and ends itself.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum HoldKind {
    /// A repeatable-read transaction that read once and keeps its snapshot (a report
    /// query, an analytics reader).
    #[default]
    Snapshot,
    /// A transaction that took a transaction id and then sat idle (a forgotten BEGIN
    /// after a write, a client that died mid-transaction): PostgreSQL's
    /// `idle in transaction` with an xid. MySQL and MariaDB pin purge only with a read
    /// view, so there it is the snapshot.
    IdleInTransaction,
    /// An inactive logical replication slot (a subscriber that went away), PostgreSQL
    /// only: it keeps the WAL from its restart point and holds the catalogs' horizon,
    /// not the hot table's. Needs `wal_level = logical` (the embedded server is started
    /// with it when a workload holds one).
    LogicalSlot,
    /// An analytics reader at REPEATABLE READ that scans the hot table once a second in
    /// one transaction: the snapshot's pin, and the reader's own cost as the versions
    /// it must walk past (PostgreSQL) or rebuild from undo (InnoDB) pile up.
    RepeatableReadScans,
}

impl HoldKind {
    pub const NAMES: [&str; 4] = [
        "snapshot",
        "idle-in-transaction",
        "logical-slot",
        "repeatable-read-scans",
    ];

    pub fn parse(s: &str) -> Option<HoldKind> {
        match s {
            "snapshot" => Some(HoldKind::Snapshot),
            "idle-in-transaction" => Some(HoldKind::IdleInTransaction),
            "logical-slot" => Some(HoldKind::LogicalSlot),
            "repeatable-read-scans" => Some(HoldKind::RepeatableReadScans),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            HoldKind::Snapshot => "snapshot",
            HoldKind::IdleInTransaction => "idle-in-transaction",
            HoldKind::LogicalSlot => "logical-slot",
            HoldKind::RepeatableReadScans => "repeatable-read-scans",
        }
    }
}

/// One named stretch of a trial (`[[timeline]]`), in seconds since its start.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TimelinePhase {
    pub name: String,
    pub from: Duration,
    pub to: Duration,
    pub rate: PhaseRate,
    /// The horizon pin this phase holds (set as `faults.hold_snapshot` too).
    pub pin: Option<HoldKind>,
}

/// What a timeline phase offers: jobs per second, or a multiple of the trial's own
/// arrival rate (its block's, which may be derived from a cell measured earlier in the
/// run: a rate that scales with the host).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PhaseRate {
    /// None given: the trial's own rate (no arrivals when it has none).
    Trial,
    PerS(f64),
    Times(f64),
}

impl TimelinePhase {
    /// Jobs per second this phase offers when the trial's own rate is `base`.
    pub fn rate_per_s(&self, base: Option<f64>) -> f64 {
        match self.rate {
            PhaseRate::Trial => base.unwrap_or(0.0),
            PhaseRate::PerS(r) => r,
            PhaseRate::Times(k) => k * base.unwrap_or(0.0),
        }
    }
}

/// `faults.hold_pool_s` and `hold_pool_connections`: from `from` to `to` since the
/// trial's start, `connections` clients of the pooler each hold a transaction open, so
/// each holds one of its server connections (pool exhaustion by another client).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PoolHold {
    pub connections: u32,
    pub from: Duration,
    pub to: Duration,
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

    /// Whether the server ends connections mid-trial (kills, restarts, a failover): then every
    /// task reconnects and goes on, instead of ending the trial.
    pub fn breaks_connections(&self) -> bool {
        self.kills_connections()
            || !self.restart_at.is_empty()
            || !self.failover_at.is_empty()
            || !self.restart_lock_service_at.is_empty()
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
    /// The producers' rate; with a timeline, the rate its phases' `rate_times` multiply.
    pub producer_rate_per_s: Option<f64>,
    #[serde(default)]
    pub arrivals: Arrivals,
    /// A phase's ([`Workload::phase`]) trials as named phases in order from their start
    /// (warm-up included), each with its own arrival rate: its block's timeline; empty
    /// in the workload as a whole and in a block without one.
    #[serde(default)]
    pub timeline: Vec<TimelinePhase>,
    pub handler: Handler,
    pub empty_backoff: Duration,
    pub empty_backoff_max: Duration,
    pub faults: Faults,
    /// The cleanup job beside the workers (`[cleanup]`), if the workload runs one.
    #[serde(default)]
    pub cleanup: Option<Cleanup>,
    /// Where finished jobs' rows go (`storage`; a block may set its own).
    #[serde(default)]
    pub storage: Storage,
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
    /// The servers claimbench starts when no `--db` is given.
    pub topology: Topology,
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
    /// The queue table the workload declares (`[table]`), its file as read: the claims
    /// and the job's life run on it instead of claimbench's `jobs_hot`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub table: Option<crate::declared_table::DeclaredTable>,
    /// The file's text and its SHA-256, so a run records exactly what it ran.
    pub source_text: String,
    pub source_hash: String,
    pub source_path: PathBuf,
}

/// Connection kills closer together than this would leave workers no time to reconnect.
pub const MIN_KILL_EVERY_S: f64 = 0.1;
