//! The tasks that run beside the workers during a trial, each on its own connection:
//! the sampler (oldest-pending age, lock waits, per-queue active counts, drain check),
//! the open-loop producer and the rescuer.

use super::reconnect::Resilient;
use super::{Shared, TrialClock};
use crate::backend::{BackendError, Session};
use crate::ledger::WorkerLedger;
use crate::results::{KillEvent, RestartEvent};
use crate::workload::{StopRule, Workload};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What the sampler saw over a trial.
#[derive(Debug, Default)]
pub struct SamplerReport {
    /// (seconds since start, oldest eligible pending age in ms).
    pub oldest_pending: Vec<(f64, Option<f64>)>,
    /// The same per queue (workload order), when the workload has more than one.
    pub queue_oldest_pending: Vec<Vec<(f64, Option<f64>)>>,
    pub samples: u64,
    pub lock_wait_samples: u64,
    pub active_samples: u64,
    /// Highest active count seen per queue (same order as the workload's queues).
    pub max_queue_active: Vec<Option<i64>>,
    /// First moment after warm-up at which no eligible job was pending.
    pub exhausted_at_s: Option<f64>,
    /// Mean wall time of one sample query, ms: what the sampler costs the database.
    pub mean_sample_ms: f64,
    /// The longest interval the sampler had to stretch to, ms (see [`SAMPLER_BUDGET`]).
    pub max_interval_ms: f64,
    /// The hot table's health at each reading, where the backend reports it.
    pub table: Vec<crate::results::TableSample>,
    /// InnoDB's history list length at each reading, where the backend reports it.
    pub purge: Vec<crate::results::PurgeSample>,
}

/// Share of one server core the sampler may use. When a sample costs more (the
/// oldest-pending scan grows with the backlog), the next one waits longer, so the
/// sampler never turns into load of its own. A sample's cost is estimated as the fastest
/// of the last few: wall time under CPU contention overstates what the query itself costs.
pub const SAMPLER_BUDGET: f64 = 0.05;
const COST_WINDOW: usize = 5;

pub async fn sample<S: Session>(
    mut session: Resilient<S>,
    workload: Arc<Workload>,
    clock: TrialClock,
    shared: Arc<Shared>,
    producers: bool,
) -> Result<SamplerReport, BackendError> {
    let mut r = SamplerReport {
        max_queue_active: vec![None; workload.population.queues.len()],
        ..SamplerReport::default()
    };
    let drain = workload.trial.stop == StopRule::Drain;
    let interval = workload
        .trial
        .sample_interval
        .expect("the sampler runs only with an interval");
    let mut busy = Duration::ZERO;
    let mut wait = Duration::ZERO;
    let mut recent = [Duration::MAX; COST_WINDOW];
    while !shared.stopping() {
        shared.sleep_unless_stopping(wait).await;
        if shared.stopping() {
            break;
        }
        let began = Instant::now();
        // After a lost connection (a restart) the sample is skipped: a gap in the series.
        let Some(s) = session.call(async |s| s.sample(&workload).await).await? else {
            continue;
        };
        let now = Instant::now();
        let took = now - began;
        busy += took;
        recent[r.samples as usize % COST_WINDOW] = took;
        let cost = recent.iter().min().copied().unwrap_or(took);
        let period = interval.max(cost.div_f64(SAMPLER_BUDGET));
        wait = period.saturating_sub(took);
        r.max_interval_ms = r.max_interval_ms.max(period.as_secs_f64() * 1e3);
        let at = clock.secs_f64(now);
        let (oldest_pending_ms, work_left) = (s.oldest_pending_ms, s.work_left);
        record(&mut r, s, at, &shared);
        if oldest_pending_ms.is_none()
            && !producers
            && clock.is_steady(now)
            && r.exhausted_at_s.is_none()
        {
            r.exhausted_at_s = Some(at);
        }
        if drain && !work_left {
            shared.stop();
        }
    }
    // A trial shorter than two of the sampler's periods (a slow sample on a loaded host
    // stretches them) would end with one reading or none: one more as it stops, so the
    // series always holds two readings to compare. Bounded, so a server that is gone
    // cannot hold up the trial's end.
    if r.samples < 2 {
        let began = Instant::now();
        let closing = session.call(async |s| s.sample(&workload).await);
        if let Ok(Ok(Some(s))) = tokio::time::timeout(CLOSING_SAMPLE_WITHIN, closing).await {
            let now = Instant::now();
            busy += now - began;
            record(&mut r, s, clock.secs_f64(now), &shared);
        }
    }
    if r.samples > 0 {
        r.mean_sample_ms = busy.as_secs_f64() * 1e3 / r.samples as f64;
    }
    Ok(r)
}

