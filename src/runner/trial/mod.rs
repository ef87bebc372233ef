//! One trial, step by step: reset and connect, spawn the workers and the background
//! tasks, drive them to the deadline (or a stop), collect what they recorded, read the
//! database's evidence, and build the [`TrialResult`]. The arithmetic on what was
//! collected (reconciliation, warnings) lives in [`super::verdict`] as pure functions.

mod findings;
mod tasks;

use super::placement::Routes;
use super::reconnect::Resilient;
use super::threads::WorkerThreads;
use super::{Interrupt, RunError, Shared, TrialClock, background, cleanup, lag, verdict, worker};
use crate::backend::plan::PlanSample;
use crate::backend::{Backend, BackendKind, Endpoint, ServerCounters, Session as _};
use crate::ledger::{self, LedgerAnalysis};
use crate::metrics::{HistogramSummary, WorkerMetrics, new_histogram};
use crate::resources::{CpuSnapshot, ResourceProbe};
use crate::results::{
    Duplicates, KillEvent, LockEvidence, MaxWorkersCheck, OldestPending, QueueResult, Resources,
    RestartEvent, TrialResult,
};
use crate::strategy::Strategy;
use crate::workload::{HandlerMode, Workload};
use findings::*;
use indicatif::{ProgressBar, ProgressStyle};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};
use tasks::*;
use tokio::task::JoinHandle;

/// Which trial: one cell of the matrix and a repetition number.
pub(super) struct TrialSpec<'a> {
    pub strategy: Strategy,
    pub layout: &'a str,
    pub workers: u32,
    pub batch: u32,
    pub repetition: u32,
    /// Where to write the claim-latency interval log, and its name relative to the
    /// run's folder; `None` writes none.
    pub interval_log: Option<(std::path::PathBuf, String)>,
}

fn spawn_err(e: tokio::task::JoinError) -> RunError {
    RunError::Task(e.to_string())
}

/// What a trial runs with besides its spec: the run's worker threads, how to show
/// progress, and the interrupt to watch.
pub(super) struct Harness<'a> {
    pub interrupt: &'a Interrupt,
    pub threads: &'a WorkerThreads,
    pub label: &'a str,
    pub quiet: bool,
    /// How to restart the server, for `faults.restart_db_at_s`.
    pub restart: Option<&'a super::Restart>,
    /// How to restart the lock service empty, for `faults.restart_lock_service_at_s`.
    pub lock_restart: Option<&'a super::Restart>,
    /// How to fail the primary over, for `faults.failover_at_s`.
    pub failover: Option<&'a super::Failover>,
}

/// The connections a trial needs, opened before its clock starts.
struct Sessions<S> {
    workers: Vec<S>,
    sampler: Option<S>,
    producer: Option<S>,
    rescuer: Option<S>,
    /// The cleanup job's (`[cleanup]`).
    cleaner: Option<S>,
    killer: Option<S>,
    planner: Option<S>,
    holder: Option<S>,
    /// Clients of the workers' pooler that hold its server connections
    /// (`faults.hold_pool_s`): in the workers' role, so they go where workers go.
    pool_holders: Vec<S>,
}

/// A trial task that may fail with a database error.
type Task<T> = JoinHandle<Result<T, crate::backend::BackendError>>;

/// The tasks injecting faults into a running trial.
struct FaultTasks {
    killer: Option<Task<Vec<KillEvent>>>,
    restarter: Option<Task<Vec<RestartEvent>>>,
    /// The lock service's restarts (`faults.restart_lock_service_at_s`).
    lock_restarter: Option<Task<Vec<RestartEvent>>>,
    failover: Option<Task<Option<super::failover::Injected>>>,
    holder: Option<Task<Option<background::HeldSnapshot>>>,
    pool_holder: Option<Task<Option<(f64, f64)>>>,
    /// The shard moves' windows, as they happened.
    mover: Option<Task<Vec<(f64, f64)>>>,
}

/// The tasks of a running trial.
struct Running<S> {
    workers: Vec<WorkerTask<S>>,
    sampler: Option<JoinHandle<Result<background::SamplerReport, crate::backend::BackendError>>>,
    producer: Option<JoinHandle<Result<background::ProducerReport, crate::backend::BackendError>>>,
    rescuer: Option<JoinHandle<Result<u64, crate::backend::BackendError>>>,
    cleaner: Option<Task<cleanup::CleanupReport>>,
    /// Reads the workers' and the rescuer's ledgers as they hand them over.
    tally: ledger::TallyThread,
    faults: FaultTasks,
    planner: Option<Task<Option<PlanSample>>>,
    /// The pooler's peaks (server connections in use, clients waiting).
    pool_watch: Option<Task<Option<(i64, i64)>>>,
    /// One scheduling-delay probe per worker thread the trial uses.
    lag_probes: Vec<JoinHandle<hdrhistogram::Histogram<u64>>>,
    /// Claims so far per worker, for the progress bar.
    progress: Vec<crate::runner::worker::Progress>,
    shared: Arc<Shared>,
}

