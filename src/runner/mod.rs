//! The runner: expands the workload's matrix into trials, runs each on a freshly reset
//! schema with its workers, sampler, producer and rescuer, merges their recordings, and
//! writes the results as cells finish (so Ctrl-C or an error never loses finished work).

pub mod background;
pub mod worker;

use crate::backend::{Backend, BackendError};
use crate::ledger;
use crate::metrics::{HistogramSummary, WorkerMetrics, new_histogram};
use crate::report;
use crate::resources::{CpuSnapshot, ResourceProbe};
use crate::results::{
    CellResult, Duplicates, Environment, LockEvidence, MaxWorkersCheck, OldestPending, QueueResult,
    Reconciliation, Resources, RunResult, TrialResult, WorkloadRecord,
};
use crate::strategy::Strategy;
use crate::warnings::Warning;
use crate::workload::{HandlerMode, StopRule, Workload};
use indicatif::{ProgressBar, ProgressStyle};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};
use tokio::sync::Notify;

/// Stop signalling shared by a trial's tasks. Workers only ever `load` the flag.
#[derive(Default)]
pub struct Shared {
    stop: AtomicBool,
    notify: Notify,
}

impl Shared {
    pub fn stopping(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    pub fn stop(&self) {
        self.stop.store(true, Ordering::Relaxed);
        self.notify.notify_waiters();
    }

    /// Sleeps for `d`, or less if the trial stops meanwhile.
    pub async fn sleep_unless_stopping(&self, d: Duration) {
        let notified = self.notify.notified();
        tokio::pin!(notified);
        notified.as_mut().enable();
        if self.stopping() {
            return;
        }
        tokio::select! {
            _ = tokio::time::sleep(d) => {}
            _ = notified => {}
        }
    }

    async fn stopped(&self) {
        let notified = self.notify.notified();
        tokio::pin!(notified);
        notified.as_mut().enable();
        if !self.stopping() {
            notified.await;
        }
    }
}

/// Ctrl-C, as the runner sees it: set once by the signal handler in `main`.
pub type Interrupt = Arc<Shared>;

/// A trial's time base. Copied into every task; all ledger times are relative to `start`.
#[derive(Debug, Clone, Copy)]
pub struct TrialClock {
    start: Instant,
    steady_from: Instant,
    end: Option<Instant>,
}

impl TrialClock {
    pub fn ns(&self, t: Instant) -> u64 {
        t.saturating_duration_since(self.start).as_nanos() as u64
    }

    pub fn sec(&self, t: Instant) -> usize {
        t.saturating_duration_since(self.start).as_secs() as usize
    }

    pub fn secs_f64(&self, t: Instant) -> f64 {
        t.saturating_duration_since(self.start).as_secs_f64()
    }

    /// After warm-up: what the steady-state numbers count.
    pub fn is_steady(&self, t: Instant) -> bool {
        t >= self.steady_from
    }

