//! The failover fault (`faults.failover_at_s`): moving the primary mid-trial, making the
//! pair again before the next trial, and accounting for the acknowledged work the new
//! primary does not have. The moving itself is the command's business (the embedded
//! topology's, or the operator's `--failover-command`); claimbench never promotes or
//! stops a node of a cluster it did not start on its own.

use super::{Restart, Shared, TrialClock, background::reached};
use crate::backend::{Backend, BackendError};
use crate::ledger::MergedLedger;
use crate::results::{FailoverEvent, FailoverLosses, StandbyState};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How to fail a backend's primary over, and how to make the pair again afterwards.
#[derive(Clone)]
pub struct Failover {
    /// Moves the primary and returns once the new one has ended its recovery.
    pub fail_over: Restart,
    /// Makes the pair again between trials, with the synchronous state its standby
    /// must stream in before the next (the embedded topology). `None` on a user's
    /// cluster: the next trial runs on whichever node is primary then.
    pub rebuild: Option<(Restart, bool)>,
}

/// What the fault task saw at the failover, before the trial's accounting.
pub(super) struct Injected {
    pub at_s: f64,
    /// The trial clock's nanoseconds when the fault began and when the new primary was
    /// reported promoted: the span in which a claim may have been made on either.
    pub span_ns: (u64, u64),
    /// The database's clock (µs since the epoch) just before it, for the runs.
    pub server_us: i64,
    pub promote_s: f64,
    pub standby_before: Option<StandbyState>,
}

/// Waits for `at`, reads the standby's state and the server's clock on the primary,
/// then fails over; `None` when the trial stopped first.
pub(super) async fn inject<B: Backend>(
    backend: Arc<B>,
    action: Restart,
    at: Duration,
    clock: TrialClock,
    shared: Arc<Shared>,
) -> Result<Option<Injected>, BackendError> {
    let failed = |message: String| BackendError::other("fail over (faults.failover_at_s)", message);
    if !reached(at, clock, &shared).await {
        return Ok(None);
    }
    let standby_before = backend.standbys().await?.into_iter().next();
    let server_us = backend.server_clock_us().await?;
    let began = Instant::now();
    tokio::task::spawn_blocking(move || action())
        .await
        .map_err(|e| failed(e.to_string()))?
        .map_err(failed)?;
    Ok(Some(Injected {
        at_s: clock.secs_f64(began),
        span_ns: (clock.ns(began), clock.ns(Instant::now())),
        server_us,
        promote_s: began.elapsed().as_secs_f64(),
        standby_before,
    }))
}

/// After a trial that failed over: the pair made again, and its standby streaming in
/// the state the workload asked for, before the next trial resets.
pub(super) async fn rebuild<B: Backend>(backend: &B, f: &Failover) -> Result<(), BackendError> {
    let Some((action, synchronous)) = f.rebuild.clone() else {
        return Ok(());
    };
    let failed =
        |message: String| BackendError::other("make the pair again after a failover", message);
    tokio::task::spawn_blocking(move || action())
        .await
        .map_err(|e| failed(e.to_string()))?
        .map_err(failed)?;
    wait_for_standby(backend, synchronous).await
}

/// Waits until the primary streams to a standby, counted synchronous when it should
/// be (a reload that names it reaches the walsender a moment later), so a trial runs
/// on the topology asked for and a standby that never connects fails here with a
/// message rather than hanging the first commit.
pub async fn wait_for_standby<B: Backend>(
    backend: &B,
    synchronous: bool,
) -> Result<(), BackendError> {
    let want = if synchronous { "sync" } else { "async" };
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        // The control connection may be to a server the rebuild stopped: once more.
        let standbys = match backend.standbys().await {
            Ok(s) => s,
            Err(e) if e.kind() == crate::backend::ErrorKind::ConnectionLost => Vec::new(),
            Err(e) => return Err(e),
        };
        if standbys
            .iter()
            .any(|s| s.state == "streaming" && s.sync_state == want)
        {
            return Ok(());
        }
        if Instant::now() > deadline {
            return Err(BackendError::other(
                "wait for the standby",
                format!(
                    "the embedded standby did not stream as {want} within 60 s (pg_stat_replication: {})",
                    match standbys.first() {
                        Some(s) => format!("{} {} {}", s.name, s.state, s.sync_state),
                        None => "no standby connected".into(),
                    }
                ),
            ));
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The acknowledged work lost at the failover: the ledger's acknowledged effects and
/// completions held against the new primary, and the claims it retook. The inserts
/// lost are the reconciliation's to find (jobs that are nowhere).
pub(super) async fn account<B: Backend>(
    backend: &B,
    ledger: &MergedLedger,
    at: &Injected,
) -> Result<FailoverLosses, BackendError> {
    let (effects, completions) = backend
        .acknowledged_missing(
            &ledger.acknowledged_effects(),
            ledger.acknowledged_completions(),
        )
        .await?;
    Ok(FailoverLosses {
        rerun: completions
            .iter()
            .filter(|&&job| ledger.ran_after(job, at.server_us))
            .count() as u64,
        completions: completions.len() as u64,
        effects: effects.len() as u64,
        duplicate_executions_at_least: Some(ledger.duplicate_executions_without(&effects)),
        claims: ledger.claims_retaken(at.span_ns),
        inserts: 0,
    })
}

/// Seconds after `at_s` until a whole second's completions came back to 80% of the
/// median second's between the warm-up and the failover; `None` without such seconds
/// before it, or when they did not come back within `series` (one count per second
/// since the trial's start).
pub(super) fn throughput_recovery(series: &[u32], warmup_s: f64, at_s: f64) -> Option<f64> {
    let first = warmup_s.ceil() as usize;
    let last = at_s.floor() as usize; // the second the failover fell in is not whole
    let mut before: Vec<u32> = series.get(first..last.min(series.len()))?.to_vec();
    if before.is_empty() {
        return None;
    }
    before.sort_unstable();
    let level = f64::from(before[before.len() / 2]) * 0.8;
    let from = at_s.ceil() as usize;
    series
        .iter()
        .enumerate()
        .skip(from)
        .find(|(_, n)| f64::from(**n) >= level)
        .map(|(sec, _)| sec as f64 + 1.0 - at_s)
}

/// The event as run.json records it: with the workers' longest outage and when their
/// completions came back (`steady_from_s`: the end of warm-up).
pub(super) fn event(
    at: Injected,
    lost: FailoverLosses,
    m: &crate::metrics::WorkerMetrics,
    steady_from_s: f64,
) -> FailoverEvent {
    FailoverEvent {
        recovery_s: throughput_recovery(&m.completed_per_s, steady_from_s, at.at_s),
        at_s: at.at_s,
        promote_s: at.promote_s,
        standby_before: at.standby_before,
        max_outage_s: m.counts.max_outage_us as f64 / 1e6,
        lost,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn throughput_is_back_at_the_end_of_the_first_second_near_its_level() {
        // 1 s warm-up, 100/s until the failover at 4.5 s, nothing for two seconds,
        // then 70 (below 80) and 90.
        let series = [50, 100, 100, 100, 60, 0, 0, 70, 90, 100];
        assert_eq!(throughput_recovery(&series, 1.0, 4.5), Some(4.5));
        // Never back within the series.
        assert_eq!(throughput_recovery(&series[..8], 1.0, 4.5), None);
        // No whole second before the failover to compare with.
        assert_eq!(throughput_recovery(&series, 1.0, 1.5), None);
    }
}
