//! `RunResult`: everything a run measured, versioned, written as `run.json`. Reports and
//! comparisons read only this file, so old runs re-render with new code.

use crate::backend_kind::BackendKind;
use crate::ledger::LedgerAnalysis;
use crate::metrics::{Counts, HistogramSummary};
use crate::slo::Slo;
use crate::strategy::Strategy;
use crate::warnings::Warning;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

mod faults;
mod file;
pub mod folder;
pub use faults::*;
pub use file::MAX_FIGURE;
pub use folder::Folder;

/// Bumped on any change a reader of an older file would misread. Fields added within a
/// version have defaults, so older files of the same version still read.
pub const SCHEMA_VERSION: u32 = 1;

#[derive(Debug, thiserror::Error)]
pub enum ResultsError {
    #[error("{path}: {reason}")]
    /// The io error is shown in the message, not chained as a source, so it is
    /// printed once.
    Io {
        path: PathBuf,
        reason: std::io::Error,
    },
    #[error("{path}: not a claimbench run.json: {message}")]
    Parse { path: PathBuf, message: String },
    #[error(
        "{path}: schema_version {found} is newer than this claimbench reads ({SCHEMA_VERSION}); upgrade claimbench"
    )]
    TooNew { path: PathBuf, found: u32 },
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct RunResult {
    pub schema_version: u32,
    pub run_id: String,
    pub started_at: String,
    pub finished_at: String,
    /// Ctrl-C or an error stopped the run before every trial ran.
    pub interrupted: bool,
    /// Why the run stopped early, when it did.
    pub stop_reason: Option<String>,
    pub workload: WorkloadRecord,
    pub environment: Environment,
    pub cells: Vec<CellResult>,
    /// The objectives the workload and `--slo` set, for `recommend` and the verdict.
    #[serde(default)]
    pub slos: Vec<crate::slo::Slo>,
    /// Absolute gates every matching cell must meet (`[[gate]]`).
    #[serde(default)]
    pub gates: Vec<Gate>,
    /// `compare`'s thresholds from the workload (`[thresholds]`); flags replace them.
    #[serde(default)]
    pub thresholds: Vec<(String, f64)>,
    /// Sustainable arrival rates found by a phase's rate search.
    #[serde(default)]
    pub rate_searches: Vec<SearchResult>,
}

/// A standby as its primary saw it (`pg_stat_replication`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StandbyState {
    pub name: String,
    /// `streaming` once it follows the primary.
    pub state: String,
    /// `sync` when commits that ask for it wait for this standby, else `async`.
    pub sync_state: String,
    /// How long recent WAL took from the primary's flush to the standby's replay, ms;
    /// `None` when nothing was flowing.
    pub replay_lag_ms: Option<f64>,
    /// WAL the primary wrote that the standby had not replayed yet, bytes.
    pub replay_behind_bytes: i64,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct WorkloadRecord {
    pub name: String,
    pub path: String,
    pub sha256: String,
    pub text: String,
    /// The strategies the workload declared, each with the statement it ran.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub custom_strategies: Vec<crate::strategy::custom::Declared>,
    /// The index layouts the workload declared, each with its DDL.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub custom_layouts: Vec<crate::custom_layout::DeclaredLayout>,
}

/// Enough to decide whether two runs may be compared.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Environment {
    pub host: String,
    pub os: String,
    pub cpu: String,
    pub logical_cores: usize,
    pub physical_cores: Option<usize>,
    pub memory_bytes: u64,
    pub claimbench_version: String,
    pub git_revision: Option<String>,
    /// The first of `targets`, kept for readers of files written before there were
    /// several: `postgres://user@host:port/db` (never a password), or "embedded
    /// PostgreSQL (...)", "embedded MariaDB (...)".
    pub target: String,
    pub embedded: bool,
    pub server: ServerInfo,
    /// Every database the run drove, in the order of the matrix's backends.
    #[serde(default)]
    pub targets: Vec<TargetRecord>,
}

/// One database a run drove: which, where (never a password), and its settings.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TargetRecord {
    pub backend: BackendKind,
    pub target: String,
    pub embedded: bool,
    pub server: ServerInfo,
    /// The workload's session settings, set on every worker connection of this backend.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub session_settings: Vec<(String, String)>,
    /// The standbys the server streamed to when the run started (PostgreSQL's
    /// `pg_stat_replication`): the topology the figures come from.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub standbys: Vec<StandbyState>,
    /// A multi-primary cluster target (Galera), as the run found it before the first
    /// trial: one cluster, its size, its nodes and the settings that decide how it
    /// treats a queue.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster: Option<ClusterRecord>,
    /// The pooler claimbench started between the workers and this server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pooler: Option<crate::pooler::Pooler>,
    /// The person's pooler the workers went through instead (`--pooler`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub their_pooler: Option<crate::pooler::TheirPooler>,
}

