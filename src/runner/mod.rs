//! The runner: expands the workload's matrix into trials, runs each on a freshly reset
//! schema with its workers, sampler, producer and rescuer, merges their recordings, and
//! writes the results as cells finish (so Ctrl-C or an error never loses finished work).

pub mod background;
pub(crate) mod checkpoint;
mod cleanup;
mod failover;
mod lag;
mod network;
mod paired;
mod phases;
mod placement;
pub mod reconnect;
mod schedule;
mod shards;
pub mod threads;
mod trial;
mod verdict;
pub mod worker;

pub use failover::{Failover, wait_for_standby};
pub use placement::wait_for_cluster;

use crate::backend::{Backend, BackendError, Session};
use crate::resources::ResourceProbe;
use crate::results::{CellResult, Environment, RunResult, WorkloadRecord};
use crate::strategy::Strategy;
use crate::warnings::Warning;
use crate::workload::plan::{Plan, PlannedCell, Step, Targets};
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
    /// Set when the stop had to end workers' connections (see `trial::end_overrun`):
    /// a worker that then loses its connection has stopped, not failed.
    forced: AtomicBool,
    notify: Notify,
    /// What interrupted the run (Ctrl-C, SIGTERM, SIGHUP), for its stop reason.
    interrupted_by: std::sync::OnceLock<&'static str>,
    /// A long trial's in-flight file ([`checkpoint::Checkpoint`]), written by the
    /// driver and the sampler.
    pub(crate) checkpoint: Option<checkpoint::Checkpoint>,
}

impl Shared {
    pub fn forced(&self) -> bool {
        self.forced.load(Ordering::Relaxed)
    }

    pub fn force(&self) {
        self.forced.store(true, Ordering::Relaxed);
    }

