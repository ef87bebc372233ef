//! What the cleanup job (`[cleanup]`) did in one trial and what it cost the workers
//! beside it.

use crate::metrics::HistogramSummary;
use serde::{Deserialize, Serialize};

/// What the job had left at one moment.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CleanupState {
    /// Finished rows older than the retention, counted up to
    /// [`CleanupFigures::PAST_RETENTION_CAP`].
    pub past_retention: u64,
    /// The table the job cleans (the archive, or the hot table under update-in-place):
    /// its heap, indexes and TOAST, bytes.
    pub table_bytes: i64,
}

/// The job's own figures for one trial.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CleanupFigures {
    /// As the workload set it: rows older than this went, this many per statement, a
    /// run this often.
    pub retain_s: f64,
    pub batch: u32,
    pub every_s: f64,
    /// Runs started (one every `cleanup.every_s`; a run repeats its statement until one
    /// removes fewer than a batch).
    pub runs: u64,
    pub statements: u64,
    pub removed: u64,
    /// Statements that ended in a deadlock or lock timeout with the workers and rolled
    /// back (the run ended there; the next one starts over).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub conflicts: u64,
    /// Rows removed per second over the whole trial: the job runs from its start.
    pub removed_per_s: f64,
    /// Each statement's time, from send to answer.
    pub statement_latency: HistogramSummary,
    /// Milliseconds the job's statements ran in each second since the trial's start.
    pub busy_ms_series: Vec<u32>,
    /// The workers' claim p99 over the measured seconds in which a statement of the job
    /// ran and over those in which none did, µs, with how many seconds each.
    pub claim_p99_during_us: Option<u64>,
    pub claim_p99_between_us: Option<u64>,
    pub seconds_during: u32,
    pub seconds_between: u32,
    /// Whether its last run that the trial's end did not cut short ended with a
    /// statement that removed fewer than a batch: nothing was left past retention then.
    /// `None` when no run ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub caught_up: Option<bool>,
    /// At the trial's start and after it.
    pub start: Option<CleanupState>,
    pub end: Option<CleanupState>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl CleanupFigures {
    /// The most rows past retention a reading counts: beyond it, "far behind" is the
    /// answer, and counting further would take as long as the backlog.
    pub const PAST_RETENTION_CAP: u64 = 10_000_000;

    /// The claim p99 while the job ran over the p99 between its runs.
    pub fn claim_p99_ratio(&self) -> Option<f64> {
        match (self.claim_p99_during_us, self.claim_p99_between_us) {
            (Some(d), Some(b)) if b > 0 => Some(d as f64 / b as f64),
            _ => None,
        }
    }
}