impl TargetRecord {
    /// The mode of whichever pooler the workers went through.
    pub fn pool_mode(&self) -> Option<crate::pooler::PoolMode> {
        self.pooler
            .map(|p| p.mode)
            .or(self.their_pooler.as_ref().map(|p| p.mode))
    }
}

/// A Galera cluster a run drove: every node reported the same state UUID.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ClusterRecord {
    pub state_uuid: String,
    /// `wsrep_cluster_size` as the first node reported it.
    pub size: u32,
    /// Each node's address (host:port), in the target's order: node 1 first.
    pub nodes: Vec<String>,
    /// `wsrep_sync_wait`, `wsrep_retry_autocommit`, `binlog_format`, … as the first
    /// node has them (name, value).
    pub settings: Vec<(String, String)>,
    pub provider_version: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CellResult {
    /// The matrix block the cell came from ("" for a lone `[matrix]`).
    #[serde(default)]
    pub phase: String,
    /// Open-loop arrivals per second during its trials; `None`: a seeded backlog only,
    /// so queue wait and oldest-pending age measure how long the backlog has existed.
    #[serde(default)]
    pub arrival_rate_per_s: Option<f64>,
    /// Where a derived arrival rate came from (`arrival_rate_from`): what it scaled and
    /// what that measured, so the verdict can say the rate was the host's own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arrival_rate_from: Option<RateOrigin>,
    pub backend: BackendKind,
    pub strategy: Strategy,
    pub index_layout: String,
    pub workers: u32,
    pub batch_size: u32,
    /// The session settings in force on this cell's worker connections (the
    /// workload's, then its block's), as the server was sent them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub session_settings: Vec<(String, String)>,
    /// The server's durability settings for this cell's trials, as the server reported
    /// them after its block set them (`[[matrix]] durability`); empty when no block did.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub server_settings: Vec<(String, String)>,
    /// The server connections of the pool its workers went through (the pooler
    /// claimbench started, sized by the block, or the person's as its admin console
    /// reported it); `None` without a pooler or without its console.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pool_size: Option<u32>,
    /// The phase ran the claim path alone (`handler.mode = "claim-only"`); `None` in
    /// runs written before this was recorded (see [`CellResult::is_claim_only`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub claim_only: Option<bool>,
    /// In a paired block, which side the cell is: its trials ran interleaved with the
    /// other side's, repetition *r* of both in round *r* (A first in even rounds).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pair: Option<Pair>,
    /// Which of two servers of one backend the cell ran on (`run --versus-pg-bindir`):
    /// its version, and the side when both run the same one; `None` with one server
    /// per backend.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<String>,
    pub trials: Vec<TrialResult>,
}

impl CellResult {
    /// The backend as tables name it: with the server's version when the run drove two
    /// servers of it.
    pub fn backend_label(&self) -> String {
        match &self.server {
            Some(s) => format!("{} {s}", self.backend),
            None => self.backend.to_string(),
        }
    }
}

/// A paired cell's side and the relative change its block counts
/// (`paired_threshold`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Pair {
    pub side: PairSide,
    /// Numbers the run's pairs: A and B of one pair share it.
    pub id: u32,
    pub threshold: f64,
}

/// A paired block's sides: A the baseline (the first variant listed), B the candidate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PairSide {
    A,
    B,
}

impl std::fmt::Display for PairSide {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            PairSide::A => "A",
            PairSide::B => "B",
        })
    }
}

