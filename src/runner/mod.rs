//! The runner: expands the workload's matrix into trials, runs each on a freshly reset
//! schema with its workers, sampler, producer and rescuer, merges their recordings, and
//! writes the results as cells finish (so Ctrl-C or an error never loses finished work).

pub mod background;
mod trial;
mod verdict;
pub mod worker;

use crate::backend::{Backend, BackendError};
use crate::report;
use crate::resources::ResourceProbe;
use crate::results::{CellResult, Environment, RunResult, WorkloadRecord};
use crate::warnings::Warning;
use crate::workload::{StopRule, Workload};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
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
    /// The clock of a trial of `w` starting now.
    pub fn new(w: &Workload, start: Instant) -> TrialClock {
        TrialClock {
            start,
            steady_from: start + w.trial.warmup,
            end: (w.trial.stop == StopRule::Duration).then_some(start + Self::planned(w)),
        }
    }

    /// How long a trial of `w` runs at most: warm-up plus duration, or the drain cap.
    pub fn planned(w: &Workload) -> Duration {
        match w.trial.stop {
            StopRule::Duration => w.trial.warmup + w.trial.duration.expect("validated"),
            StopRule::Drain => w.trial.max,
        }
    }

    /// The measured window of a trial that stopped at `stop_at`: from the end of
    /// warm-up to the stop, or to the planned end when it stopped later.
    pub fn measured(&self, stop_at: Instant) -> Duration {
        match self.end {
            Some(end) => stop_at.min(end),
            None => stop_at,
        }
        .saturating_duration_since(self.steady_from)
    }

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
                            let spec = trial::TrialSpec {
                                strategy,
                                layout,
                                workers,
                                batch,
                                repetition: rep,
                            };
                            match trial::run_trial(
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