/// What the producer did over a trial.
#[derive(Debug, Default, Clone, Copy)]
pub struct ProducerReport {
    pub produced: u64,
    /// Jobs in inserts that failed with their connection and were sent again: each may
    /// also have committed the first time.
    pub in_doubt: u64,
    /// The longest any job waited past its arrival time to be inserted, after warm-up.
    pub max_lag_ms: f64,
}

/// Lag past which the producer counts as behind its schedule: its tick is 20 ms, so
/// more means the database (or this host) could not take the inserts when due.
pub const PRODUCER_LAG_LIMIT_MS: f64 = 250.0;
/// One insert carries at most this many jobs, so a catch-up never becomes one huge
/// statement.
const MAX_PER_INSERT: usize = 10_000;

/// Inserts jobs on an open-loop schedule: arrival times are drawn ahead (Poisson or
/// evenly spaced) and every job due by now is inserted with its own arrival time, so a
/// slow insert shows as queue wait and as lag, never as a silently lower rate.
pub async fn produce<S: Session>(
    mut session: Resilient<S>,
    workload: Arc<Workload>,
    (schedule, announce): (super::schedule::Schedule, bool),
    clock: TrialClock,
    shared: Arc<Shared>,
) -> Result<ProducerReport, BackendError> {
    use rand::{Rng, SeedableRng};
    let mut rng = rand::rngs::SmallRng::seed_from_u64(workload.seed ^ 0x5eed_f0a7);
    let mut next_after = move |t: f64| {
        schedule
            .next(t, || rng.r#gen::<f64>())
            .unwrap_or(f64::INFINITY)
    };
    let mut report = ProducerReport::default();
    let mut next_s = next_after(0.0);
    // Arrival instants (s since the start) due and not yet inserted: kept across an
    // insert that died with its connection, so the jobs go in late with their own
    // arrival times rather than not at all.
    let mut due: Vec<f64> = Vec::new();
    let mut ages = Vec::new();
    // After a reconnection, catching up is the outage's lag, not the producer's: it
    // does not count until an insert is back on time.
    let mut recovering = false;
    let mut tick = tokio::time::interval(Duration::from_millis(20));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    while !shared.stopping() {
        tick.tick().await;
        let now = Instant::now();
        let now_s = clock.secs_f64(now);
        while next_s <= now_s && due.len() < MAX_PER_INSERT {
            due.push(next_s);
            next_s = next_after(next_s);
        }
        if due.is_empty() {
            continue;
        }
        ages.clear();
        ages.extend(due.iter().map(|t| ((now_s - t) * 1e6) as i64));
        let lag_ms = ages[0] as f64 / 1e3;
        match session
            .call(async |s| s.produce(&workload, &ages).await)
            .await?
        {
            Some(n) => {
                report.produced += n;
                due.clear();
                if announce {
                    session.call(async |s| s.announce().await).await?;
                }
                if recovering {
                    recovering = lag_ms > PRODUCER_LAG_LIMIT_MS;
                } else if clock.is_steady(now) {
                    report.max_lag_ms = report.max_lag_ms.max(lag_ms);
                }
            }
            None => {
                report.in_doubt += due.len() as u64;
                recovering = true;
            }
        }
    }
    Ok(report)
}

/// Returns expired claims to pending every quarter lease; records each as a release in
/// `ledger` (the rescuer's, [`crate::ledger::RESCUER`]); returns how many.
pub async fn rescue<S: Session>(
    mut session: Resilient<S>,
    lease: Duration,
    (clock, shared): (TrialClock, Arc<Shared>),
    mut ledger: WorkerLedger,
) -> Result<u64, BackendError> {
    let mut rescued = 0u64;
    let period = (lease / 4).max(Duration::from_millis(50));
    while !shared.stopping() {
        shared.sleep_unless_stopping(period).await;
        let t = clock.ns(Instant::now());
        ledger.tick(t);
        let Some(ids) = session.call(async |s| s.rescue(lease).await).await? else {
            continue;
        };
        for id in ids {
            ledger.release(id, t);
            rescued += 1;
        }
    }
    Ok(rescued)
}

/// How long the closing sample may take before the trial ends without it.
const CLOSING_SAMPLE_WITHIN: Duration = Duration::from_secs(2);

/// One sampler reading at `at` seconds into the trial, into the report (and the
/// checkpoint, when the run keeps one).
fn record(r: &mut SamplerReport, s: crate::backend::Sample, at: f64, shared: &Shared) {
    r.samples += 1;
    r.lock_wait_samples += u64::from(s.lock_waiting);
    r.active_samples += u64::from(s.active);
    r.oldest_pending
        .push((at, trial_age(s.oldest_pending_ms, at)));
    let mut table = s.table;
    if let Some(t) = &mut table {
        t.at_s = at;
    }
    if let Some(c) = &shared.checkpoint {
        c.write(&super::checkpoint::Reading {
            at_s: at,
            oldest_pending_ms: trial_age(s.oldest_pending_ms, at),
            table: table.as_ref(),
            history_length: s.history_length,
        });
    }
    r.table.extend(table);
    if let Some(history_length) = s.history_length {
        r.purge.push(crate::results::PurgeSample {
            at_s: at,
            history_length,
        });
    }
    if r.queue_oldest_pending.len() < s.queue_oldest_ms.len() {
        r.queue_oldest_pending
            .resize_with(s.queue_oldest_ms.len(), Vec::new);
    }
    for (series, age) in r.queue_oldest_pending.iter_mut().zip(&s.queue_oldest_ms) {
        series.push((at, trial_age(*age, at)));
    }
    for (max, seen) in r.max_queue_active.iter_mut().zip(&s.queue_active) {
        if let Some(seen) = seen {
            *max = Some(max.unwrap_or(0).max(*seen));
        }
    }
}

/// Sleeps until `at` after the trial's start; `false` when the trial stopped first.
pub(super) async fn reached(at: Duration, clock: TrialClock, shared: &Shared) -> bool {
    let wait = (clock.start + at).saturating_duration_since(Instant::now());
    shared.sleep_unless_stopping(wait).await;
    !shared.stopping()
}

/// Ends every worker connection at each instant of `schedule` (since the trial's start)
/// with the server's own kill; returns when and how many it ended.
pub async fn kill<S: Session>(
    mut session: Resilient<S>,
    role: String,
    schedule: Vec<Duration>,
    clock: TrialClock,
    shared: Arc<Shared>,
) -> Result<Vec<KillEvent>, BackendError> {
    let mut events = Vec::with_capacity(schedule.len());
    for at in schedule {
        if !reached(at, clock, &shared).await {
            break;
        }
        let at_s = clock.secs_f64(Instant::now());
        // The killer's own connection may have gone with a restart: once more on a new one.
        let connections = loop {
            if let Some(n) = session.call(async |s| s.kill_workers(&role).await).await? {
                break n;
            }
        };
        events.push(KillEvent { at_s, connections });
    }
    Ok(events)
}

/// Restarts the server at each instant of `schedule` (since the trial's start) and
/// waits until it is back; returns when each began and how long it took.
pub async fn restart(
    (action, what): (super::Restart, &'static str),
    schedule: Vec<Duration>,
    clock: TrialClock,
    shared: Arc<Shared>,
) -> Result<Vec<RestartEvent>, BackendError> {
    let failed = |message: String| BackendError::Query {
        what,
        kind: crate::backend::ErrorKind::Other,
        code: None,
        message,
    };
    let mut events = Vec::with_capacity(schedule.len());
    for at in schedule {
        if !reached(at, clock, &shared).await {
            break;
        }
        let began = Instant::now();
        let at_s = clock.secs_f64(began);
        let act = action.clone();
        tokio::task::spawn_blocking(move || act())
            .await
            .map_err(|e| failed(e.to_string()))?
            .map_err(failed)?;
        events.push(RestartEvent {
            at_s,
            took_s: began.elapsed().as_secs_f64(),
        });
    }
    Ok(events)
}

/// Samples the claim's plan once, mid-way through the measured window (half a second
/// into it for a drain), on its own connection; `None` when the backend takes no sample,
/// the trial stopped first, or the sample did not come back within 5 s.
pub async fn plan<S: Session>(
    mut session: Resilient<S>,
    strategy: crate::strategy::Strategy,
    batch: u32,
    workload: Arc<Workload>,
    clock: TrialClock,
    shared: Arc<Shared>,
) -> Result<Option<crate::backend::plan::PlanSample>, BackendError> {
    let t = &workload.trial;
    let at = t.warmup
        + match (t.stop, t.duration) {
            (StopRule::Duration, Some(d)) => d / 2,
            _ => Duration::from_millis(500),
        };
    if !reached(at, clock, &shared).await {
        return Ok(None);
    }
    let began = Instant::now();
    // The plan alone first: it runs nothing, so it comes back even when the claim
    // itself takes longer than the sample may wait (the cell that over-claims).
    let plan_only = tokio::time::timeout(
        Duration::from_secs(2),
        session.call(async |s| s.explain_claim_plan_only(&strategy, batch).await),
    )
    .await;
    let plan_only = match plan_only {
        Ok(Ok(p)) => p.flatten(),
        Ok(Err(e)) if !e.is_retryable() => return Err(e),
        _ => None,
    };
    let sample = tokio::time::timeout(
        Duration::from_secs(5),
        session.call(async |s| s.explain_claim(&strategy, batch).await),
    )
    .await;
    // The sample runs the workers' claim under their settings, so it can meet what
    // they meet (a lock timeout, a deadlock): then there is no sample, as on a timeout.
    let analyzed = match sample {
        Ok(Err(e)) if e.is_retryable() => None,
        Ok(r) => r?.flatten(),
        Err(_) => None,
    };
    Ok(analyzed.or(plan_only).map(|mut p| {
        p.at_s = clock.secs_f64(began);
        p
    }))
}

/// How often a `repeatable-read-scans` reader scans the hot table.
pub const SCAN_EVERY: Duration = Duration::from_secs(1);

/// What the horizon's holder did: when it took and released its hold, and (a scanning
/// reader) when each of its scans began and how long it took, (s, ms).
#[derive(Debug, Clone, Default)]
pub struct HeldSnapshot {
    pub window: (f64, f64),
    pub scans: Vec<(f64, f64)>,
}

/// Holds one snapshot open from `from` to `to` (since the trial's start), as a report
/// job or a forgotten session would (a scanning reader scans the hot table every
/// [`SCAN_EVERY`] inside it); returns when it was taken and released.
pub async fn hold_snapshot<S: Session>(
    mut session: S,
    ((from, to), kind): ((Duration, Duration), crate::workload::HoldKind),
    clock: TrialClock,
    shared: Arc<Shared>,
) -> Result<Option<HeldSnapshot>, BackendError> {
    if kind != crate::workload::HoldKind::RepeatableReadScans {
        let take = async move |s: &mut S| s.hold_snapshot(kind).await;
        let window = hold(vec![session], (from, to), (clock, &shared), take).await?;
        return Ok(window.map(|window| HeldSnapshot {
            window,
            scans: Vec::new(),
        }));
    }
    if !reached(from, clock, &shared).await {
        return Ok(None);
    }
    session.hold_snapshot(kind).await?;
    let taken = clock.secs_f64(Instant::now());
    let mut scans = Vec::new();
    let end = clock.start + to;
    loop {
        let began = Instant::now();
        if began >= end || shared.stopping() {
            break;
        }
        session.scan_held().await?;
        scans.push((clock.secs_f64(began), began.elapsed().as_secs_f64() * 1e3));
        let next = (began + SCAN_EVERY).min(end);
        shared
            .sleep_unless_stopping(next.saturating_duration_since(Instant::now()))
            .await;
    }
    session.end(false).await?;
    Ok(Some(HeldSnapshot {
        window: (taken, clock.secs_f64(Instant::now())),
        scans,
    }))
}

/// Holds a transaction open on each of `sessions` from `from` to `to` (since the
/// trial's start): through a transaction pooler each pins one of its server connections,
/// as another service's clients would. BEGIN runs on the server, so each begins only
/// once the pooler gave it one; returns when all were taken and given back.
pub async fn hold_pool<S: Session>(
    sessions: Vec<S>,
    window: (Duration, Duration),
    clock: TrialClock,
    shared: Arc<Shared>,
) -> Result<Option<(f64, f64)>, BackendError> {
    hold(sessions, window, (clock, &shared), async |s: &mut S| {
        s.begin().await
    })
    .await
}

/// At `from`, `take` on each session, one after another; at `to`, a rollback on each.
/// When the last take returned and when the last rollback did, in trial seconds; `None`
/// when the trial stopped before `from`.
async fn hold<S: Session>(
    mut sessions: Vec<S>,
    (from, to): (Duration, Duration),
    (clock, shared): (TrialClock, &Shared),
    mut take: impl AsyncFnMut(&mut S) -> Result<(), BackendError>,
) -> Result<Option<(f64, f64)>, BackendError> {
    if !reached(from, clock, shared).await {
        return Ok(None);
    }
    for s in &mut sessions {
        take(s).await?;
    }
    let taken = clock.secs_f64(Instant::now());
    reached(to, clock, shared).await;
    for s in &mut sessions {
        s.end(false).await?;
    }
    Ok(Some((taken, clock.secs_f64(Instant::now()))))
}

/// A sampled oldest-pending age, `at_s` seconds into the trial, as the trial counts it: a
/// job seeded before the trial has waited since the trial began, as its queue wait
/// does (the workers cap that the same way). Its row's own time says when the reset
/// was made, or on the embedded cluster the pristine copy it came from, which can be
/// minutes before this trial.
fn trial_age(age_ms: Option<f64>, at_s: f64) -> Option<f64> {
    age_ms.map(|ms| ms.min(at_s * 1e3))
}

/// How often the pool watcher reads the pooler during a trial.
const POOL_WATCH_EVERY: Duration = Duration::from_millis(100);

/// The pooler's busiest moment of the trial, warm-up included: the most server
/// connections serving clients at once and the most clients waiting for one, from
/// readings every [`POOL_WATCH_EVERY`]; `None` when no pooler console is read (the
/// task then ends at its first reading).
pub async fn watch_pool<B: crate::backend::Backend>(
    backend: Arc<B>,
    shared: Arc<Shared>,
) -> Result<Option<(i64, i64)>, BackendError> {
    let mut peak: Option<(i64, i64)> = None;
    while !shared.stopping() {
        let Some((active, waiting)) = backend.pool_now().await? else {
            return Ok(None);
        };
        let (a, w) = peak.unwrap_or((0, 0));
        peak = Some((a.max(active), w.max(waiting)));
        shared.sleep_unless_stopping(POOL_WATCH_EVERY).await;
    }
    Ok(peak)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_seeded_job_is_as_old_as_the_trial_at_most() {
        // Seeded an hour ago (a pristine copy), sampled 2.5 s in: 2.5 s.
        assert_eq!(trial_age(Some(3_600_000.0), 2.5), Some(2500.0));
        // Produced during the trial: its own age.
        assert_eq!(trial_age(Some(120.0), 2.5), Some(120.0));
        assert_eq!(trial_age(None, 2.5), None);
    }
}