/// A derived arrival rate's origin: `how` in words, and the throughput it scaled.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RateOrigin {
    pub how: String,
    pub measured_per_s: f64,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct TrialResult {
    /// The standbys the primary streamed to, as it saw them at the trial's end
    /// (`[topology] kind = "primary-standby"`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub standbys: Vec<StandbyState>,
    pub repetition: u32,
    /// Measured window after warm-up, seconds.
    pub measured_s: f64,
    pub warmup_s: f64,
    /// The trial ended by Ctrl-C.
    pub interrupted: bool,
    pub seeded_jobs: u64,
    /// Seconds spent recreating and seeding the schema before the trial.
    pub reset_s: f64,
    pub produced_jobs: u64,
    /// The longest a produced job waited past its arrival time to be inserted, ms.
    #[serde(default)]
    pub producer_max_lag_ms: f64,
    /// Claims the rescuer returned to pending after their lease expired.
    pub rescued_jobs: u64,
    /// The injected connection kills (`faults.kill_connections_*`), in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub connection_kills: Vec<KillEvent>,
    /// The hot table's health at each sampler reading (PostgreSQL).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub table_series: Vec<TableSample>,
    /// A long trial without a pin: its first quarter against its last
    /// (`SoakDrift`); trials shorter than a minute have none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub soak: Option<SoakDrift>,
    /// Each phase of the workload's `[[timeline]]` that had a measured whole second,
    /// in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub timeline: Vec<TimelineReading>,
    /// InnoDB's history list length at each sampler reading (MySQL, MariaDB).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub purge_series: Vec<PurgeSample>,
    /// The claim statement's plan, sampled mid-trial (PostgreSQL; with the sampler on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<PlanSample>,
    /// Why this trial is the second run of its repetition: the warnings of a first run
    /// that the host or the harness disturbed (empty: it ran once).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rerun_because: Vec<String>,
    /// The snapshot held open mid-trial (`faults.hold_snapshot_s`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snapshot_held: Option<SnapshotHold>,
    /// The pooler's server connections another client held (`faults.hold_pool_s`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pool_held: Option<PoolHeld>,
    /// The injected server restarts (`faults.restart_db_at_s`), in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub server_restarts: Vec<RestartEvent>,
    /// The round trip added between the workers and the server (`network`), as
    /// configured and as measured before the trial.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<NetworkProbe>,
    /// The injected failover (`faults.failover_at_s`) and the acknowledged work it lost.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failovers: Vec<FailoverEvent>,
    /// On a multi-primary cluster: where the workers wrote and what each node's own
    /// counters say happened during the trial.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster: Option<ClusterTrial>,
    /// From a fault stranding a job (a crash, a hang, a lost connection) to the rescuer
    /// returning it to pending, µs; `None` when no stranded job was rescued.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_to_rescue: Option<HistogramSummary>,
    /// Older jobs each first claim passed over (`ledger::PassedOver`): recorded where
    /// ids are the fetch order (one priority, nothing scheduled), else `None`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub passed_over: Option<crate::ledger::PassedOver>,
    /// The most the ledger held at once while it counted (`ledger::LedgerPeak`): memory
    /// bounded by what was in flight, whatever the trial's length.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ledger_peak: Option<crate::ledger::LedgerPeak>,
    /// The phase's shard moves as they happened (`sharded` strategies), with the
    /// duplicate claims and lost races counted inside each and outside all of them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard_moves: Option<ShardMovesSeen>,
    pub counts: Counts,
    /// Claim calls per second after warm-up (what pgbench calls tps for the same SQL).
    pub claims_per_s: f64,
    /// Jobs claimed and completed per second after warm-up.
    pub claimed_per_s: f64,
    pub completed_per_s: f64,
    /// Jobs claimed and completed in each second since the trial started.
    pub claimed_series: Vec<u32>,
    pub completed_series: Vec<u32>,
    pub claim_latency: HistogramSummary,
    /// `claim_latency` one histogram per second: an HdrHistogram interval log, relative
    /// to the run's folder (see `hlog`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub claim_latency_log: Option<String>,
    pub empty_claim_latency: HistogramSummary,
    pub queue_wait: HistogramSummary,
    pub duplicates: Duplicates,
    pub reconciliation: Reconciliation,
    pub oldest_pending: OldestPending,
    pub locks: LockEvidence,
    pub max_workers: Vec<MaxWorkersCheck>,
    /// Per queue, when the workload has more than one.
    #[serde(default)]
    pub queues: Vec<QueueResult>,
    pub resources: Resources,
    pub warnings: Vec<Warning>,
}

impl CellResult {
    /// A PostgreSQL cell on the fetch-order layout outside any named phase: what
    /// hand-made runs (tests, fixtures) need, with the rest of the key given.
    pub fn fetch_order(
        strategy: crate::strategy::Strategy,
        workers: u32,
        batch_size: u32,
        trials: Vec<TrialResult>,
    ) -> CellResult {
        CellResult {
            phase: String::new(),
            arrival_rate_per_s: None,
            arrival_rate_from: None,
            backend: crate::backend_kind::BackendKind::Postgres,
            strategy,
            index_layout: "fetch-order".into(),
            workers,
            batch_size,
            session_settings: Vec::new(),
            server_settings: Vec::new(),
            pool_size: None,
            claim_only: None,
            pair: None,
            server: None,
            trials,
        }
    }