    pub fn stopping(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    pub fn stop(&self) {
        self.stop.store(true, Ordering::Relaxed);
        self.notify.notify_waiters();
    }

    /// [`Shared::stop`], recording what interrupted the run.
    pub fn interrupt(&self, by: &'static str) {
        let _ = self.interrupted_by.set(by);
        self.stop();
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

    pub(crate) async fn stopped(&self) {
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
    /// `steady_from` and `end` as nanoseconds since `start`, for the claim path, which
    /// reads the clock as nanoseconds once per claim and decides from them.
    steady_ns: u64,
    end_ns: Option<u64>,
}

#[cfg(test)]
impl TrialClock {
    /// A clock from `start` without warm-up or planned end, for tests of what reads it.
    pub fn starting(start: Instant) -> TrialClock {
        TrialClock::of(start, start, None)
    }

    /// `s` seconds after the start.
    pub fn at(&self, s: f64) -> Instant {
        self.start + Duration::from_secs_f64(s)
    }
}

impl TrialClock {
    /// The clock of a trial of `w` starting now.
    pub fn new(w: &Workload, start: Instant) -> TrialClock {
        TrialClock::of(
            start,
            start + w.trial.warmup,
            (w.trial.stop == StopRule::Duration).then_some(start + Self::planned(w)),
        )
    }

    fn of(start: Instant, steady_from: Instant, end: Option<Instant>) -> TrialClock {
        let ns = |t: Instant| t.saturating_duration_since(start).as_nanos() as u64;
        TrialClock {
            start,
            steady_from,
            end,
            steady_ns: ns(steady_from),
            end_ns: end.map(ns),
        }
    }

    /// How long a trial of `w` runs at most: warm-up plus duration, or the drain cap.
    pub fn planned(w: &Workload) -> Duration {
        w.planned_trial()
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

    /// [`TrialClock::is_steady`] and not [`TrialClock::is_over`], of an instant as
    /// [`TrialClock::ns`] gave it: what a claim begun then counts for.
    pub fn is_measured_ns(&self, t_ns: u64) -> bool {
        t_ns >= self.steady_ns && self.end_ns.is_none_or(|e| t_ns <= e)
    }
}

/// How the run was asked for, beyond the workload.
pub struct RunOptions {
    pub results_dir: PathBuf,
    pub quiet: bool,
    pub environment: Environment,
    /// Threads the workers run on (see [`threads`]); `None`: the default count.
    pub worker_threads: Option<usize>,
    /// How to restart each backend's server (same order as the backends), for the
    /// workload's `faults.restart_db_at_s`; empty when it has none.
    pub restarts: Vec<Option<Restart>>,
    /// How to fail each backend's primary over (same order), for the workload's
    /// `faults.failover_at_s`; empty when it has none.
    pub failovers: Vec<Option<Failover>>,
    /// How to restart each backend's lock service without its data (same order), for
    /// the workload's `faults.restart_lock_service_at_s`; empty when it has none.
    pub lock_restarts: Vec<Option<Restart>>,
    /// Run a trial the host or the harness disturbed once more before reporting it.
    /// Off where something outside the run acts on the trial's timeline (a test that
    /// holds rows during it would act on the first run only).
    pub rerun_disturbed: bool,
    /// Run the workload's own SQL even as a role that could reach the server's host
    /// (`--allow-privileged-sql`); by default such a role is refused before any trial.
    pub allow_privileged_sql: bool,
    /// What the runner shows and writes beside run.json, given by the command: the
    /// runner measures and records, and imports no renderer.
    pub render: Render,
    /// Two servers of one backend (`--versus-pg-bindir`), named as their cells are:
    /// every cell runs as a pair, A on the first backend, B on the second.
    pub versus: Option<[String; 2]>,
}

/// The renderers the runner calls while a run goes on. The report files are the
/// command's, written once when the run ends (run.json is written as each cell
/// finishes, so a run killed outright still leaves its cells for `claimbench report`).
#[derive(Clone, Copy)]
pub struct Render {
    /// One finished trial's progress line on stderr (`claim_only`: the cell runs
    /// claims alone).
    pub trial_line: fn(&crate::results::TrialResult, bool) -> String,
}

/// Restarts a database server and returns once it is back (blocking: it runs on a
/// blocking thread), or says why it could not.
pub type Restart = Arc<dyn Fn() -> Result<(), String> + Send + Sync>;

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
    #[error(transparent)]
    Results(#[from] crate::results::ResultsError),
    #[error("a worker task panicked: {0}")]
    Task(String),
    /// The ledger's own count failed or disagreed with itself: a harness defect, which
    /// fails the trial rather than report a wrong figure.
    #[error("claimbench's accounting failed: {0}")]
    Accounting(String),
    #[error("cannot start the worker threads: {0}")]
    Threads(std::io::Error),
    #[error("{0}")]
    Derivation(String),
    /// A workload the server refused before any trial ran (a declared statement).
    #[error("{0}")]
    Refused(String),
}

/// A failed run that may still have written partial results.
pub struct RunFailure {
    pub error: RunError,
    pub partial: Option<PathBuf>,
}

/// One cell of one matrix block, before its trials run.
struct CellSpec<'a> {
    phase: &'a Arc<Workload>,
    strategy: crate::strategy::Strategy,
    layout: &'a str,
    workers: u32,
    batch: u32,
    /// How its target restarts and fails over for the workload's faults.
    hooks: Hooks<'a>,
}

impl<'a> CellSpec<'a> {
    fn of(phase: &'a Arc<Workload>, c: &'a PlannedCell, hooks: Hooks<'a>) -> CellSpec<'a> {
        CellSpec {
            phase,
            strategy: c.strategy.clone(),
            layout: &c.layout,
            workers: c.workers,
            batch: c.batch,
            hooks,
        }
    }
}

/// A target's restart and failover commands (`--restart-command`, `--failover-command`,
/// or the embedded server's own), for the cells that run on it.
#[derive(Clone, Copy, Default)]
struct Hooks<'a> {
    restart: Option<&'a Restart>,
    failover: Option<&'a Failover>,
    lock_restart: Option<&'a Restart>,
}

/// Every target's hooks, in the targets' order: restarts, failovers, lock restarts.
type AllHooks<'a> = (
    &'a [Option<Restart>],
    &'a [Option<Failover>],
    &'a [Option<Restart>],
);

impl<'a> Hooks<'a> {
    /// Target `t`'s; none for a pair across two servers.
    fn of((restarts, failovers, locks): AllHooks<'a>, t: Option<usize>) -> Hooks<'a> {
        let Some(t) = t else {
            return Hooks::default();
        };
        Hooks {
            restart: restarts.get(t).and_then(Option::as_ref),
            failover: failovers.get(t).and_then(Option::as_ref),
            lock_restart: locks.get(t).and_then(Option::as_ref),
        }
    }
}

/// A run in progress: what it wrote so far and where, and its progress count.
struct Progress<'a> {
    result: RunResult,
    dir: PathBuf,
    total: usize,
    done: usize,
    probe: ResourceProbe,
    interrupt: &'a Interrupt,
    threads: threads::WorkerThreads,
    quiet: bool,
    rerun_disturbed: bool,
    render: Render,
    /// Pairs started so far: the next pair's id.
    pairs: u32,
    versus: Option<[String; 2]>,
}

/// Runs every cell of every matrix block on each of `backends` in turn, cell by cell,
/// so that backends compared side by side meet the same machine conditions at about the
/// same time. A block with a rate search runs a search per cell instead.
pub async fn run<B: Backend>(
    backends: &[Arc<B>],
    workload: Arc<Workload>,
    opts: RunOptions,
    interrupt: Interrupt,
) -> Result<RunOutcome, RunFailure> {
    let result = new_result(&workload, opts.environment);
    let dir = opts.results_dir.join(&result.run_id);
    let threads = opts
        .worker_threads
        .unwrap_or_else(threads::WorkerThreads::default_count);
    let threads = threads::WorkerThreads::start(threads).map_err(|e| RunFailure {
        error: RunError::Threads(e),
        partial: None,
    })?;
    let mut p = Progress {
        result,
        dir,
        // Set from the plan below.
        total: 0,
        done: 0,
        probe: ResourceProbe::new(),
        interrupt: &interrupt,
        threads,
        quiet: opts.quiet,
        rerun_disturbed: opts.rerun_disturbed,
        render: opts.render,
        pairs: 0,
        versus: opts.versus.clone(),
    };
    for backend in backends {
        check_workload_role(backend.as_ref(), &workload, opts.allow_privileged_sql)
            .await
            .map_err(|error| RunFailure {
                error,
                partial: None,
            })?;
        check_custom_strategies(backend.as_ref(), &workload)
            .await
            .map_err(|error| RunFailure {
                // The statement's file and field are in the message; the workload that
                // declared it leads, as for every refusal of a workload.
                error: RunError::Refused(format!("{}: {error}", workload.source_path.display())),
                partial: None,
            })?;
    }
    let plan = Plan::of(
        &workload,
        Targets {
            backends: backends.len(),
            versus: p.versus.is_some(),
        },
    );
    p.total = plan.trials(&workload);
    let hooks = (
        &opts.restarts[..],
        &opts.failovers[..],
        &opts.lock_restarts[..],
    );
    // Each block's phase, made once when its first step comes.
    let mut phases: Vec<Option<Arc<Workload>>> = vec![None; workload.matrices.len()];
    for step in &plan.steps {
        let block = step.block();
        let phase = phases[block]
            .get_or_insert_with(|| Arc::new(workload.phase(block)))
            .clone();
        let go_on = match step {
            Step::Cell { target, cell, .. } => {
                let backend = &backends[*target];
                let phase = p.at_rate(&phase, backend.kind(), &cell.strategy, &cell.layout)?;
                let spec = CellSpec::of(&phase, cell, Hooks::of(hooks, Some(*target)));
                match workload.matrices[block].phase.search {
                    None => p.cell(backend, &spec).await?,
                    Some(s) => p.search(backend, &spec, s).await?,
                }
            }
            Step::Pair { a, b, .. } => {
                // On one target, its restart and failover; across two servers, neither.
                let hooks = Hooks::of(hooks, (a.0 == b.0).then_some(a.0));
                // A derived rate is A's: both sides run at one offered load.
                let kind = backends[a.0].kind();
                let phase = p.at_rate(&phase, kind, &a.1.strategy, &a.1.layout)?;
                let (sa, sb) = (
                    CellSpec::of(&phase, &a.1, hooks),
                    CellSpec::of(&phase, &b.1, hooks),
                );
                p.pair([(&backends[a.0], &sa), (&backends[b.0], &sb)])
                    .await?
            }
        };
        if !go_on {
            break;
        }
    }
    if interrupt.stopping() {
        p.result.interrupted = true;
        let by = interrupt.interrupted_by.get().copied().unwrap_or("Ctrl-C");
        p.result.stop_reason = Some(format!("interrupted by {by}"));
    }
    let (mut result, dir) = (p.result, p.dir.clone());
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

/// The run's result before its first cell: named by its start and workload, with the
/// workload's text and checks and the environment it runs in.
fn new_result(workload: &Workload, environment: crate::results::Environment) -> RunResult {
    let started_at = chrono::Utc::now();
    RunResult {
        schema_version: crate::results::SCHEMA_VERSION,
        run_id: format!("{}-{}", started_at.format("%Y%m%d-%H%M%S"), workload.name),
        started_at: started_at.to_rfc3339(),
        finished_at: String::new(),
        interrupted: false,
        stop_reason: None,
        workload: WorkloadRecord {
            name: workload.name.clone(),
            path: workload.source_path.display().to_string(),
            sha256: workload.source_hash.clone(),
            text: workload.source_text.clone(),
            custom_strategies: workload.custom_strategies.clone(),
            custom_layouts: workload.custom_layouts.clone(),
        },
        environment,
        cells: Vec::new(),
        slos: workload.slos.clone(),
        gates: workload.gates.clone(),
        thresholds: workload.thresholds.clone(),
        rate_searches: Vec::new(),
    }
}

/// Refuses to hand the workload's own SQL to a role that could reach the server's host
/// (a superuser; `pg_execute_server_program`; MySQL's FILE, SUPER, SHUTDOWN), unless
/// `allowed`: asked of the server once, before anything is reset. A workload that
/// declares no SQL for this backend is not asked about.
pub async fn check_workload_role<B: Backend>(
    b: &B,
    w: &Workload,
    allowed: bool,
) -> Result<(), RunError> {
    refuse_privileged_role(b, w, &w.declared_files(b.kind()), allowed).await
}

/// [`check_workload_role`] for the declared `files` a command will run (`prepare` runs
/// a layout's alone).
pub async fn refuse_privileged_role<B: Backend>(
    b: &B,
    w: &Workload,
    files: &[String],
    allowed: bool,
) -> Result<(), RunError> {
    if files.is_empty() || allowed {
        return Ok(());
    }
    let Some(role) = b.workload_role().await? else {
        return Ok(());
    };
    if role.reaches_host.is_empty() {
        return Ok(());
    }
    Err(RunError::Refused(format!(
        "{}: refusing to run its declared SQL ({}) on {} as `{}`, which has {}: a statement there could run commands or read and write files on the server's host; connect as a role without those rights (--db), leave --db unset for the embedded PostgreSQL (its workload SQL runs as a role without them), or pass --allow-privileged-sql if you trust every statement in those files",
        w.source_path.display(),
        files.join(", "),
        b.kind(),
        role.name,
        role.reaches_host.join(", ")
    )))
}

/// Prepares each custom strategy the workload runs, and sets each session setting it
/// gives, on a freshly reset schema, so that a statement or a value the server refuses
/// ends the run before its first trial, naming the file (or the setting's field).
async fn check_custom_strategies<B: Backend>(b: &B, w: &Workload) -> Result<(), RunError> {
    let mut custom: Vec<Strategy> = w
        .matrices
        .iter()
        .flat_map(|m| m.strategies.iter().cloned())
        .filter(|s| s.is_custom())
        .collect();
    custom.sort();
    custom.dedup();
    let settings = settings_by_field(w, b.kind());
    let Some(layout) = w.matrices[0].index_layouts.first() else {
        return Ok(());
    };
    if custom.is_empty() && settings.is_empty() {
        return Ok(());
    }
    // A claim with a setup step is prepared on its own tables: reset, set up, prepare,
    // one such strategy at a time (two may each create a table of one name).
    let kind = b.kind();
    let (own, shared): (Vec<Strategy>, Vec<Strategy>) = custom
        .into_iter()
        .partition(|s| s.setup_step(kind).is_some());
    for s in &own {
        b.reset(&w.phase(0), layout, w.seed).await?;
        b.setup_strategy(s).await?;
        b.connect("claimbench-check", "check")
            .await?
            .prepare(s)
            .await?;
    }
    b.reset(&w.phase(0), layout, w.seed).await?;
    let mut session = b.connect("claimbench-check", "check").await?;
    for s in shared {
        session.prepare(&s).await?;
    }
    for (field, name, value) in settings {
        // One at a time: a refusal names the one refused (it named none before).
        session.apply(&[(name, value.clone())]).await.map_err(|e| {
            RunError::Refused(format!("{field}: the server refused `{value}`: {e}"))
        })?;
    }
    Ok(())
}

/// Every session setting `w` gives for `kind`, with the field it was given in: the
/// workload's `[session.<backend>]`, then each block's own.
fn settings_by_field(
    w: &Workload,
    kind: crate::backend_kind::BackendKind,
) -> Vec<(String, String, String)> {
    let mut out: Vec<(String, String, String)> =
        crate::session_settings::for_backend(&w.session_settings, kind)
            .into_iter()
            .map(|(n, v)| (format!("session.{kind}.{n}"), n, v))
            .collect();
    for (i, m) in w.matrices.iter().enumerate() {
        let block = match w.matrices.len() {
            1 => "matrix".to_string(),
            _ => format!("matrix[{i}]"),
        };
        for (n, v) in crate::session_settings::for_backend(&m.phase.session_settings, kind) {
            out.push((format!("{block}.session.{kind}.{n}"), n, v));
        }
    }
    out
}

/// One trial; one that the host or the harness disturbed (late wake-ups, a busy or heavy
/// harness, a producer behind its schedule) runs once more, when `rerun`, before it is
/// reported with its warning, so a default run ends clean whenever the host allows. The
/// trial that counts says it was run again, and why.
async fn trial_or_rerun<B: Backend>(
    backend: &Arc<B>,
    w: &Arc<Workload>,
    trial: &trial::TrialSpec<'_>,
    harness: &trial::Harness<'_>,
    probe: &mut ResourceProbe,
    rerun: bool,
) -> Result<crate::results::TrialResult, RunError> {
    let first = trial::run_trial(backend, w, trial, harness, probe).await?;
    let why: Vec<String> = first
        .warnings
        .iter()
        .filter(|x| x.invalidates() && **x != Warning::Interrupted)
        .map(ToString::to_string)
        .collect();
    if why.is_empty() || !rerun || harness.interrupt.stopping() {
        return Ok(first);
    }
    if !harness.quiet {
        use std::io::Write as _;
        let _ = writeln!(
            std::io::stderr(),
            "{}: disturbed ({}); running it again once",
            harness.label,
            why[0]
        );
    }
    let mut again = trial::run_trial(backend, w, trial, harness, probe).await?;
    again.rerun_because = why;
    Ok(again)
}

impl Progress<'_> {
    /// `phase` with its arrival rate set to `from.times` the throughput its source cell
    /// measured earlier in this run, on the same backend, strategy and layout.
    fn derived_rate(
        &self,
        phase: &Arc<Workload>,
        from: &crate::workload::RateFrom,
        backend: crate::backend_kind::BackendKind,
        strategy: &Strategy,
        layout: &str,
    ) -> Result<Arc<Workload>, RunError> {
        let measured = self
            .result
            .cells
            .iter()
            .find(|c| {
                c.phase == from.phase
                    && c.backend == backend
                    && c.strategy == *strategy
                    && c.index_layout == layout
                    && c.workers == from.workers
                    && c.batch_size == from.batch_size
            })
            .map(|c| crate::analysis::figures::CellFigures::of(c).throughput)
            .filter(|t| *t > 0.0)
            .ok_or_else(|| {
                RunError::Derivation(format!(
                    "phase {}: arrival_rate_from needs {}, which measured nothing in this run",
                    phase.matrices[0].name,
                    from.describe()
                ))
            })?;
        let mut w = Workload::clone(phase);
        w.producer_rate_per_s = Some(measured * from.times);
        Ok(Arc::new(w))
    }

    /// `phase` as a cell of `kind`, `strategy` and `layout` runs it: at the rate its
    /// block derives from an earlier cell ([`Progress::derived_rate`]), if it derives one.
    fn at_rate(
        &self,
        phase: &Arc<Workload>,
        kind: crate::backend_kind::BackendKind,
        strategy: &Strategy,
        layout: &str,
    ) -> Result<Arc<Workload>, RunFailure> {
        match &phase.matrices[0].phase.arrival_rate_from {
            None => Ok(phase.clone()),
            Some(from) => self
                .derived_rate(phase, from, kind, strategy, layout)
                .map_err(|error| RunFailure {
                    error,
                    partial: None,
                }),
        }
    }

    /// Ends the run at `error`: marks it interrupted with the reason and writes what
    /// it has.
    fn fail(&mut self, error: RunError) -> RunFailure {
        self.result.interrupted = true;
        self.result.stop_reason = Some(error.to_string());
        let partial = write_partial(&mut self.result, &self.dir);
        RunFailure { error, partial }
    }

    /// Runs a cell's repetitions and records the cell; `false` when the run must stop.
    async fn cell<B: Backend>(
        &mut self,
        backend: &Arc<B>,
        spec: &CellSpec<'_>,
    ) -> Result<bool, RunFailure> {
        let mut cell = self.new_cell(backend, spec).await?;
        for rep in 0..spec.phase.trial.repetitions {
            match self.rep(backend, spec, &mut cell, rep).await {
                Ok(true) => {}
                Ok(false) => {
                    push_cell(&mut self.result, cell);
                    return Ok(false);
                }
                Err(error) => {
                    push_cell(&mut self.result, cell);
                    return Err(self.fail(error));
                }
            }
        }
        self.finish_cells([cell])
    }

    /// A cell with no trials yet, its block's servers set for it (placement, pool,
    /// durability).
    async fn new_cell<B: Backend>(
        &mut self,
        backend: &Arc<B>,
        spec: &CellSpec<'_>,
    ) -> Result<CellResult, RunFailure> {
        let w = spec.phase;
        let mut cell = CellResult {
            phase: w.matrices[0].name.clone(),
            arrival_rate_per_s: w.offered_mean(),
            arrival_rate_from: w.matrices[0]
                .phase
                .arrival_rate_from
                .as_ref()
                .zip(w.producer_rate_per_s)
                .map(|(from, rate)| crate::results::RateOrigin {
                    how: from.describe(),
                    measured_per_s: rate / from.times,
                }),
            backend: backend.kind(),
            strategy: spec.strategy.clone(),
            index_layout: spec.layout.to_string(),
            workers: spec.workers,
            batch_size: spec.batch,
            session_settings: crate::session_settings::for_backend(
                &w.session_settings,
                backend.kind(),
            ),
            server_settings: Vec::new(),
            pool_size: None,
            claim_only: Some(w.handler.mode == crate::workload::HandlerMode::ClaimOnly),
            storage: (w.storage != crate::workload::Storage::ArchiveMove)
                .then(|| w.storage.name().to_string()),
            pair: None,
            server: None,
            trials: Vec::new(),
        };
        let servers = block_servers(backend.as_ref(), w).await;
        (cell.pool_size, cell.server_settings) =
            servers.map_err(|e| self.fail(RunError::Backend(e)))?;
        Ok(cell)
    }

    /// Runs repetition `rep` of `cell` and adds its trial; `Ok(false)` when the run is
    /// stopping (nothing run).
    async fn rep<B: Backend>(
        &mut self,
        backend: &Arc<B>,
        spec: &CellSpec<'_>,
        cell: &mut CellResult,
        rep: u32,
    ) -> Result<bool, RunError> {
        if self.interrupt.stopping() {
            return Ok(false);
        }
        let w = spec.phase;
        self.done += 1;
        let phase = match cell.phase.as_str() {
            "" => String::new(),
            name => format!("{name} "),
        };
        let rate = match w.offered_mean() {
            Some(r) => format!(" at {r:.0}/s"),
            None => String::new(),
        };
        let side = match (cell.pair, &cell.server) {
            (Some(p), Some(server)) => format!(" ({}: {server})", p.side),
            (Some(p), None) => format!(" ({})", p.side),
            _ => String::new(),
        };
        let label = format!(
            "[{}/{}] {phase}{} {} {} w={} b={}{rate} rep {}{side}",
            self.done,
            self.total,
            backend.kind(),
            spec.strategy,
            spec.layout,
            spec.workers,
            spec.batch,
            rep + 1
        );
        let trial = trial::TrialSpec {
            strategy: spec.strategy.clone(),
            layout: spec.layout,
            workers: spec.workers,
            batch: spec.batch,
            repetition: rep,
            interval_log: Some(self.interval_log(backend.kind(), spec, rep)),
        };
        let harness = trial::Harness {
            interrupt: self.interrupt,
            threads: &self.threads,
            label: &label,
            quiet: self.quiet,
            restart: spec.hooks.restart,
            failover: spec.hooks.failover,
            lock_restart: spec.hooks.lock_restart,
        };
        let rerun = self.rerun_disturbed;
        let t = trial_or_rerun(backend, w, &trial, &harness, &mut self.probe, rerun).await?;
        if !self.quiet {
            use std::io::Write as _;
            let _ = writeln!(
                std::io::stderr(),
                "{label}: {}",
                (self.render.trial_line)(&t, cell.claim_only == Some(true))
            );
        }
        cell.trials.push(t);
        record_notes(&mut self.result, backend.as_ref());
        Ok(true)
    }

    /// Records finished cells and writes run.json; `false` when the run must stop.
    fn finish_cells<const N: usize>(&mut self, cells: [CellResult; N]) -> Result<bool, RunFailure> {
        for cell in cells {
            push_cell(&mut self.result, cell);
        }
        write_all(&mut self.result, &self.dir).map_err(|e| RunFailure {
            error: e.into(),
            partial: None,
        })?;
        Ok(!self.interrupt.stopping())
    }

    /// The highest arrival rate at which the phase's queue-wait and oldest-pending SLOs
    /// hold: one trial per step, each recorded as its own cell.
    /// The trial's `.hlog`: numbered by trial so names never collide (a rate search
    /// runs one cell many times), the rest for a person reading the folder.
    fn interval_log(
        &self,
        backend: crate::backend_kind::BackendKind,
        spec: &CellSpec<'_>,
        rep: u32,
    ) -> (PathBuf, String) {
        use crate::names::file_component as part;
        let phase = spec.phase.matrices[0].name.as_str();
        let name = format!(
            "hlog/{:03}-{}{}{}-{}-{}-w{}-b{}-rep{}.hlog",
            self.done,
            if phase.is_empty() {
                String::new()
            } else {
                part(phase)
            },
            if phase.is_empty() { "" } else { "-" },
            backend,
            part(spec.strategy.as_str()),
            part(spec.layout),
            spec.workers,
            spec.batch,
            rep + 1
        );
        (self.dir.join(&name), name)
    }

    async fn search<B: Backend>(
        &mut self,
        backend: &Arc<B>,
        spec: &CellSpec<'_>,
        settings: crate::workload::RateSearch,
    ) -> Result<bool, RunFailure> {
        use crate::analysis::rate_search::{RateSearch, SearchResult, step_holds};
        let mut search = RateSearch::new(settings);
        let mut steps = Vec::new();
        while let Some(rate) = search.next_rate() {
            let mut at_rate = spec.phase.as_ref().clone();
            at_rate.producer_rate_per_s = Some(rate);
            at_rate.trial.repetitions = 1;
            let at_rate = Arc::new(at_rate);
            let step = CellSpec {
                phase: &at_rate,
                strategy: spec.strategy.clone(),
                ..*spec
            };
            let go_on = self.cell(backend, &step).await?;
            let Some(cell) = self.result.cells.last().filter(|_| go_on) else {
                return Ok(false);
            };
            let verdict = step_holds(cell, &self.result.slos);
            search.record(rate, verdict.held);
            steps.push(verdict);
        }
        self.result.rate_searches.push(SearchResult {
            phase: spec.phase.matrices[0].name.clone(),
            backend: backend.kind(),
            strategy: spec.strategy.clone(),
            index_layout: spec.layout.to_string(),
            workers: spec.workers,
            batch_size: spec.batch,
            sustained_per_s: search.sustained(),
            steps,
        });
        write_all(&mut self.result, &self.dir).map_err(|e| RunFailure {
            error: e.into(),
            partial: None,
        })?;
        Ok(true)
    }
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

/// run.json with the run so far, stamped with the time.
fn write_all(
    result: &mut RunResult,
    dir: &std::path::Path,
) -> Result<(), crate::results::ResultsError> {
    result.finished_at = chrono::Utc::now().to_rfc3339();
    std::fs::create_dir_all(dir).map_err(|reason| crate::results::ResultsError::Io {
        path: dir.to_path_buf(),
        reason,
    })?;
    result.write(dir).map(|_| ())
}

/// Writes what finished before an error; nothing when nothing finished.
fn write_partial(result: &mut RunResult, dir: &std::path::Path) -> Option<PathBuf> {
    if result.cells.is_empty() {
        return None;
    }
    write_all(result, dir).ok().map(|_| dir.to_path_buf())
}

/// The block's servers, set before its first trial: where its workers connect (every
/// block says it, so a block without a placement does not stay where a standalone one
/// left the connections), the pool they go through (the block's size on claimbench's
/// pooler, what a person's pooler reports, nothing without one), and how durable the
/// server runs. Returns the pool in force and the durability settings as the server
/// reports them (empty when the block sets none).
async fn block_servers<B: Backend>(
    backend: &B,
    w: &Workload,
) -> Result<(Option<u32>, Vec<(String, String)>), crate::backend::BackendError> {
    backend.set_placement(w.placement()).await?;
    let phase = &w.matrices[0].phase;
    let pool = phase.pool_size.or(w.topology.pooler.map(|p| p.pool_size));
    let pool = backend.size_pool(pool).await?;
    let settings = match phase.durability {
        Some(d) => backend.set_durability(d).await?,
        None => Vec::new(),
    };
    Ok((pool, settings))
}
