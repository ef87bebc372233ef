//! What a trial records of the faults injected into it: connection kills, server
//! restarts, a failover and what it lost, a snapshot held open, a pool held by another
//! client.

use super::StandbyState;
use serde::{Deserialize, Serialize};

/// A snapshot held open by another session (`faults.hold_snapshot_s`), and how long
/// the queue took to recover once it closed.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SnapshotHold {
    /// Seconds since the trial's start when it was taken and released.
    pub from_s: f64,
    pub to_s: f64,
    /// From its release until the oldest-pending age came back to its level before the
    /// hold; `None` when it did not within the trial (or nothing was sampled).
    pub recovery_s: Option<f64>,
    /// The trial before, during and after the hold, each phase from its own seconds;
    /// absent in results written before phases were read, or when a phase had no
    /// whole second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phases: Option<HoldPhases>,
    /// A scanning reader's (`repeatable-read-scans`) scans of the hot table inside its
    /// snapshot: when each began (s since the trial's start) and how long it took, ms.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scans: Vec<(f64, f64)>,
}

/// A trial read as clean, pinned and after: the pin's cost as ratios against the
/// clean phase of the same trial, and how long dead tuples took to come back.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct HoldPhases {
    pub clean: HoldPhase,
    pub held: HoldPhase,
    pub after: HoldPhase,
    /// From the release until the horizon's evidence (dead tuples on PostgreSQL, the
    /// history list length on MySQL and MariaDB) was first back under 1.1 times the
    /// clean phase's median; `None` when it was not within the trial (or nothing was
    /// sampled).
    pub recovery_s: Option<f64>,
    /// Whether it stayed there: the median of that reading and every later one under
    /// the level too (autovacuum's saw-tooth crosses any one level now and then).
    pub stayed: bool,
}

/// One phase's figures, over its whole seconds (seconds since the trial's start).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct HoldPhase {
    pub from_s: f64,
    pub to_s: f64,
    /// Jobs completed per second (claimed, in claim-only mode).
    pub jobs_per_s: f64,
    /// Claim latency's 99th percentile over the phase, µs.
    pub claim_p99_us: Option<u64>,
    pub dead_tuples_median: Option<i64>,
    pub dead_tuples_max: Option<i64>,
    pub history_length_median: Option<i64>,
    pub history_length_max: Option<i64>,
    /// The oldest horizon any other session or slot held, in transactions.
    pub horizon_age_max: Option<i64>,
    /// WAL written per job done, bytes.
    pub wal_bytes_per_job: Option<f64>,
    /// Autovacuum and autoanalyze runs of the hot table during the phase (between its
    /// first and last reading).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub autovacuums: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub autoanalyzes: Option<i64>,
    /// The most WAL replication slots kept, bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slot_wal_bytes_max: Option<i64>,
    /// The oldest pending job's age at its worst, ms.
    pub oldest_pending_max_ms: Option<f64>,
    /// The hot table's heap and index bytes at the phase's last sample.
    pub table_bytes: Option<i64>,
    pub index_bytes: Option<i64>,
}

/// A long trial without a pin read as its first quarter against its last: whether
/// anything drifted over it (throughput, claim p99, oldest-pending age, dead tuples,
/// the table's and its indexes' size).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct SoakDrift {
    pub early: HoldPhase,
    pub late: HoldPhase,
}

/// One named phase of a trial's timeline (`[[timeline]]`) over its measured whole
/// seconds: what it offered and what the queue and the server did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TimelineReading {
    pub name: String,
    /// Jobs offered per second in the phase (0: none arrived).
    pub offered_per_s: f64,
    /// The horizon pin the phase held (`snapshot`, `idle-in-transaction`), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pin: Option<String>,
    #[serde(flatten)]
    pub figures: HoldPhase,
}

/// Server connections of the workers' pooler held by another client
/// (`faults.hold_pool_s`): how many, and from when to when (seconds since the trial's
/// start) all were held.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct PoolHeld {
    pub connections: u32,
    pub from_s: f64,
    pub to_s: f64,
}

/// One injected server restart.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct RestartEvent {
    /// Seconds since the trial's start (warm-up included) when the restart began.
    pub at_s: f64,
    /// Until the server accepted connections again, crash recovery included.
    pub took_s: f64,
}

/// One injected failover, and what the workers had been told was committed that the
/// new primary does not have.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct FailoverEvent {
    /// Seconds since the trial's start (warm-up included) when the primary was stopped.
    pub at_s: f64,
    /// From stopping the primary until the standby had ended its recovery (the embedded
    /// topology), or until the operator's `--failover-command` returned, s.
    pub promote_s: f64,
    /// The standby as the primary last reported it, read just before the fault: how far
    /// behind it was when the primary went.
    pub standby_before: Option<StandbyState>,
    /// The longest any worker went without a connection to a server taking writes, s.
    pub max_outage_s: f64,
    /// Seconds after the failover until completions per second came back to their level
    /// before it; `None` when they did not within the trial.
    pub recovery_s: Option<f64>,
    pub lost: FailoverLosses,
}

/// Acknowledged work the new primary does not have after a failover, from the
/// workers' ledger against its tables.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct FailoverLosses {
    /// Completions the database acknowledged whose archive row (that run's) is absent:
    /// the job is back in the hot table, or ran again.
    pub completions: u64,
    /// Of those, jobs that ran again after the failover: duplicate executions the
    /// failover caused.
    pub rerun: u64,
    /// Handler effects the database acknowledged that are absent.
    pub effects: u64,
    /// The ledger's duplicate executions without the runs whose effects are absent: the
    /// fewest the effects may count (a lost run that succeeded made each later run of
    /// its job a duplicate in the ledger's eyes, and in the effects' none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duplicate_executions_at_least: Option<u64>,
    /// Claims the workers saw committed that the new primary did not have: another
    /// worker claimed the job while its first holder still believed it owned it.
    pub claims: u64,
    /// Jobs the producer was told were inserted that are absent.
    pub inserts: u64,
}

impl FailoverLosses {
    /// Every acknowledged write lost (the reruns are a consequence, not more writes).
    pub fn total(&self) -> u64 {
        self.completions + self.effects + self.claims + self.inserts
    }
}

/// One injected connection kill.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct KillEvent {
    /// Seconds since the trial's start (warm-up included).
    pub at_s: f64,
    /// Worker connections the server ended.
    pub connections: u64,
}