    /// Whether the cell measured the claim path alone: nothing started or completed, so
    /// completed jobs/s and duplicate executions are not measured (reports show "–")
    /// and its throughput is what it claimed. For a run that did not record it: claims
    /// were made and none was ever executed.
    pub fn is_claim_only(&self) -> bool {
        self.claim_only.unwrap_or_else(|| {
            self.trials.iter().any(|t| t.counts.jobs_claimed > 0)
                && self
                    .trials
                    .iter()
                    .all(|t| t.duplicates.ledger.distinct_executed == 0)
        })
    }

    /// Whether jobs arrived while it ran: only then do queue wait and oldest-pending
    /// age say whether the pool keeps up (with a seeded backlog they grow with the
    /// trial's clock).
    pub fn has_arrivals(&self) -> bool {
        self.arrival_rate_per_s.is_some_and(|r| r > 0.0)
            || self.trials.iter().any(|t| t.produced_jobs > 0)
    }
}

impl TrialResult {
    /// Duplicate executions as the ledger counted them (the effects table's count must
    /// be equal, or the trial carries a mismatch warning).
    pub fn duplicate_executions(&self) -> u64 {
        self.duplicates.ledger.duplicate_executions
    }

    /// A trial that completed jobs at `rate` and recorded nothing else: the analysis
    /// tests' repetition.
    #[cfg(test)]
    pub fn completing(rate: f64) -> TrialResult {
        let mut t = TrialResult {
            completed_per_s: rate,
            ..TrialResult::default()
        };
        t.counts.jobs_completed = 1;
        t
    }
}

/// The two duplicate rates of the metric definitions (docs/metrics.md), with the counts they are made of.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Duplicates {
    pub ledger: LedgerAnalysis,
    /// Duplicate executions counted in the effects table; must equal the ledger's, or
    /// exceed it by at most the effects in doubt (see `Counts::executions_in_doubt`).
    pub effects_duplicate_executions: i64,
    pub effects_rows: i64,
    /// duplicate claims / distinct jobs claimed.
    pub claim_rate: f64,
    /// duplicate executions / distinct jobs executed.
    pub execution_rate: f64,
}

/// InnoDB's purge at one sampler reading (MySQL, MariaDB): the history list length,
/// undo logs of committed transactions purge has not removed yet. While a read view
/// older than them is open, purge cannot remove them, and the list grows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct PurgeSample {
    /// Seconds since the trial's start.
    pub at_s: f64,
    pub history_length: i64,
}

/// The hot table's health at one sampler reading (PostgreSQL): what the claim's
/// updates leave behind, and whether vacuum and HOT keep up.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TableSample {
    /// Seconds since the trial's start.
    pub at_s: f64,
    pub dead_tuples: i64,
    pub table_bytes: i64,
    pub index_bytes: i64,
    /// Row updates and HOT updates (no index entry written) since the statistics began.
    pub updates: i64,
    pub hot_updates: i64,
    /// The slowest standby's `replay_lag`, ms, where the server streams to one (`None`
    /// without a standby, or once it has caught up and no WAL flows).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay_lag_ms: Option<f64>,
    /// The most WAL any standby had not replayed yet, bytes (`None` without one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay_behind_bytes: Option<i64>,
    /// Advisory locks held in the database at the reading: a claim that owns jobs by
    /// a session-level lock holds one per job in hand, and more if it never gives them
    /// back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub advisory_locks: Option<i64>,
    /// How many transactions old the oldest xmin or xid another session or a
    /// replication slot holds: what keeps vacuum from removing dead row versions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub horizon_age: Option<i64>,
    /// Autovacuum runs of the hot table since the statistics began.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub autovacuums: Option<i64>,
    /// Autoanalyze runs of the hot table since the statistics began.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub autoanalyzes: Option<i64>,
    /// Who holds `horizon_age`: a session's application name (or kind) and state,
    /// `claimbench-holder (idle in transaction)`, or `slot <name>`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub horizon_holder: Option<String>,
    /// What the run's active worker connections waited on at the reading: each
    /// distinct `wait_event_type:wait_event` (`CPU`: none) with how many.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub waits: Vec<(String, u32)>,
    /// WAL the server has written, bytes (its position; `None` on a standby).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wal_bytes: Option<i64>,
    /// WAL the server keeps for replication slots past the oldest one's restart point,
    /// bytes (`None`: no slot, or not read).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slot_wal_bytes: Option<i64>,
}

/// A trial on a multi-primary cluster.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ClusterTrial {
    /// `spread`, `single-writer` or `standalone` (the block ran on the plain server
    /// beside the cluster, whose nodes only idled).
    pub placement: String,
    /// The node (1-based) the sampler, producer, rescuer and control connection use.
    pub service_node: usize,
    pub nodes: Vec<NodeTrial>,
}