/// What the tasks recorded, merged.
struct Collected<S> {
    metrics: WorkerMetrics,
    ledger: ledger::TallyFindings,
    sampled: background::SamplerReport,
    produced: background::ProducerReport,
    rescued: u64,
    cleaned: Option<cleanup::CleanupReport>,
    kills: Vec<KillEvent>,
    restarts: Vec<RestartEvent>,
    lock_restarts: Vec<RestartEvent>,
    failover: Option<super::failover::Injected>,
    plan: Option<PlanSample>,
    /// The pooler's peaks: server connections in use, clients waiting.
    pool_peaks: Option<(i64, i64)>,
    /// When the pool's server connections were taken and given back.
    pool_held: Option<(f64, f64)>,
    /// When the snapshot holder took and released its snapshot, and its scans.
    held: Option<background::HeldSnapshot>,
    /// Each shard move's window, (from, to) s since the start.
    shard_windows: Option<Vec<(f64, f64)>>,
    /// How late the worker threads woke, µs, all probes merged.
    scheduling_delay: hdrhistogram::Histogram<u64>,
    /// Kept open until the CPU reading after the trial, then dropped.
    sessions: Vec<S>,
}

/// What the server says once a trial's connections have closed.
struct AfterTrial {
    counters: crate::backend::ServerCounters,
    table: crate::backend::TableStats,
    db: crate::backend::DbReconciliation,
    standbys: Vec<crate::results::StandbyState>,
    /// Each node's counters on a cluster target.
    nodes: Vec<crate::backend::cluster::NodeReading>,
}

async fn after_trial<B: Backend>(backend: &B) -> Result<AfterTrial, RunError> {
    // Backends flush their statistics as they exit; give them a moment.
    tokio::time::sleep(Duration::from_millis(150)).await;
    Ok(AfterTrial {
        counters: backend.counters().await?,
        table: backend.table_stats().await?,
        db: backend.reconcile().await?,
        standbys: backend.standbys().await?,
        nodes: backend.cluster_readings(false).await?,
    })
}

/// What the server says just before the workers start: the readings the trial's
/// figures are differences from.
struct BeforeTrial {
    server_pid: Option<crate::backend::ServerProcess>,
    counters: crate::backend::ServerCounters,
    nodes: Vec<crate::backend::cluster::NodeReading>,
    cpu: crate::resources::CpuSnapshot,
    /// The server's clock, µs: per-queue figures count from it.
    server_start_us: i64,
}

async fn before_trial<B: Backend>(
    backend: &B,
    probe: &mut ResourceProbe,
) -> Result<BeforeTrial, RunError> {
    let server_pid = backend.server_pid().await;
    Ok(BeforeTrial {
        server_pid,
        counters: backend.counters().await?,
        nodes: backend.cluster_readings(false).await?,
        cpu: probe.snapshot(server_pid),
        server_start_us: backend.server_clock_us().await?,
    })
}

/// What the workers' merged ledger says about a trial beyond its counters.
struct LedgerFindings {
    analysis: ledger::LedgerAnalysis,
    failover_lost: Option<crate::results::FailoverLosses>,
    time_to_rescue: Option<HistogramSummary>,
    passed_over: Option<ledger::PassedOver>,
    peak: ledger::LedgerPeak,
    holds: Vec<ledger::QueueHold>,
    shard_moves: Option<crate::results::ShardMovesSeen>,
}