    pub fn is_over(&self, t: Instant) -> bool {
        self.end.is_some_and(|e| t > e)
    }
}

/// How the run was asked for, beyond the workload.
pub struct RunOptions {
    pub results_dir: PathBuf,
    pub quiet: bool,
    pub environment: Environment,
}

/// A finished (or stopped) run: its result, where it went, and whether a correctness
/// check failed.
pub struct RunOutcome {
    pub result: RunResult,
    pub dir: PathBuf,
    pub failed_checks: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error(transparent)]
    Backend(#[from] BackendError),
    #[error("{0}")]
    Results(#[from] crate::results::ResultsError),
    #[error("a worker task panicked: {0}")]
    Task(String),
}

/// A failed run that may still have written partial results.
pub struct RunFailure {
    pub error: RunError,
    pub partial: Option<PathBuf>,
}

/// Runs every cell of the matrix on each of `backends` in turn, cell by cell, so that
/// backends compared side by side meet the same machine conditions at about the same time.
pub async fn run<B: Backend>(
    backends: &[B],
    workload: Arc<Workload>,
    opts: RunOptions,
    interrupt: Interrupt,
) -> Result<RunOutcome, RunFailure> {
    let started_at = chrono::Utc::now();
    let run_id = format!("{}-{}", started_at.format("%Y%m%d-%H%M%S"), workload.name);
    let dir = opts.results_dir.join(&run_id);
    let mut result = RunResult {
        schema_version: crate::results::SCHEMA_VERSION,
        run_id,
        started_at: started_at.to_rfc3339(),
        finished_at: String::new(),
        interrupted: false,
        stop_reason: None,
        workload: WorkloadRecord {
            name: workload.name.clone(),
            path: workload.source_path.display().to_string(),
            sha256: workload.source_hash.clone(),
            text: workload.source_text.clone(),
        },
        environment: opts.environment,
        cells: Vec::new(),
    };
    let total = workload.trial_count();
    let mut done = 0usize;
    let mut probe = ResourceProbe::new();
    let m = &workload.matrix;
    'matrix: for layout in &m.index_layouts {
        for &strategy in &m.strategies {
            for &workers in &m.workers {
                for &batch in &m.batch_sizes {
                    for backend in backends {
                        let mut cell = CellResult {
                            backend: backend.kind(),
                            strategy,
                            index_layout: layout.clone(),
                            workers,
                            batch_size: batch,
                            trials: Vec::new(),
                        };
                        for rep in 0..workload.trial.repetitions {
                            if interrupt.stopping() {
                                push_cell(&mut result, cell);
                                break 'matrix;
                            }
                            done += 1;
                            let label = format!(
                                "[{done}/{total}] {} {strategy} {layout} w={workers} b={batch} rep {}",
                                backend.kind(),
                                rep + 1
                            );
                            let spec = TrialSpec {
                                strategy,
                                layout,
                                workers,
                                batch,
                                repetition: rep,
                            };
                            match run_trial(
                                backend, &workload, &spec, &interrupt, &mut probe, &label,
                                opts.quiet,
                            )
                            .await
                            {
                                Ok(t) => {
                                    if !opts.quiet {
                                        use std::io::Write as _;
                                        let _ = writeln!(
                                            std::io::stderr(),
                                            "{label}: {}",
                                            report::summary::trial_line(&t)
                                        );
                                    }
                                    cell.trials.push(t);
                                    record_notes(&mut result, backend);
                                }
                                Err(error) => {
                                    push_cell(&mut result, cell);
                                    result.interrupted = true;
                                    result.stop_reason = Some(error.to_string());
                                    let partial = write_partial(&mut result, &dir);
                                    return Err(RunFailure { error, partial });
                                }
                            }
                        }
                        push_cell(&mut result, cell);
                        write_all(&mut result, &dir).map_err(|e| RunFailure {
                            error: e.into(),
                            partial: None,
                        })?;
                    }
                }
            }
        }
    }
    if interrupt.stopping() {
        result.interrupted = true;
        result.stop_reason = Some("interrupted by Ctrl-C".into());
    }
    write_all(&mut result, &dir).map_err(|e| RunFailure {
        error: e.into(),
        partial: None,
    })?;
    let failed_checks = result
        .cells
        .iter()
        .flat_map(|c| &c.trials)
        .flat_map(|t| &t.warnings)
        .any(Warning::is_failure);
    Ok(RunOutcome {
        result,
        dir,
        failed_checks,
    })
}

/// Adds what the backend chose for the run (such as the form of a statement it sends)
/// to its target's settings in the environment, replacing an earlier note of the same
/// name.
fn record_notes<B: Backend>(result: &mut RunResult, backend: &B) {
    let notes = backend.run_notes();
    if notes.is_empty() {
        return;
    }
    for t in result
        .environment
        .targets
        .iter_mut()
        .filter(|t| t.backend == backend.kind())
    {
        for (k, v) in &notes {
            t.server.settings.retain(|(name, _)| name != k);
            t.server.settings.push((k.clone(), v.clone()));
        }
    }
}

fn push_cell(result: &mut RunResult, cell: CellResult) {
    if !cell.trials.is_empty() {
        result.cells.push(cell);
    }
}

fn write_all(
    result: &mut RunResult,
    dir: &std::path::Path,
) -> Result<(), crate::results::ResultsError> {
    result.finished_at = chrono::Utc::now().to_rfc3339();
    std::fs::create_dir_all(dir).map_err(|source| crate::results::ResultsError::Io {
        path: dir.to_path_buf(),
        source,
    })?;
    result.write(dir)?;
    crate::results::write_atomic(
        &dir.join("summary.md"),
        report::summary::render(result).as_bytes(),
    )
}

/// Writes what finished before an error; nothing when nothing finished.
fn write_partial(result: &mut RunResult, dir: &std::path::Path) -> Option<PathBuf> {
    if result.cells.is_empty() {
        return None;
    }
    write_all(result, dir).ok().map(|_| dir.to_path_buf())
}

struct TrialSpec<'a> {
    strategy: Strategy,
    layout: &'a str,
    workers: u32,
    batch: u32,
    repetition: u32,
}