/// One node's share of a trial: its workers, and its own counters' differences from
/// before the trial to after it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct NodeTrial {
    /// 1-based, in the target's order.
    pub node: usize,
    pub address: String,
    pub workers: u32,
    /// `wsrep_local_cert_failures`: this node's commits that lost certification.
    pub cert_failures: i64,
    /// `wsrep_local_bf_aborts`: this node's open transactions a replicated write set
    /// aborted.
    pub bf_aborts: i64,
    /// `Innodb_deadlocks`: the node's own lock-wait cycles, apart from both.
    pub innodb_deadlocks: i64,
    /// `wsrep_flow_control_paused_ns`, as ms: replication paused for a full apply queue.
    pub flow_control_paused_ms: f64,
    /// Write sets this node sent and received (`wsrep_replicated`, `wsrep_received`).
    pub replicated: i64,
    pub received: i64,
    /// `wsrep_local_recv_queue_max` after the trial: the longest apply queue the node
    /// has had (since it started or the counter was last read, as the server keeps it).
    pub recv_queue_max: i64,
}

impl NodeTrial {
    /// Another repetition's share of the same node: counts add up, the longest queue
    /// is the longest of both.
    pub fn add(&mut self, o: &NodeTrial) {
        self.cert_failures += o.cert_failures;
        self.bf_aborts += o.bf_aborts;
        self.innodb_deadlocks += o.innodb_deadlocks;
        self.flow_control_paused_ms += o.flow_control_paused_ms;
        self.replicated += o.replicated;
        self.received += o.received;
        self.recv_queue_max = self.recv_queue_max.max(o.recv_queue_max);
    }
}

