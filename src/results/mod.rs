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

mod cleanup;
mod faults;
mod file;
pub mod folder;
mod readings;
pub use cleanup::{CleanupFigures, CleanupState};
pub use faults::*;
pub use file::MAX_FIGURE;
pub use folder::Folder;
pub use readings::{
    ClusterTrial, DbReconciliation, LockEvidence, MaxWorkersCheck, NetworkProbe, NodeTrial,
    OldestPending, PlanSample, PurgeSample, QueueResult, Reconciliation, Resources, ServerCounters,
    ServerInfo, TableSample, TableStats,
};

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
    /// The block's storage model (`storage`) when it is not the default archive move:
    /// where its finished jobs' rows went (`update-in-place`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub storage: Option<String>,
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
    /// The cleanup job beside the workers (`[cleanup]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cleanup: Option<CleanupFigures>,
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
    /// The lock service's restarts without its data (`faults.restart_lock_service_at_s`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lock_service_restarts: Vec<RestartEvent>,
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
            storage: None,
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
    /// exceed it by at most what its runs in doubt could make
    /// (`LedgerAnalysis::duplicate_executions_at_most`).
    pub effects_duplicate_executions: i64,
    pub effects_rows: i64,
    /// duplicate claims / distinct jobs claimed.
    pub claim_rate: f64,
    /// duplicate executions / distinct jobs executed.
    pub execution_rate: f64,
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
    /// longest claim call after warm-up, empty ones included: it may have read while its
    /// worker owned the shard).
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
            prevents_duplicates: false,
            ..crate::strategy::custom::Declared::postgres(
                "team-claim",
                "team.sql",
                "UPDATE jobs_hot SET worker_id = :worker_id RETURNING id",
            )
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