/// What the tally counted as the trial went, and what the whole trial's events say
/// where a finding needs them (kept only then, and in builds with debug assertions,
/// which hold the two readings against each other): the acknowledged work a failover
/// lost, each capped queue's exact holds and the shard moves' windows.
async fn ledger_findings<B: Backend, S>(
    backend: &B,
    w: &Workload,
    collected: &mut Collected<S>,
) -> Result<LedgerFindings, RunError> {
    let tally = &mut collected.ledger;
    let merged = tally.events.take().map(ledger::MergedLedger::from_events);
    // Ids are creation order; with one priority and nothing scheduled, fetch order too.
    let p = &w.population;
    let ordered = p.all_priorities().len() == 1 && p.scheduled_share == 0.0;
    let mut found = LedgerFindings {
        analysis: tally.analysis,
        failover_lost: None,
        time_to_rescue: tally.time_to_rescue.clone(),
        passed_over: tally.passed_over.filter(|_| ordered),
        peak: tally.peak,
        holds: Vec::new(),
        shard_moves: None,
    };
    let Some(merged) = merged else {
        return Ok(found);
    };
    findings::check_tally(tally, &merged)?;
    if let Some(at) = &collected.failover {
        found.failover_lost = Some(super::failover::account(backend, &merged, at).await?);
    }
    found.shard_moves = collected
        .shard_windows
        .take()
        .map(|windows| super::shards::seen(&windows, &collected.metrics, &merged));
    found.holds = exact_holds(backend, w, &merged).await?;
    Ok(found)
}

/// Runs one trial on a freshly reset schema.
pub(super) async fn run_trial<B: Backend>(
    backend: &Arc<B>,
    workload: &Arc<Workload>,
    spec: &TrialSpec<'_>,
    harness: &Harness<'_>,
    probe: &mut ResourceProbe,
) -> Result<TrialResult, RunError> {
    let (label, quiet) = (harness.label, harness.quiet);
    let w = workload.as_ref();
    let (seeded, reset_s) = reset(backend.as_ref(), w, spec, harness).await?;
    // Kept until the trial's end: dropping it closes the workers' network.
    let route = match w.network() {
        Some(d) => Some(super::network::route(backend.as_ref(), d).await?),
        None => None,
    };
    let routes = Routes {
        via: route.as_ref().map(|r| r.via),
        placement: w.placement(),
        nodes: backend.nodes(),
    };
    let sessions = open_sessions(backend, w, spec, harness.threads, routes).await?;
    let shared_backend = backend;
    let backend = backend.as_ref();
    let before = before_trial(backend, probe).await?;

    let sources = (0..spec.workers)
        .chain(sessions.rescuer.is_some().then_some(ledger::RESCUER))
        .collect();
    let tally = ledger::TallyThread::start(sources, findings::keeps_every_event(w, spec, harness))
        .map_err(RunError::Threads)?;
    let clock = TrialClock::new(w, Instant::now());
    let started_wall = std::time::SystemTime::now();
    let running = spawn(
        shared_backend,
        workload,
        spec,
        (clock, routes),
        sessions,
        (harness, tally),
    );
    let (stop_at, interrupted) = drive(&running, clock, w, harness.interrupt, label, quiet).await;
    let shared = running.shared.clone();
    let overran = end_overrun(backend, &running).await?;
    let mut collected = collect(running, w).await?;
    let cpu_after = probe.snapshot(before.server_pid);
    drop(std::mem::take(&mut collected.sessions));
    let ran = Ran {
        seeded,
        reset_s,
        route,
        routes,
        before,
        cpu_after,
        clock,
        started_wall,
        stop_at,
        interrupted,
        overran,
        collected,
    };
    let result = conclude(backend, w, spec, harness, ran).await?;
    // The trial's result is in hand: its in-flight file has no more to keep (a failed
    // trial keeps it).
    if let Some(c) = &shared.checkpoint {
        c.finish();
    }
    Ok(result)
}

/// The failover the trial injected, as its result records it; the standby pair is made
/// again for the next trial (after an interrupt none follows: it is removed instead).
async fn failover_events<B: Backend>(
    backend: &B,
    harness: &Harness<'_>,
    (injected, interrupted): (Option<super::failover::Injected>, bool),
    lost: crate::results::FailoverLosses,
    m: &WorkerMetrics,
    steady_from_s: f64,
) -> Result<Vec<crate::results::FailoverEvent>, RunError> {
    let Some(at) = injected else {
        return Ok(Vec::new());
    };
    let event = super::failover::event(at, lost, m, steady_from_s);
    if let (Some(f), false) = (harness.failover, interrupted) {
        super::failover::rebuild(backend, f).await?;
    }
    Ok(vec![event])
}

/// A trial up to its workers' results, and the readings around it: what [`conclude`]
/// turns into the trial's result.
struct Ran<S> {
    seeded: u64,
    reset_s: f64,
    /// Kept until the result is written: dropping it closes the workers' network.
    route: Option<super::network::Route>,
    routes: Routes,
    before: BeforeTrial,
    cpu_after: crate::resources::CpuSnapshot,
    clock: TrialClock,
    started_wall: std::time::SystemTime,
    stop_at: Instant,
    interrupted: bool,
    overran: u32,
    collected: Collected<S>,
}