fn spawn_err(e: tokio::task::JoinError) -> RunError {
    RunError::Task(e.to_string())
}

#[allow(clippy::too_many_arguments)]
async fn run_trial<B: Backend>(
    backend: &B,
    workload: &Arc<Workload>,
    spec: &TrialSpec<'_>,
    interrupt: &Interrupt,
    probe: &mut ResourceProbe,
    label: &str,
    quiet: bool,
) -> Result<TrialResult, RunError> {
    let w = workload.as_ref();
    let reset_started = Instant::now();
    let spinner = reset_spinner(quiet, label, w.population.backlog);
    let seeded = backend.reset(w, spec.layout, w.seed).await?;
    spinner.finish_and_clear();
    let reset_s = reset_started.elapsed().as_secs_f64();
    let role = backend.worker_role();
    let mut sessions = Vec::with_capacity(spec.workers as usize);
    for i in 0..spec.workers {
        sessions.push(backend.connect(&role, &format!("w{i}")).await?);
    }
    let sampler = match w.trial.sample_interval {
        Some(_) => Some(backend.connect("claimbench-sampler", "sampler").await?),
        None => None,
    };
    let producer = match w.producer_rate_per_s {
        Some(_) => Some(backend.connect("claimbench-producer", "producer").await?),
        None => None,
    };
    let rescuer = match w.faults.lease {
        Some(_) => Some(backend.connect("claimbench-rescuer", "rescuer").await?),
        None => None,
    };
    let server_pid = backend.server_pid().await;
    let counters_before = backend.counters().await?;
    let cpu_before = probe.snapshot(server_pid);
    let server_start_us = backend.server_clock_us().await?;

    let start = Instant::now();
    let steady_from = start + w.trial.warmup;
    let planned = match w.trial.stop {
        StopRule::Duration => w.trial.warmup + w.trial.duration.expect("validated"),
        StopRule::Drain => w.trial.max,
    };
    let clock = TrialClock {
        start,
        steady_from,
        end: (w.trial.stop == StopRule::Duration).then_some(start + planned),
    };
    let shared = Arc::new(Shared::default());
    let worker_spec = Arc::new(worker::WorkerSpec::new(
        w,
        spec.strategy,
        spec.batch,
        w.seed.wrapping_add(u64::from(spec.repetition)),
    ));
    let counters: Vec<Arc<AtomicU64>> = (0..spec.workers).map(|_| Arc::default()).collect();
    let worker_tasks: Vec<_> = sessions
        .into_iter()
        .enumerate()
        .map(|(i, s)| {
            let run = worker::run(
                s,
                i as u32,
                worker_spec.clone(),
                clock,
                shared.clone(),
                counters[i].clone(),
            );
            let shared = shared.clone();
            tokio::spawn(async move {
                let r = run.await;
                if r.is_err() {
                    // A worker that cannot go on ends the trial now, not at its deadline.
                    shared.stop();
                }
                r
            })
        })
        .collect();
    let has_producer = producer.is_some();
    let sampler_task = sampler.map(|s| {
        tokio::spawn(background::sample(
            s,
            workload.clone(),
            clock,
            shared.clone(),
            has_producer,
        ))
    });
    let producer_task = producer.map(|p| {
        tokio::spawn(background::produce(
            p,
            workload.clone(),
            w.producer_rate_per_s.expect("session only with a rate"),
            shared.clone(),
        ))
    });
    let rescuer_task = rescuer.map(|r| {
        tokio::spawn(background::rescue(
            r,
            w.faults.lease.expect("session only with a lease"),
            clock,
            shared.clone(),
        ))
    });

    let bar = progress_bar(quiet, planned, label);
    let mut last = (Instant::now(), 0u64);
    let deadline = tokio::time::Instant::from_std(start + planned);
    let mut tick = tokio::time::interval(Duration::from_millis(250));
    let mut interrupted = false;
    loop {
        tokio::select! {
            _ = tokio::time::sleep_until(deadline) => break,
            _ = shared.stopped() => break,
            _ = interrupt.stopped() => { interrupted = true; break }
            _ = tick.tick() => {
                let claimed: u64 = counters.iter().map(|c| c.load(Ordering::Relaxed)).sum();
                let now = Instant::now();
                let rate = (claimed - last.1) as f64 / now.duration_since(last.0).as_secs_f64().max(1e-3);
                last = (now, claimed);
                bar.set_position(now.duration_since(start).as_millis() as u64);
                bar.set_message(format!("{rate:>9.0} claimed/s"));
            }
        }
    }
    shared.stop();
    let stop_at = Instant::now();
    bar.finish_and_clear();

    let mut merged = WorkerMetrics::default();
    let mut ledgers = Vec::with_capacity(spec.workers as usize + 1);
    let mut held_sessions = Vec::with_capacity(spec.workers as usize);
    let mut first_error = None;
    for t in worker_tasks {
        match t.await.map_err(spawn_err)? {
            Ok(r) => {
                merged.merge(&r.metrics);
                ledgers.push(r.ledger);
                held_sessions.push(r.session);
            }
            Err(e) => first_error = first_error.or(Some(e)),
        }
    }
    let sampled = match sampler_task {
        Some(t) => t.await.map_err(spawn_err)?,
        None => Ok(background::SamplerReport {
            max_queue_active: vec![None; w.population.queues.len()],
            ..Default::default()
        }),
    };
    let produced = match producer_task {
        Some(t) => t.await.map_err(spawn_err)??,
        None => 0,
    };
    let mut rescued = 0;
    if let Some(t) = rescuer_task {
        let (l, n) = t.await.map_err(spawn_err)??;
        ledgers.push(l);
        rescued = n;
    }
    if let Some(e) = first_error {
        return Err(e.into());
    }
    let sampled = sampled?;
    let sampler_task_ran = w.trial.sample_interval.is_some();
    let cpu_after = probe.snapshot(server_pid);
    drop(held_sessions);
    // Backends flush their statistics as they exit; give them a moment.
    tokio::time::sleep(Duration::from_millis(150)).await;
    let counters_after = backend.counters().await?;
    let table = backend.table_stats().await?;
    let db = backend.reconcile().await?;
    let merged_ledger = ledger::MergedLedger::new(ledgers);
    let analysis = merged_ledger.analyse();
    let holds = exact_holds(backend, w, &merged_ledger).await?;

    let measured = match clock.end {
        Some(end) => stop_at.min(end),
        None => stop_at,
    }
    .saturating_duration_since(steady_from);
    let measured_s = measured.as_secs_f64();
    let per_s = |n: u64| {
        if measured_s > 0.0 {
            n as f64 / measured_s
        } else {
            0.0
        }
    };
    let c = merged.counts;

    let created = (seeded + produced) as i64;
    let in_hot = db.pending + db.fetched + db.processing;
    let missing = created - in_hot - db.completed - db.dead_lettered;
    let stranded = db.fetched + db.processing;
    let faults_explain = w.handler.mode == HandlerMode::ClaimOnly || w.faults.abandon_rate > 0.0;
    let accounted = if faults_explain {
        stranded.min(analysis.held_at_end as i64)
    } else {
        0
    };
    let lost = missing.abs() + (stranded - accounted);

    let mut oldest = new_histogram();
    let steady_from_s = w.trial.warmup.as_secs_f64();
    for (_, age) in sampled
        .oldest_pending
        .iter()
        .filter(|(t, _)| *t >= steady_from_s)
    {
        if let Some(ms) = age {
            oldest.saturating_record((ms * 1000.0).max(1.0) as u64);
        }
    }
    let oldest_ms = |q: f64| oldest.value_at_quantile(q) as f64 / 1000.0;
    let lock_wait_share = if sampled.samples > 0 {
        sampled.lock_wait_samples as f64 / (sampled.samples as f64 * f64::from(spec.workers))
    } else {
        0.0
    };
    let max_workers: Vec<MaxWorkersCheck> = w
        .population
        .queues
        .iter()
        .zip(&sampled.max_queue_active)
        .filter_map(|(q, seen)| Some((q.name.clone(), q.max_workers?, seen.unwrap_or(0))))
        .zip(holds)
        .map(|((queue, max_workers, sampled), hold)| MaxWorkersCheck {
            queue,
            max_workers,
            max_observed_active: sampled,
            max_held_exact: hold.max_held,
            ms_above_limit: hold.ns_above_limit as f64 / 1e6,
        })
        .collect();
    let queues = if w.population.queues.len() > 1 {
        let from_us = server_start_us + w.trial.warmup.as_micros() as i64;
        let to_us = from_us + measured.as_micros() as i64;
        let completed = backend.completed_by_queue(from_us, to_us).await?;
        queue_results(
            w,
            &completed,
            measured_s,
            &sampled.queue_oldest_pending,
            steady_from_s,
        )
    } else {
        Vec::new()
    };
    let resources = resources(cpu_before, cpu_after, c.claim_calls, table);
    let wall_s = stop_at.duration_since(start).as_secs_f64();
    let duplicates = Duplicates {
        ledger: analysis,
        effects_duplicate_executions: db.duplicate_executions,
        effects_rows: db.effect_rows,
        claim_rate: ratio(analysis.duplicate_claims, analysis.distinct_claimed),
        execution_rate: ratio(analysis.duplicate_executions, analysis.distinct_executed),
    };

    let mut warnings = Vec::new();
    if analysis.duplicate_executions as i64 != db.duplicate_executions {
        warnings.push(Warning::LedgerEffectsMismatch {
            ledger: analysis.duplicate_executions,
            effects: db.duplicate_executions,
        });
    }
    if lost != 0 {
        warnings.push(Warning::LostJobs { lost });
    }
    if spec.strategy.prevents_duplicate_claims() && analysis.duplicate_claims > 0 {
        warnings.push(Warning::UnexpectedDuplicateClaims {
            count: analysis.duplicate_claims,
        });
    }
    for m in &max_workers {
        if spec.strategy.applies_max_workers() && m.max_held_exact > i64::from(m.max_workers) {
            warnings.push(Warning::MaxWorkersExceeded {
                queue: m.queue.clone(),
                limit: m.max_workers,
                observed: m.max_held_exact,
                ms_above: m.ms_above_limit,
            });
        }
    }
    if merged.claim_latency.len() < 1000 {
        warnings.push(Warning::FewSamples {
            claims: merged.claim_latency.len(),
        });
    }
    let cpu_share = if wall_s > 0.0 {
        resources.client_cpu_s / wall_s
    } else {
        0.0
    };
    if cpu_share > 0.8 {
        warnings.push(Warning::HarnessBusy { cpu_share });
    }
    if let Some(at_s) = sampled.exhausted_at_s
        && w.trial.stop == StopRule::Duration
    {
        warnings.push(Warning::BacklogExhausted { at_s });
    }
    if let Some(asked) = w.trial.sample_interval
        && sampled.max_interval_ms > 2.0 * asked.as_secs_f64() * 1e3
    {
        warnings.push(Warning::SamplerStretched {
            mean_sample_ms: sampled.mean_sample_ms,
            max_interval_ms: sampled.max_interval_ms,
        });
    }
    if interrupted {
        warnings.push(Warning::Interrupted);
    }
    warnings.extend(backend.trial_warnings(w, spec.layout, spec.strategy));

    Ok(TrialResult {
        repetition: spec.repetition,
        measured_s,
        warmup_s: steady_from_s,
        interrupted,
        seeded_jobs: seeded,
        reset_s,
        produced_jobs: produced,
        rescued_jobs: rescued,
        counts: c,
        claims_per_s: per_s(c.claim_calls_steady),
        claimed_per_s: per_s(c.jobs_claimed_steady),
        completed_per_s: per_s(c.jobs_completed_steady),
        claimed_series: merged.claimed_per_s,
        completed_series: merged.completed_per_s,
        claim_latency: HistogramSummary::from_histogram(&merged.claim_latency),
        empty_claim_latency: HistogramSummary::from_histogram(&merged.empty_claim_latency),
        queue_wait: HistogramSummary::from_histogram(&merged.queue_wait),
        duplicates,
        reconciliation: Reconciliation {
            created,
            db,
            accounted_by_faults: accounted,
            lost,
        },
        oldest_pending: OldestPending {
            sampled: sampler_task_ran,
            mean_sample_ms: sampled.mean_sample_ms,
            max_interval_ms: sampled.max_interval_ms,
            series: sampled.oldest_pending,
            p50_ms: oldest_ms(0.5),
            p99_ms: oldest_ms(0.99),
            max_ms: oldest.max() as f64 / 1000.0,
        },
        locks: LockEvidence {
            lock_wait_samples: sampled.lock_wait_samples,
            active_samples: sampled.active_samples,
            lock_wait_share,
            samples: sampled.samples,
            server_before: counters_before,
            server_after: counters_after,
            deadlocks: counters_after.deadlocks - counters_before.deadlocks,
            row_lock_waits: delta(
                counters_before.row_lock_waits,
                counters_after.row_lock_waits,
            ),
            row_lock_time_ms: delta(
                counters_before.row_lock_time_ms,
                counters_after.row_lock_time_ms,
            ),
            lock_escalations: delta(
                counters_before.lock_escalations,
                counters_after.lock_escalations,
            ),
        },
        max_workers,
        queues,
        resources,
        warnings,
    })
}

