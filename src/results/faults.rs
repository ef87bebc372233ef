//! What a trial records of the faults injected into it: connection kills, server
//! restarts, a failover and what it lost, a snapshot held open, a pool held by another
//! client.

use super::StandbyState;
use serde::{Deserialize, Serialize};

/// A snapshot held open by another session (`faults.hold_snapshot_s`), and how long
/// the queue took to recover once it closed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct SnapshotHold {
    /// Seconds since the trial's start when it was taken and released.
    pub from_s: f64,
    pub to_s: f64,
    /// From its release until the oldest-pending age came back to its level before the
    /// hold; `None` when it did not within the trial (or nothing was sampled).
    pub recovery_s: Option<f64>,
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