/// The most advisory locks one sampler reading saw above the level before the trial
/// (locks other clients of the database held then are not the trial's); `None` when
/// the server reports none.
fn advisory_locks_piled(
    before: Option<i64>,
    series: &[crate::results::TableSample],
) -> Option<i64> {
    let most = series.iter().filter_map(|s| s.advisory_locks).max()?;
    Some((most - before.unwrap_or(0)).max(0))
}

/// The trial's result from what it ran: the server's readings after it, the merged
/// ledger, the reconciliation, the quality warnings and every figure.
async fn conclude<B: Backend>(
    backend: &B,
    w: &Workload,
    spec: &TrialSpec<'_>,
    harness: &Harness<'_>,
    mut ran: Ran<B::Session>,
) -> Result<TrialResult, RunError> {
    let label = harness.label;
    let after = after_trial(backend).await?;
    let db = after.db;
    let mut found = ledger_findings(backend, w, &mut ran.collected).await?;

    let measured = ran.clock.measured(ran.stop_at);
    let measured_s = measured.as_secs_f64();
    let steady_from_s = w.trial.warmup.as_secs_f64();
    let mut sampled = ran.collected.sampled;
    let table_series = std::mem::take(&mut sampled.table);
    let purge_series = std::mem::take(&mut sampled.purge);
    let max_workers = max_workers_checks(w, &sampled, std::mem::take(&mut found.holds));
    let queues = match w.table.is_some() && !spec.strategy.reads_queue() {
        // A declared table's rows are the team's: only a claim per queue says which
        // queue each job it completed was in.
        true => Vec::new(),
        false => per_queue(backend, w, ran.before.server_start_us, measured, &sampled).await?,
    };
    let m = ran.collected.metrics;
    let claim_latency_log = write_interval_log(spec, &m, ran.started_wall, label)?;
    let delay = &ran.collected.scheduling_delay;
    let calls = m.counts.claim_calls;
    let resources = resources(ran.before.cpu, ran.cpu_after, calls, after.table, delay);
    let wall_s = ran.stop_at.duration_since(ran.clock.start).as_secs_f64();
    let created = ran.seeded + ran.collected.produced.produced;
    let in_doubt = (m.counts.claims_in_doubt, ran.collected.produced.in_doubt);
    let reconciliation = reconciliation(
        w,
        spec,
        created,
        db,
        &found.analysis,
        in_doubt,
        found.failover_lost.as_mut(),
    );
    let lost = found.failover_lost.unwrap_or_default();
    let injected = (ran.collected.failover.take(), ran.interrupted);
    let failovers = failover_events(backend, harness, injected, lost, &m, steady_from_s).await?;
    let mut warnings = verdict::quality_warnings(&verdict::TrialFacts {
        strategy: spec.strategy.clone(),
        ledger: &found.analysis,
        effects_duplicate_executions: db.duplicate_executions,
        failover: found.failover_lost.unwrap_or_default(),
        over_claims: (m.counts.over_claims, m.counts.most_claimed, spec.batch),
        lost: reconciliation.lost,
        max_workers: &max_workers,
        claims_recorded: m.claim_latency.len(),
        cpu_share: rate(resources.client_cpu_s, wall_s),
        worker_threads: harness.threads.used(spec.workers as usize) as u32,
        client_cpu_s: resources.client_cpu_s,
        server_cpu_s: resources.server_cpu_s,
        scheduling_delay_p99_ms: resources.scheduling_delay_p99_ms,
        scheduling_delay_max_ms: resources.scheduling_delay_max_ms,
        exhausted_at_s: sampled.exhausted_at_s,
        stop: w.trial.stop,
        sample_interval: w.trial.sample_interval,
        mean_sample_ms: sampled.mean_sample_ms,
        max_interval_ms: sampled.max_interval_ms,
        interrupted: ran.interrupted,
        producer_max_lag_ms: ran.collected.produced.max_lag_ms,
        arrivals: w.offered_mean().is_some(),
        stop_forced: (ran.overran, STOP_GRACE.as_secs_f64()),
        claim_lock_refusals: (m.counts.claim_lock_refusals, m.counts.claim_calls),
        advisory_locks: advisory_locks_piled(ran.before.counters.advisory_locks, &table_series)
            .map(|most| (most, 2 * i64::from(spec.workers) * i64::from(spec.batch))),
        held_past_lease: match w.faults.lease {
            Some(_) => {
                let c = &m.counts;
                c.hangs + c.crashed_after_start + c.abandoned + c.stranded_by_loss
            }
            None => 0,
        },
        held_by_lost_connections: {
            let c = &m.counts;
            c.crashed_after_start + c.abandoned + c.stranded_by_loss
        },
    });
    warnings.extend(backend.trial_warnings(w, spec.layout, &spec.strategy));
    let per_s = |n: u64| rate(n as f64, measured_s);
    let over = over_time(
        w,
        ran.collected.held,
        (steady_from_s, steady_from_s + measured_s),
        (&m, &sampled, &table_series, &purge_series),
    );
    let c = m.counts;
    Ok(TrialResult {
        network: ran.route.map(|r| r.probe),
        cluster: ran
            .routes
            .cluster_trial(spec.workers, &ran.before.nodes, &after.nodes),
        standbys: after.standbys,
        rerun_because: Vec::new(),
        repetition: spec.repetition,
        measured_s,
        warmup_s: steady_from_s,
        interrupted: ran.interrupted,
        seeded_jobs: ran.seeded,
        reset_s: ran.reset_s,
        produced_jobs: ran.collected.produced.produced,
        producer_max_lag_ms: ran.collected.produced.max_lag_ms,
        rescued_jobs: ran.collected.rescued,
        cleanup: ran.collected.cleaned.take().map(|r| {
            let measured = (
                steady_from_s.ceil() as usize,
                (steady_from_s + measured_s) as usize,
            );
            cleanup::figures(r, &m.claim_seconds, measured, wall_s)
        }),
        connection_kills: ran.collected.kills,
        server_restarts: ran.collected.restarts,
        lock_service_restarts: ran.collected.lock_restarts,
        failovers,
        plan: ran.collected.plan,
        table_series,
        purge_series,
        soak: over.soak,
        timeline: over.timeline,
        pool_held: ran
            .collected
            .pool_held
            .zip(w.faults.hold_pool)
            .map(|((from_s, to_s), h)| crate::results::PoolHeld {
                connections: h.connections,
                from_s,
                to_s,
            }),
        snapshot_held: over.snapshot_held,
        time_to_rescue: found.time_to_rescue,
        passed_over: found.passed_over,
        ledger_peak: Some(found.peak),
        shard_moves: found.shard_moves,
        counts: c,
        claims_per_s: per_s(c.claim_calls_steady),
        claimed_per_s: per_s(c.jobs_claimed_steady),
        completed_per_s: per_s(c.jobs_completed_steady),
        claimed_series: m.claimed_per_s,
        completed_series: m.completed_per_s,
        claim_latency: HistogramSummary::from_histogram(&m.claim_latency),
        claim_latency_log,
        empty_claim_latency: HistogramSummary::from_histogram(&m.empty_claim_latency),
        queue_wait: HistogramSummary::from_histogram(&m.queue_wait),
        duplicates: duplicates(found.analysis, db.duplicate_executions, db.effect_rows),
        reconciliation,
        locks: lock_evidence(
            &sampled,
            spec.workers,
            (ran.before.counters, after.counters),
            ran.collected.pool_peaks,
        ),
        oldest_pending: oldest_pending(w, sampled),
        max_workers,
        queues,
        resources,
        warnings,
    })
}