/// Per queue of the workload: its completions in the steady window and its sampled
/// oldest-pending age after warm-up.
fn queue_results(
    w: &Workload,
    completed: &[(String, i64)],
    measured_s: f64,
    oldest: &[Vec<(f64, Option<f64>)>],
    steady_from_s: f64,
) -> Vec<QueueResult> {
    w.population
        .queues
        .iter()
        .enumerate()
        .map(|(i, q)| {
            let done = completed
                .iter()
                .find(|(name, _)| *name == q.name)
                .map_or(0, |(_, n)| *n);
            let series = oldest.get(i).cloned().unwrap_or_default();
            let mut h = new_histogram();
            for ms in series
                .iter()
                .filter(|(t, _)| *t >= steady_from_s)
                .filter_map(|(_, a)| *a)
            {
                h.saturating_record((ms * 1000.0).max(1.0) as u64);
            }
            let at = |v: u64| (!h.is_empty()).then_some(v as f64 / 1000.0);
            QueueResult {
                queue: q.name.clone(),
                completed: done,
                completed_per_s: if measured_s > 0.0 {
                    done as f64 / measured_s
                } else {
                    0.0
                },
                oldest_pending_p99_ms: at(h.value_at_quantile(0.99)),
                oldest_pending_max_ms: at(h.max()),
                oldest_pending_series: series,
            }
        })
        .collect()
}

