//! The cleanup job beside the workers (`[cleanup]`), on its own connection as a
//! deployment's would run: a run every `every`, each repeating one statement (at most
//! `batch` of the oldest finished rows past `retain`) until a statement removes fewer
//! than a batch. What it cost the workers is read from the same trial: their claim p99
//! over the measured seconds in which one of its statements ran, against the seconds in
//! which none did.

use super::reconnect::Resilient;
use super::{Shared, TrialClock};
use crate::backend::{BackendError, Session};
use crate::metrics::hlog::PerSecond;
use crate::metrics::{HistogramSummary, new_histogram};
use crate::results::{CleanupFigures, CleanupState};
use crate::workload::Cleanup;
use hdrhistogram::Histogram;
use std::sync::Arc;
use std::time::Instant;

/// What the job did over a trial, before the workers' seconds are read beside it.
#[derive(Debug)]
pub struct CleanupReport {
    config: Cleanup,
    runs: u64,
    statements: u64,
    removed: u64,
    conflicts: u64,
    latency: Histogram<u64>,
    busy_ms: Vec<u32>,
    caught_up: Option<bool>,
    start: Option<CleanupState>,
    end: Option<CleanupState>,
}

/// Runs the job until the trial stops; reads what it left at the start and at the end.
pub async fn clean<S: Session>(
    mut session: Resilient<S>,
    c: Cleanup,
    (clock, shared): (TrialClock, Arc<Shared>),
) -> Result<CleanupReport, BackendError> {
    let cap = CleanupFigures::PAST_RETENTION_CAP;
    let mut r = CleanupReport {
        config: c,
        runs: 0,
        statements: 0,
        removed: 0,
        conflicts: 0,
        latency: new_histogram(),
        busy_ms: Vec::new(),
        caught_up: None,
        start: session
            .call(async |s| s.cleanup_state(c.retain, cap).await)
            .await?,
        end: None,
    };
    // On a schedule from the first run, as cron keeps one: a run that overran its
    // period starts the next at once rather than queueing those it missed.
    let first = Instant::now();
    let mut next = first + c.every;
    while !shared.stopping() {
        shared
            .sleep_unless_stopping(next.saturating_duration_since(Instant::now()))
            .await;
        if shared.stopping() {
            break;
        }
        r.runs += 1;
        let mut caught_up = false;
        while !shared.stopping() {
            let t0 = Instant::now();
            let done = match session
                .call(async |s| s.clean(c.retain, c.batch).await)
                .await
            {
                Ok(done) => done,
                // A deadlock or lock timeout with the workers (InnoDB's gap locks on the
                // archive's index): the statement rolled back, as a deployment's job
                // would see it; counted, and the run ends there.
                Err(e) if e.is_retryable() => {
                    r.conflicts += 1;
                    None
                }
                Err(e) => return Err(e),
            };
            let t1 = Instant::now();
            r.statements += 1;
            let _ = r
                .latency
                .record(t1.duration_since(t0).as_micros().max(1) as u64);
            busy(&mut r.busy_ms, clock, (t0, t1));
            match done {
                Some(n) => {
                    r.removed += n;
                    if n < u64::from(c.batch) {
                        caught_up = true;
                        break;
                    }
                }
                // Reconnected, or rolled back: the next run starts over.
                None => break,
            }
        }
        // A run the trial's end cut short says nothing of whether the job keeps up.
        if caught_up || !shared.stopping() {
            r.caught_up = Some(caught_up);
        }
        let now = Instant::now();
        while next <= now {
            next += c.every;
        }
    }
    r.end = session
        .call(async |s| s.cleanup_state(c.retain, cap).await)
        .await?;
    Ok(r)
}

/// Adds the milliseconds from `t0` to `t1` to the seconds they fall in.
fn busy(series: &mut Vec<u32>, clock: TrialClock, (t0, t1): (Instant, Instant)) {
    let (mut at, end) = (clock.secs_f64(t0), clock.secs_f64(t1));
    while at < end {
        let sec = at.floor() as usize;
        let upto = end.min(sec as f64 + 1.0);
        if series.len() <= sec {
            series.resize(sec + 1, 0);
        }
        // At least 1 ms for any part of a second a statement ran in: a fast statement
        // still ran in that second.
        series[sec] += (((upto - at) * 1000.0).round() as u32).max(1);
        at = upto;
    }
}