/// Checks the trial can run its faults, then resets and seeds the schema with a
/// spinner; returns the seeded jobs and the seconds it took.
async fn reset<B: Backend>(
    backend: &B,
    w: &Workload,
    spec: &TrialSpec<'_>,
    harness: &Harness<'_>,
) -> Result<(u64, f64), RunError> {
    can_restart(w, harness, backend.kind())?;
    if !w.faults.failover_at.is_empty() && harness.failover.is_none() {
        return Err(RunError::Backend(crate::backend::BackendError::other(
            "fail over (faults.failover_at_s)",
            format!(
                "claimbench fails over only the topology it started; give --failover-command for the {} cluster",
                backend.kind()
            ),
        )));
    }
    let started = Instant::now();
    let spinner = reset_spinner(harness.quiet, harness.label, w.population.backlog);
    let seeded = backend.reset(w, spec.layout, w.seed).await?;
    backend.setup_strategy(&spec.strategy).await?;
    if spec.strategy.def().sharded {
        let queues = w.population.queue_names();
        for c in [
            super::shards::first_map(&queues, spec.workers),
            super::shards::planner_map(&queues, spec.workers),
        ] {
            backend
                .change_shards(c.change, &c.queues, &c.workers)
                .await?;
        }
    }
    spinner.finish_and_clear();
    Ok((seeded, started.elapsed().as_secs_f64()))
}