/// The network in front of the workers, measured: the median round trip of a trivial
/// statement (BEGIN, then ROLLBACK, halved) on a direct connection and on one through
/// the delaying proxy, 20 each, just before the trial.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct NetworkProbe {
    /// The round trip asked for, as written (`"5ms±1ms"`).
    pub configured: String,
    pub configured_ms: f64,
    pub direct_ms: f64,
    pub through_ms: f64,
    /// What the proxy added: through − direct.
    pub added_ms: f64,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Reconciliation {
    pub created: i64,
    pub db: DbReconciliation,
    /// Rows left fetched or processing that the workload's mode or faults explain.
    pub accounted_by_faults: i64,
    /// Jobs missing, or left fetched or processing, because a failover lost their
    /// acknowledged insert or completion ([`FailoverLosses`]).
    #[serde(default)]
    pub accounted_by_failover: i64,
    /// Jobs that are nowhere, or stranded without a fault to explain it.
    pub lost: i64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct OldestPending {
    /// Whether a sampler ran (`trial.sample_interval_ms = 0` turns it off).
    pub sampled: bool,
    /// Mean wall time of one sample query, ms, and the longest interval the sampler
    /// stretched to so as to stay within its budget of 5% of one server core.
    pub mean_sample_ms: f64,
    pub max_interval_ms: f64,
    /// (seconds since trial start, age ms); `None` age when nothing was eligible.
    pub series: Vec<(f64, Option<f64>)>,
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct LockEvidence {
    /// Sum over samples of worker connections waiting on a lock.
    pub lock_wait_samples: u64,
    /// Sum over samples of worker connections running a statement.
    pub active_samples: u64,
    /// lock-waiting / (samples × workers): the share of worker time spent in lock waits.
    pub lock_wait_share: f64,
    pub samples: u64,
    pub server_before: ServerCounters,
    pub server_after: ServerCounters,
    pub deadlocks: i64,
    /// InnoDB row lock waits during the trial (server-wide); `None` on PostgreSQL,
    /// which keeps no such counter (its lock waits are in `lock_wait_share`).
    #[serde(default)]
    pub row_lock_waits: Option<i64>,
    /// Time spent in those waits, ms.
    #[serde(default)]
    pub row_lock_time_ms: Option<i64>,
    /// SQL Server: lock escalations on the hot table during the trial.
    #[serde(default)]
    pub lock_escalations: Option<i64>,
    /// Through a pooler claimbench reads: the transactions it passed during the trial,
    /// and the microseconds its clients waited in it for a server connection.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pool_transactions: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pool_wait_us: Option<i64>,
    /// The most server connections the pooler had serving clients at once, and the
    /// most clients waiting for one (`SHOW POOLS` every 100 ms, warm-up included).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pool_peak_server: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pool_peak_waiting: Option<i64>,
}

/// One queue's share of a trial, for workloads with more than one queue: who kept their
/// throughput and who fell behind (the noisy-neighbour question).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QueueResult {
    pub queue: String,
    /// Jobs of this queue completed in the steady window (archive finish times on the
    /// server's clock).
    pub completed: i64,
    pub completed_per_s: f64,
    /// The sampler's oldest eligible pending age of this queue, after warm-up, ms
    /// (`None`: never a pending eligible job when sampled, or not sampled).
    pub oldest_pending_p99_ms: Option<f64>,
    pub oldest_pending_max_ms: Option<f64>,
    /// (seconds since start, age in ms), warm-up included.
    pub oldest_pending_series: Vec<(f64, Option<f64>)>,
}

/// One capped queue's max-workers evidence: exact from the ledger, and as sampled.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MaxWorkersCheck {
    pub queue: String,
    pub max_workers: i32,
    /// The most active jobs the sampler saw at one of its readings (every 50-400 ms):
    /// overshoots shorter than the sampling interval fall between readings.
    pub max_observed_active: i64,
    /// The most jobs of the queue held at once, from every claim and release instant in
    /// the ledger (a lower bound: claims are stamped when their call returned, releases
    /// when theirs began).
    #[serde(default)]
    pub max_held_exact: i64,
    /// Time during which more than `max_workers` jobs were held, ms (same bound).
    #[serde(default)]
    pub ms_above_limit: f64,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Resources {
    pub client_cpu_s: f64,
    /// Client CPU per claim call, µs: what the harness costs.
    pub client_cpu_us_per_claim: f64,
    pub client_rss_bytes: u64,
    /// CPU of the server's processes over the trial, when the server is local.
    pub server_cpu_s: Option<f64>,
    /// How late the worker threads woke when they asked to (runner/lag.rs), ms: time a
    /// reply may have waited for its worker, counted in claim latency.
    #[serde(default)]
    pub scheduling_delay_p99_ms: f64,
    #[serde(default)]
    pub scheduling_delay_max_ms: f64,
    pub table: TableStats,
}

/// Cumulative server counters read before and after a trial; the report shows deltas.
/// PostgreSQL counts per database, MySQL per server (other work on it counts too).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerCounters {
    pub deadlocks: i64,
    /// PostgreSQL: recovery conflicts. MySQL: 0 (no counterpart).
    pub conflicts: i64,
    pub rollbacks: i64,
    pub commits: i64,
    /// InnoDB row lock waits (`Innodb_row_lock_waits`); PostgreSQL has no counter of them.
    #[serde(default)]
    pub row_lock_waits: Option<i64>,
    /// Time spent waiting for InnoDB row locks (`Innodb_row_lock_time`), ms.
    /// On SQL Server both come from the hot table's `sys.dm_db_index_operational_stats`.
    #[serde(default)]
    pub row_lock_time_ms: Option<i64>,
    /// SQL Server: lock promotions (escalations) on the hot table's indexes.
    #[serde(default)]
    pub lock_escalations: Option<i64>,
    /// SQL Server: `LCK_M_*` waits in `sys.dm_os_wait_stats` (server-wide).
    #[serde(default)]
    pub lock_waits: Option<i64>,
    #[serde(default)]
    pub lock_wait_ms: Option<i64>,
    /// The pooler's transactions and the microseconds its clients waited for a server
    /// connection (PgBouncer's `SHOW STATS`: total_xact_count, total_wait_time), when
    /// claimbench reads its admin console.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pool_transactions: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pool_wait_us: Option<i64>,
    /// PostgreSQL: advisory locks held in the database when read (a level, not a
    /// counter): after a trial, the locks workers' unlocks missed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub advisory_locks: Option<i64>,
}

/// Sizes and dead rows of the hot table after a trial.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TableStats {
    pub live_tuples: i64,
    pub dead_tuples: i64,
    pub table_bytes: i64,
    pub index_bytes: i64,
}

/// Where every job ended up, counted in the database at the end of a trial.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DbReconciliation {
    pub pending: i64,
    pub fetched: i64,
    pub processing: i64,
    pub completed: i64,
    pub dead_lettered: i64,
    /// Effects rows in all.
    pub effect_rows: i64,
    /// Runs that overlapped an earlier run of their job or followed one that succeeded:
    /// duplicate executions, by the same rule as the ledger's.
    pub duplicate_executions: i64,
    /// Distinct jobs with at least one effects row.
    pub distinct_executed: i64,
    /// Effects rows written when the worker no longer owned the job.
    #[serde(default)]
    pub unowned_executions: i64,
}

impl DbReconciliation {
    /// From the nine columns every backend's `reconcile.sql` selects, in its order.
    pub fn from_columns(n: impl Fn(usize) -> i64) -> DbReconciliation {
        DbReconciliation {
            pending: n(0),
            fetched: n(1),
            processing: n(2),
            completed: n(3),
            dead_lettered: n(4),
            effect_rows: n(5),
            duplicate_executions: n(6),
            distinct_executed: n(7),
            unowned_executions: n(8),
        }
    }
}