/// The job's figures for the trial, with the workers' claim p99 in the measured seconds
/// (`first` to `last`, whole seconds since the start) split by whether it ran in them.
pub fn figures(
    r: CleanupReport,
    claim_seconds: &PerSecond,
    (first, last): (usize, usize),
    trial_s: f64,
) -> CleanupFigures {
    let (mut during, mut between) = (new_histogram(), new_histogram());
    let (mut seconds_during, mut seconds_between) = (0u32, 0u32);
    claim_seconds.each_second(|sec, h| {
        if sec < first || sec >= last {
            return;
        }
        let ran = r.busy_ms.get(sec).is_some_and(|&ms| ms > 0);
        let (into, n) = match ran {
            true => (&mut during, &mut seconds_during),
            false => (&mut between, &mut seconds_between),
        };
        into.add(h).expect("same bounds");
        *n += 1;
    });
    let p99 = |h: &Histogram<u64>| (!h.is_empty()).then(|| h.value_at_quantile(0.99));
    CleanupFigures {
        retain_s: r.config.retain.as_secs_f64(),
        batch: r.config.batch,
        every_s: r.config.every.as_secs_f64(),
        runs: r.runs,
        statements: r.statements,
        removed: r.removed,
        conflicts: r.conflicts,
        removed_per_s: match trial_s > 0.0 {
            true => r.removed as f64 / trial_s,
            false => 0.0,
        },
        statement_latency: HistogramSummary::from_histogram(&r.latency),
        claim_p99_during_us: p99(&during),
        claim_p99_between_us: p99(&between),
        seconds_during,
        seconds_between,
        busy_ms_series: r.busy_ms,
        caught_up: r.caught_up,
        start: r.start,
        end: r.end,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(busy_ms: Vec<u32>) -> CleanupReport {
        CleanupReport {
            config: Cleanup {
                retain: std::time::Duration::from_secs(2),
                every: std::time::Duration::from_secs(1),
                batch: 1000,
            },
            runs: 2,
            statements: 3,
            removed: 2500,
            conflicts: 0,
            latency: new_histogram(),
            busy_ms,
            caught_up: Some(true),
            start: None,
            end: None,
        }
    }

    #[test]
    fn the_claims_of_seconds_the_job_ran_in_are_read_apart_from_the_rest() {
        // Six seconds: warm-up second 0; the job ran in seconds 2 and 4 (and in the
        // warm-up, which is not measured); claims took 8 ms then, 1 ms otherwise.
        let mut claims = PerSecond::default();
        for sec in 0..6usize {
            let us = if sec == 2 || sec == 4 { 8000 } else { 1000 };
            (0..50).for_each(|_| claims.record(sec, us));
        }
        let f = figures(report(vec![30, 0, 120, 0, 5]), &claims, (1, 6), 5.0);
        assert_eq!((f.seconds_during, f.seconds_between), (2, 3));
        assert_eq!(f.claim_p99_during_us.map(|v| v / 100), Some(80));
        assert_eq!(f.claim_p99_between_us.map(|v| v / 10), Some(100));
        assert!((f.claim_p99_ratio().unwrap() - 8.0).abs() < 0.1);
        assert_eq!(f.removed_per_s, 500.0);
        // A job that never ran in the measured seconds has nothing to compare.
        let f = figures(report(vec![30]), &claims, (1, 6), 5.0);
        assert_eq!(f.claim_p99_during_us, None);
        assert_eq!(f.claim_p99_ratio(), None);
    }

    #[test]
    fn a_statement_counts_in_every_second_it_spans() {
        let clock = TrialClock::starting(Instant::now());
        let at = |s: f64| clock.at(s);
        let mut series = Vec::new();
        busy(&mut series, clock, (at(0.5), at(2.25)));
        assert_eq!(series, vec![500, 1000, 250]);
        // A statement of microseconds still marks its second.
        busy(&mut series, clock, (at(3.1), at(3.1001)));
        assert_eq!(series[3], 1);
    }
}