/// `n` per second over `secs`: 0 for a trial stopped before it began (not infinite).
fn rate(n: f64, secs: f64) -> f64 {
    if secs > 0.0 { n / secs } else { 0.0 }
}

/// A workload that restarts the server needs a way to (main checks before the run).
fn can_restart(w: &Workload, harness: &Harness<'_>, kind: BackendKind) -> Result<(), RunError> {
    if w.faults.restart_at.is_empty() || harness.restart.is_some() {
        return Ok(());
    }
    Err(RunError::Backend(crate::backend::BackendError::Query {
        what: "restart the server (faults.restart_db_at_s)",
        kind: crate::backend::ErrorKind::Other,
        code: None,
        message: format!(
            "claimbench cannot restart the {kind} server it did not start; give --restart-command"
        ),
    }))
}

/// Writes the trial's `.hlog` where the spec asks; returns its name for run.json.
fn write_interval_log(
    spec: &TrialSpec<'_>,
    m: &WorkerMetrics,
    started: std::time::SystemTime,
    label: &str,
) -> Result<Option<String>, RunError> {
    let Some((path, name)) = &spec.interval_log else {
        return Ok(None);
    };
    let io = |reason| {
        RunError::Results(crate::results::ResultsError::Io {
            path: path.clone(),
            reason,
        })
    };
    let log = m.claim_seconds.encode(started, label).map_err(io)?;
    let (Some(dir), Some(file)) = (path.parent(), path.file_name()) else {
        return Err(io(std::io::Error::other("not a file's path")));
    };
    crate::results::Folder::open(dir)?.write(&file.to_string_lossy(), &log)?;
    Ok(Some(name.clone()))
}

/// Waits for the deadline, a stop from a task (drain, a worker's error) or an
/// interrupt, showing claims/s meanwhile; then tells every task to stop. Returns when
/// it stopped and whether an interrupt did it.
async fn drive<S>(
    running: &Running<S>,
    clock: TrialClock,
    w: &Workload,
    interrupt: &Interrupt,
    label: &str,
    quiet: bool,
) -> (Instant, bool) {
    let planned = TrialClock::planned(w);
    let bar = progress_bar(quiet, planned, label);
    let mut last = (Instant::now(), 0u64);
    let deadline = tokio::time::Instant::from_std(clock.start + planned);
    let mut tick = tokio::time::interval(Duration::from_millis(250));
    let mut interrupted = false;
    let mut checkpointed_s = 0;
    loop {
        tokio::select! {
            _ = tokio::time::sleep_until(deadline) => break,
            _ = running.shared.stopped() => break,
            _ = interrupt.stopped() => { interrupted = true; break }
            _ = tick.tick() => {
                let claimed: u64 = running.progress.iter().map(|c| c.load(Ordering::Relaxed)).sum();
                let now = Instant::now();
                let rate = (claimed - last.1) as f64 / now.duration_since(last.0).as_secs_f64().max(1e-3);
                last = (now, claimed);
                let elapsed = now.duration_since(clock.start);
                if let Some(c) = &running.shared.checkpoint
                    && elapsed.as_secs() > checkpointed_s
                {
                    checkpointed_s = elapsed.as_secs();
                    c.write(&crate::runner::checkpoint::Progress {
                        at_s: elapsed.as_secs_f64(),
                        claimed,
                    });
                }
                bar.set_position(elapsed.as_millis() as u64);
                bar.set_message(format!("{rate:>9.0} claimed/s{}", phase_note(w, elapsed)));
            }
        }
    }
    running.shared.stop();
    let stop_at = Instant::now();
    bar.finish_and_clear();
    (stop_at, interrupted)
}

/// How long workers get, after the stop, to finish the statement they are in.
const STOP_GRACE: Duration = Duration::from_secs(10);