/// Server version and the settings that decide whether two runs may be compared.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct ServerInfo {
    pub version: String,
    pub settings: Vec<(String, String)>,
}

/// One claim's plan, executed inside a transaction that was rolled back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlanSample {
    /// Seconds since the trial's start when it was taken.
    pub at_s: f64,
    /// Which statement: the claim, or a two-step strategy's select step.
    pub statement: String,
    /// `Node (index) > child`, children of one node in brackets.
    pub shape: String,
    pub execution_ms: f64,
    /// Shared buffers found in the cache and read in, for the whole statement.
    pub shared_hit: u64,
    pub shared_read: u64,
    /// Rows the scans produced or filtered out, times their loops: the work behind one
    /// batch.
    pub rows_examined: u64,
    /// The server's plan as it gave it.
    pub plan: serde_json::Value,
    /// Whether the claim ran (EXPLAIN ANALYZE): `false` for the plan alone, kept when
    /// the analysed sample did not come back in time (a claim that over-claims can run
    /// for seconds), so the cell still shows the shape that did it.
    #[serde(default = "analyzed_by_default")]
    pub analyzed: bool,
}

fn analyzed_by_default() -> bool {
    true
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Gate {
    pub check: Slo,
    #[serde(default)]
    pub phase: Option<String>,
    #[serde(default)]
    pub strategy: Option<Strategy>,
    #[serde(default)]
    pub index_layout: Option<String>,
    #[serde(default)]
    pub workers: Option<u32>,
    #[serde(default)]
    pub batch_size: Option<u32>,
}

impl Gate {
    pub fn applies_to(&self, c: &CellResult) -> bool {
        self.phase.as_ref().is_none_or(|p| *p == c.phase)
            && self.strategy.clone().is_none_or(|s| s == c.strategy)
            && self
                .index_layout
                .as_ref()
                .is_none_or(|l| *l == c.index_layout)
            && self.workers.is_none_or(|w| w == c.workers)
            && self.batch_size.is_none_or(|b| b == c.batch_size)
    }

    /// `claim_p99<=20ms` with its filters: `claim_p99<=20ms for production, 16 workers`.
    pub fn label(&self) -> String {
        let mut parts = Vec::new();
        if let Some(p) = &self.phase {
            parts.push(format!("phase {p}"));
        }
        if let Some(s) = &self.strategy {
            parts.push(s.to_string());
        }
        if let Some(l) = &self.index_layout {
            parts.push(l.clone());
        }
        if let Some(w) = self.workers {
            parts.push(format!("{w} workers"));
        }
        if let Some(b) = self.batch_size {
            parts.push(format!("batch {b}"));
        }
        if parts.is_empty() {
            format!("{} for every cell", self.check)
        } else {
            format!("{} for {}", self.check, parts.join(", "))
        }
    }
}

/// One step of a search: the rate offered and whether the SLOs held there.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchStep {
    pub rate_per_s: f64,
    pub held: bool,
    pub completed_per_s: f64,
    /// Why the step failed: the SLOs it missed, or the producer falling behind.
    pub misses: Vec<String>,
}

/// One cell's search, as run.json records it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchResult {
    pub phase: String,
    pub backend: BackendKind,
    pub strategy: Strategy,
    pub index_layout: String,
    pub workers: u32,
    pub batch_size: u32,
    /// The highest rate whose step held (`None`: none did).
    pub sustained_per_s: Option<f64>,
    pub steps: Vec<SearchStep>,
}

impl SearchResult {
    /// Whether a failing step lies above the sustained rate (else it is a lower bound).
    pub fn bracketed(&self) -> bool {
        self.sustained_per_s
            .is_some_and(|s| self.steps.iter().any(|t| !t.held && t.rate_per_s > s))
    }
}

/// The phase column: the block's name, with its arrival rate when jobs arrived.
pub fn phase_label(c: &CellResult) -> String {
    let name = if c.phase.is_empty() { "–" } else { &c.phase };
    match c.arrival_rate_per_s {
        Some(r) if r > 0.0 => format!("{name} @{r:.0}/s"),
        _ => name.to_string(),
    }
}

/// The headers of [`cell_key`]'s columns.
pub const KEY_HEADER: [&str; 6] = ["phase", "backend", "strategy", "layout", "workers", "batch"];

/// The columns that name a cell: phase, backend, strategy, layout, workers, batch.
pub fn cell_key(c: &CellResult) -> Vec<String> {
    vec![
        phase_label(c),
        c.backend_label(),
        c.strategy.to_string(),
        c.index_layout.clone(),
        c.workers.to_string(),
        c.batch_size.to_string(),
    ]
}