/// The exact max-workers figures of each capped queue, in the workload's order: the
/// ledger's claim and release instants, with each job's queue read from the database.
async fn exact_holds<B: Backend>(
    backend: &B,
    w: &Workload,
    merged: &ledger::MergedLedger,
) -> Result<Vec<ledger::QueueHold>, RunError> {
    let capped: Vec<(String, i64)> = w
        .population
        .queues
        .iter()
        .filter_map(|q| Some((q.name.clone(), i64::from(q.max_workers?))))
        .collect();
    if capped.is_empty() {
        return Ok(Vec::new());
    }
    let names: Vec<String> = capped.iter().map(|(n, _)| n.clone()).collect();
    let queue_of = backend
        .job_queues(&names)
        .await?
        .into_iter()
        .filter_map(|(id, q)| Some((id, names.iter().position(|n| *n == q)?)))
        .collect();
    let limits: Vec<i64> = capped.iter().map(|(_, l)| *l).collect();
    Ok(merged.holds(&queue_of, &limits))
}

fn delta(before: Option<i64>, after: Option<i64>) -> Option<i64> {
    Some(after? - before?)
}

fn ratio(n: u64, d: u64) -> f64 {
    if d == 0 { 0.0 } else { n as f64 / d as f64 }
}

fn resources(
    before: CpuSnapshot,
    after: CpuSnapshot,
    claim_calls: u64,
    table: crate::backend::TableStats,
) -> Resources {
    let client_cpu_s = after.client_cpu_ms.saturating_sub(before.client_cpu_ms) as f64 / 1000.0;
    Resources {
        client_cpu_s,
        client_cpu_us_per_claim: if claim_calls > 0 {
            client_cpu_s * 1e6 / claim_calls as f64
        } else {
            0.0
        },
        client_rss_bytes: after.client_rss_bytes,
        server_cpu_s: match (before.server_cpu_ms, after.server_cpu_ms) {
            (Some(b), Some(a)) => Some(a.saturating_sub(b) as f64 / 1000.0),
            _ => None,
        },
        table,
    }
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

fn progress_bar(quiet: bool, planned: Duration, label: &str) -> ProgressBar {
    if quiet {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(planned.as_millis() as u64);
    bar.set_style(
        ProgressStyle::with_template("{prefix} [{bar:30}] {elapsed:>4} {msg}")
            .expect("static template")
            .progress_chars("=> "),
    );
    bar.set_prefix(label.to_string());
    bar
}