/// Waits up to [`STOP_GRACE`] for the workers to stop; then ends the connections of those
/// still in a statement (a claim whose plan went bad can run for minutes, and Ctrl-C must
/// still write results). Returns how many workers were cut off.
async fn end_overrun<B: Backend>(
    backend: &B,
    running: &Running<B::Session>,
) -> Result<u32, RunError> {
    let until = Instant::now() + STOP_GRACE;
    loop {
        let busy = running.workers.iter().filter(|t| !t.is_finished()).count() as u32;
        if busy == 0 {
            return Ok(0);
        }
        if Instant::now() >= until {
            running.shared.force();
            let mut s = backend.connect("claimbench-stopper", "stopper").await?;
            s.kill_workers(&backend.worker_role()).await?;
            return Ok(busy);
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Waits for every task and merges what it recorded; the first worker error wins.
async fn collect<S>(running: Running<S>, w: &Workload) -> Result<Collected<S>, RunError> {
    let mut metrics = WorkerMetrics::default();
    let mut sessions = Vec::with_capacity(running.workers.len());
    let mut first_error = None;
    for t in running.workers {
        match t.await.map_err(spawn_err)? {
            Ok(r) => {
                metrics.merge(&r.metrics);
                sessions.push(r.session);
            }
            Err(e) => first_error = first_error.or(Some(e)),
        }
    }
    let sampled = match running.sampler {
        Some(t) => t.await.map_err(spawn_err)?,
        None => Ok(background::SamplerReport {
            max_queue_active: vec![None; w.population.queues.len()],
            ..Default::default()
        }),
    };
    let produced = match running.producer {
        Some(t) => t.await.map_err(spawn_err)??,
        None => background::ProducerReport::default(),
    };
    let mut rescued = 0;
    if let Some(t) = running.rescuer {
        rescued = t.await.map_err(spawn_err)??;
    }
    let cleaned = match running.cleaner {
        Some(t) => Some(t.await.map_err(spawn_err)??),
        None => None,
    };
    // Every ledger went with its task: the tally has read all there was.
    let ledger = running.tally.finish().map_err(RunError::Accounting)?;
    let kills = match running.faults.killer {
        Some(t) => t.await.map_err(spawn_err)??,
        None => Vec::new(),
    };
    let restarts = match running.faults.restarter {
        Some(t) => t.await.map_err(spawn_err)??,
        None => Vec::new(),
    };
    let lock_restarts = match running.faults.lock_restarter {
        Some(t) => t.await.map_err(spawn_err)??,
        None => Vec::new(),
    };
    let failover = match running.faults.failover {
        Some(t) => t.await.map_err(spawn_err)??,
        None => None,
    };
    let plan = match running.planner {
        Some(t) => t.await.map_err(spawn_err)??,
        None => None,
    };
    let pool_peaks = match running.pool_watch {
        Some(t) => t.await.map_err(spawn_err)??,
        None => None,
    };
    let pool_held = match running.faults.pool_holder {
        Some(t) => t.await.map_err(spawn_err)??,
        None => None,
    };
    let held = match running.faults.holder {
        Some(t) => t.await.map_err(spawn_err)??,
        None => None,
    };
    let shard_windows = match running.faults.mover {
        Some(t) => Some(t.await.map_err(spawn_err)??),
        None => None,
    };
    let mut scheduling_delay = new_histogram();
    for t in running.lag_probes {
        let h = t.await.map_err(spawn_err)?;
        scheduling_delay.add(&h).expect("same bounds");
    }
    if let Some(e) = first_error {
        return Err(e.into());
    }
    Ok(Collected {
        scheduling_delay,
        metrics,
        ledger,
        sampled: sampled?,
        produced,
        rescued,
        cleaned,
        kills,
        restarts,
        lock_restarts,
        failover,
        plan,
        pool_peaks,
        pool_held,
        held,
        shard_windows,
        sessions,
    })
}

/// Per queue, when the workload has several: completions in the steady window (the
/// server's clock read at the start, plus warm-up) and the sampled oldest-pending age.
async fn per_queue<B: Backend>(
    backend: &B,
    w: &Workload,
    server_start_us: i64,
    measured: Duration,
    sampled: &background::SamplerReport,
) -> Result<Vec<QueueResult>, RunError> {
    if w.population.queues.len() < 2 {
        return Ok(Vec::new());
    }
    let from_us = server_start_us + w.trial.warmup.as_micros() as i64;
    let to_us = from_us + measured.as_micros() as i64;
    let completed = backend.completed_by_queue(from_us, to_us).await?;
    Ok(queue_results(
        w,
        &completed,
        measured.as_secs_f64(),
        &sampled.queue_oldest_pending,
        w.trial.warmup.as_secs_f64(),
    ))
}

/// Seeding a large backlog takes seconds: say so while it happens.
fn reset_spinner(quiet: bool, label: &str, backlog: u64) -> ProgressBar {
    if quiet {
        return ProgressBar::hidden();
    }
    let spinner = ProgressBar::new_spinner();
    spinner.set_style(
        ProgressStyle::with_template("{prefix} {spinner} {msg} {elapsed}")
            .expect("static template"),
    );
    spinner.set_prefix(label.to_string());
    spinner.set_message(format!("resetting the schema and seeding {backlog} jobs"));
    spinner.enable_steady_tick(Duration::from_millis(120));
    spinner
}

/// The phase a trial with a horizon pin is in, for its progress line: `· pinned
/// (idle-in-transaction), 42 s to go`; nothing without a pin.
fn phase_note(w: &Workload, elapsed: Duration) -> String {
    let warmup = (elapsed < w.trial.warmup).then_some(("warm-up".to_string(), w.trial.warmup));
    let named = w.timeline.iter().find(|p| elapsed < p.to).map(|p| {
        let rate = p.rate_per_s(w.producer_rate_per_s);
        match p.pin {
            Some(k) => (format!("{} ({rate:.0}/s, {} pin)", p.name, k.name()), p.to),
            None => (format!("{} ({rate:.0}/s)", p.name), p.to),
        }
    });
    let pinned = w.faults.hold_snapshot.and_then(|(from, to)| {
        if elapsed < from {
            Some(("clean".to_string(), from))
        } else if elapsed < to {
            Some((format!("pinned ({})", w.faults.hold_kind.name()), to))
        } else {
            None
        }
    });
    let after_pin = w.faults.hold_snapshot.is_some() && w.timeline.is_empty();
    let Some((phase, until)) = warmup.or(named).or(pinned) else {
        return if after_pin {
            " · after the pin".into()
        } else {
            String::new()
        };
    };
    let left = until.saturating_sub(elapsed).as_secs();
    format!(" · {phase}, {left} s to go")
}

fn progress_bar(quiet: bool, planned: Duration, label: &str) -> ProgressBar {
    if quiet {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(planned.as_millis() as u64);
    bar.set_style(
        ProgressStyle::with_template("{prefix} [{bar:30}] {elapsed:>4} ({eta} left) {msg}")
            .expect("static template")
            .progress_chars("=> "),
    );
    bar.set_prefix(label.to_string());
    bar
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_progress_line_names_the_pins_phase_and_the_seconds_to_its_end() {
        let toml = "name = \"t\"\n[population]\nbacklog = 1\nqueues = [{ name = \"q\" }]\n[faults]\nhold_snapshot_s = [10.0, 20.0]\nhold_kind = \"idle-in-transaction\"\n[matrix]\nstrategies = [\"production\"]\nindex_layouts = [\"fetch-order\"]\nworkers = [1]\nbatch_sizes = [1]\n[trial]\nwarmup_s = 2.0\nduration_s = 30\n";
        let w = Workload::parse(std::path::Path::new("t.toml"), toml).unwrap();
        let at = |s: f64| phase_note(&w, Duration::from_secs_f64(s));
        assert_eq!(at(0.5), " · warm-up, 1 s to go");
        assert_eq!(at(4.0), " · clean, 6 s to go");
        assert_eq!(at(12.2), " · pinned (idle-in-transaction), 7 s to go");
        assert_eq!(at(25.0), " · after the pin");
        let plain = Workload::parse(
            std::path::Path::new("t.toml"),
            &toml.replace(
                "hold_snapshot_s = [10.0, 20.0]\nhold_kind = \"idle-in-transaction\"\n",
                "",
            ),
        )
        .unwrap();
        assert_eq!(phase_note(&plain, Duration::from_secs(4)), "");
        // A timeline names its own phases, with their rates and the pin.
        let timed = Workload::parse(
            std::path::Path::new("t.toml"),
            &(toml
                .replace(
                    "hold_snapshot_s = [10.0, 20.0]\nhold_kind = \"idle-in-transaction\"\n",
                    "",
                )
                .replace("duration_s = 30\n", "")
                + "[[matrix.timeline]]\nname = \"clean\"\nfor_s = 10\nrate_per_s = 100\n\
                   [[matrix.timeline]]\nname = \"surge\"\nfor_s = 5\nrate_per_s = 300\npin = \"snapshot\"\n"),
        )
        .unwrap()
        .phase(0);
        let at = |s: f64| phase_note(&timed, Duration::from_secs_f64(s));
        assert_eq!(at(1.0), " · warm-up, 1 s to go");
        assert_eq!(at(4.0), " · clean (100/s), 6 s to go");
        assert_eq!(at(12.0), " · surge (300/s, snapshot pin), 3 s to go");
        assert_eq!(timed.trial.duration, Some(Duration::from_secs(13)));
        assert_eq!(
            timed.faults.hold_snapshot,
            Some((Duration::from_secs(10), Duration::from_secs(15)))
        );
    }
}