/// A trial's shard moves (`shard_moves`), each from the moment the new owner got its
/// shards to the moment the old owner lost them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ShardMovesSeen {
    pub windows: Vec<ShardMoveWindow>,
    /// Claims counted in no window: before the first move, or after a window's grace.
    pub outside: ShardMoveWindow,
    /// How long after a window's end a claim that returned still counts in it (the
    /// longest claim call after warm-up that took jobs: it may have read while its worker
    /// owned the shard).
    pub grace_s: f64,
}

/// One move's window, seconds since the trial's start (both 0 for `outside`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct ShardMoveWindow {
    pub from_s: f64,
    pub to_s: f64,
    /// Claims of a job another worker held (from the ledger).
    pub duplicate_claims: u64,
    /// Candidates a conditional claim found taken.
    pub lost_races: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs written before `claim_only` was recorded: a cell that claimed and never
    /// executed a job was claim-only; one that recorded the flag is taken at its word.
    #[test]
    fn claim_only_is_recorded_or_read_from_the_trials() {
        let trial = |claimed: u64, executed: u64| {
            let mut t = TrialResult::default();
            t.counts.jobs_claimed = claimed;
            t.duplicates.ledger.distinct_executed = executed;
            t
        };
        let cell = |flag, trials| CellResult {
            claim_only: flag,
            ..CellResult::fetch_order(crate::strategy::Strategy::PRODUCTION, 4, 1, trials)
        };
        assert!(cell(None, vec![trial(100, 0)]).is_claim_only());
        assert!(!cell(None, vec![trial(100, 90)]).is_claim_only());
        assert!(
            !cell(None, vec![trial(0, 0)]).is_claim_only(),
            "claimed nothing"
        );
        assert!(!cell(Some(false), vec![trial(100, 0)]).is_claim_only());
        assert!(cell(Some(true), vec![trial(0, 0)]).is_claim_only());
    }

    /// Regression: a throughput of 1e308 in a hand-edited run.json spun `report` at
    /// 100% CPU, and an escape sequence in a strategy name reached the terminal raw.
    #[test]
    fn a_results_file_with_absurd_figures_is_refused_and_controls_are_escaped() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run.json");
        let mut r = RunResult::default();
        r.cells.push(CellResult::fetch_order(
            crate::strategy::Strategy::PRODUCTION,
            2,
            1,
            vec![TrialResult::default()],
        ));
        let text = serde_json::to_string(&r).unwrap();
        std::fs::write(&path, &text).unwrap();
        RunResult::read(&path).unwrap();
        let absurd = text.replacen("\"completed_per_s\":0.0", "\"completed_per_s\":1e308", 1);
        assert_ne!(absurd, text);
        std::fs::write(&path, &absurd).unwrap();
        let e = RunResult::read(&path).unwrap_err().to_string();
        assert!(
            e.contains("cells[0].trials[0].completed_per_s: 1e308 is beyond"),
            "{e}"
        );
        let hostile = text.replacen("\"host\":\"\"", "\"host\":\"a\\u001b[2Jb\"", 1);
        assert_ne!(hostile, text);
        std::fs::write(&path, &hostile).unwrap();
        let back = RunResult::read(&path).unwrap();
        assert_eq!(back.environment.host, "a\\u{1b}[2Jb");
    }

    /// A saved run's declared strategy keeps its promises when read back, with no
    /// process-wide registry to find it in.
    #[test]
    fn a_saved_declared_strategy_reads_back_with_its_promises() {
        let d = crate::strategy::custom::Declared {
            name: "team-claim".into(),
            file: "team.sql".into(),
            sql: "UPDATE jobs_hot SET worker_id = :worker_id RETURNING id".into(),
            mysql: None,
            mssql: None,
            prevents_duplicates: false,
            respects_max_workers: false,
            listens: false,
            params: Default::default(),
            model: None,
        };
        let mut r = RunResult::default();
        r.workload.custom_strategies = vec![d.clone()];
        let s = crate::strategy::custom::declare(&d).unwrap();
        assert!(!s.prevents_duplicate_claims());
        r.cells.push(CellResult::fetch_order(s, 2, 1, Vec::new()));
        let dir = std::env::temp_dir().join(format!("cb-declared-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("run.json");
        std::fs::write(&path, serde_json::to_string(&r).unwrap()).unwrap();
        let back = RunResult::read(&path).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(back.cells[0].strategy.as_str(), "team-claim");
        assert!(back.cells[0].strategy.is_custom());
        assert!(!back.cells[0].strategy.prevents_duplicate_claims());
    }
}
