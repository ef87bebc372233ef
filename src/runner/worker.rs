//! One worker: the job lifecycle of docs/architecture.md as a single loop whose behaviour (strategy,
//! batch, handler, faults) comes in as data.
//!
//! The loop owns its session, metrics and ledger; the only shared state it touches is a
//! relaxed atomic stop flag it reads and a per-worker progress counter it alone writes.

use super::{Shared, TrialClock};
use crate::backend::{BackendError, ClaimOutcome, ClaimedJob, ErrorKind, FailOutcome, Session};
use crate::ledger::WorkerLedger;
use crate::metrics::{WorkerMetrics, bump, micros};
use crate::strategy::Strategy;
use crate::workload::{DurationDist, HandlerMode, Workload};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use rand_distr::{Distribution, Exp, LogNormal};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// What one worker hands back when the trial ends.
pub struct WorkerReport<S> {
    pub session: S,
    pub metrics: WorkerMetrics,
}

/// The simulated handler's run time, sampled per job.
#[derive(Clone, Copy)]
enum HandlerTime {
    None,
    Fixed(Duration),
    Uniform(f64, f64),
    Exponential(Exp<f64>),
    Lognormal(LogNormal<f64>),
}

impl HandlerTime {
    fn new(d: Option<DurationDist>) -> HandlerTime {
        match d {
            None => HandlerTime::None,
            Some(DurationDist::Fixed { ms }) => {
                HandlerTime::Fixed(Duration::from_secs_f64(ms / 1e3))
            }
            Some(DurationDist::Uniform { min_ms, max_ms }) => HandlerTime::Uniform(min_ms, max_ms),
            Some(DurationDist::Exponential { mean_ms }) => {
                HandlerTime::Exponential(Exp::new(1.0 / mean_ms).expect("validated mean > 0"))
            }
            Some(DurationDist::Lognormal { median_ms, sigma }) => HandlerTime::Lognormal(
                LogNormal::new(median_ms.ln(), sigma).expect("validated median > 0, sigma >= 0"),
            ),
        }
    }

    fn sample(&self, rng: &mut SmallRng) -> Duration {
        let ms = match *self {
            HandlerTime::None => return Duration::ZERO,
            HandlerTime::Fixed(d) => return d,
            HandlerTime::Uniform(lo, hi) if hi > lo => rng.gen_range(lo..hi),
            HandlerTime::Uniform(lo, _) => lo,
            HandlerTime::Exponential(d) => d.sample(rng),
            HandlerTime::Lognormal(d) => d.sample(rng),
        };
        Duration::from_secs_f64((ms / 1e3).min(3600.0))
    }
}

/// A worker's settings, built once per trial.
pub struct WorkerSpec {
    pub strategy: Strategy,
    pub batch: u32,
    pub claim_only: bool,
    pub start_gate: bool,
    handler_time: HandlerTime,
    pub failure_rate: f64,
    pub max_attempts: u32,
    pub retry_delay: Duration,
    pub abandon_rate: f64,
    /// The injected faults besides abandon (crash after start, poison, hang).
    faults: crate::workload::Faults,
    /// The workload's seed: which jobs are poison does not change between repetitions.
    poison_seed: u64,
    pub heartbeat: Option<Duration>,
    /// Acknowledge the batch's successes in one statement after it (`handler.complete`).
    pub complete_batched: bool,
    pub backoff: Duration,
    pub backoff_max: Duration,
    pub seed: u64,
}

impl WorkerSpec {
    pub fn new(w: &Workload, strategy: &Strategy, batch: u32, seed: u64) -> WorkerSpec {
        WorkerSpec {
            strategy: strategy.clone(),
            batch,
            claim_only: w.handler.mode == HandlerMode::ClaimOnly,
            start_gate: w.handler.start_gate,
            handler_time: HandlerTime::new(w.handler.duration),
            failure_rate: w.handler.failure_rate,
            max_attempts: w.handler.max_attempts,
            retry_delay: w.handler.retry_delay,
            abandon_rate: w.faults.abandon_rate,
            faults: w.faults.clone(),
            poison_seed: w.seed,
            heartbeat: w.handler.heartbeat,
            complete_batched: w.handler.complete == crate::workload::Completion::Batched,
            backoff: w.empty_backoff,
            backoff_max: w.empty_backoff_max,
            seed,
        }
    }
}

/// Sends a statement again after a retryable error (deadlock, serialization failure,
/// lock timeout), counting each; other errors end the worker. The pause doubles from
/// 1 ms up to 64 ms, so workers that deadlock with each other fall out of step.
macro_rules! retrying {
    ($m:expr, $call:expr) => {{
        let mut pause = Duration::from_millis(1);
        loop {
            match $call.await {
                Err(e) if e.is_retryable() => {
                    count_retry(&mut $m.counts, &e);
                    tokio::time::sleep(pause).await;
                    pause = (pause * 2).min(Duration::from_millis(64));
                }
                other => break other,
            }
        }
    }};
}

fn count_retry(c: &mut crate::metrics::Counts, e: &BackendError) {
    c.retries += 1;
    match e.kind() {
        ErrorKind::Deadlock => c.deadlocks += 1,
        ErrorKind::Serialization => c.serialization_failures += 1,
        ErrorKind::LockTimeout => c.lock_timeouts += 1,
        _ => {}
    }
}

/// At the stop: returns the claimed jobs this worker will not start to pending.
async fn hand_back<S: Session>(
    session: &mut S,
    m: &mut WorkerMetrics,
    ledger: &mut WorkerLedger,
    clock: TrialClock,
    unstarted: &[i64],
) -> Result<(), BackendError> {
    let t = clock.ns(Instant::now());
    retrying!(m, session.release(unstarted))?;
    for &id in unstarted {
        ledger.release(id, t);
    }
    m.counts.released_at_stop += unstarted.len() as u64;
    Ok(())
}

/// Ends a run that finished at `t_done`: fail (back to pending, or dead-letter) or
/// complete, each only if the worker still owns the job, and the ledger's release.
#[allow(clippy::too_many_arguments)]
async fn finish<S: Session>(
    session: &mut S,
    m: &mut WorkerMetrics,
    ledger: &mut WorkerLedger,
    spec: &WorkerSpec,
    clock: TrialClock,
    job: i64,
    failed: bool,
    t_done: Instant,
) -> Result<(), BackendError> {
    if failed {
        let r = retrying!(m, session.fail(job, spec.retry_delay, spec.max_attempts))?;
        ledger.release(job, clock.ns(t_done));
        match r {
            FailOutcome::Retried => m.counts.jobs_failed += 1,
            FailOutcome::DeadLettered => m.counts.jobs_dead_lettered += 1,
            FailOutcome::NotOwned => m.counts.finish_refused += 1,
        }
        return Ok(());
    }
    let owned = retrying!(m, session.complete(job))?;
    ledger.release(job, clock.ns(t_done));
    if owned {
        ledger.complete(job, clock.ns(t_done));
        let t = Instant::now();
        m.counts.jobs_completed += 1;
        if clock.is_steady(t) && !clock.is_over(t) {
            m.counts.jobs_completed_steady += 1;
        }
        bump(&mut m.completed_per_s, clock.sec(t), 1);
    } else {
        m.counts.finish_refused += 1;
    }
    Ok(())
}

/// What [`claim`] took: the time spent in the claim calls themselves, and when the
/// last one returned.
struct ClaimTiming {
    in_calls: Duration,
    end: Instant,
}

/// The second since the trial's start of an instant [`TrialClock::ns`] gave.
fn second_of(t_ns: u64) -> usize {
    (t_ns / 1_000_000_000) as usize
}

/// One claim begun at `start`, sent again for the rest of the batch after a retryable
/// error: the jobs a call committed before its error stay in `jobs` (a conditional claim
/// commits row by row). The back-off sleeps between calls are counted apart
/// (`retry_backoff_us`), so claim latency is the database's service time, not the
/// harness's pauses. A claim that needs no retry reads the clock once, here, beside the
/// caller's `start`.
async fn claim<S: Session>(
    session: &mut S,
    spec: &WorkerSpec,
    jobs: &mut Vec<ClaimedJob>,
    m: &mut WorkerMetrics,
    start: Instant,
) -> Result<(ClaimOutcome, ClaimTiming), BackendError> {
    jobs.clear();
    let mut pause = Duration::from_millis(1);
    let mut in_calls = Duration::ZERO;
    let mut lost_races = 0;
    let mut t = start;
    loop {
        let left = spec.batch - jobs.len() as u32;
        let r = session.claim(&spec.strategy, left, jobs).await;
        let end = Instant::now();
        in_calls += end - t;
        match r {
            Ok(o) => {
                lost_races += o.lost_races;
                return Ok((ClaimOutcome { lost_races }, ClaimTiming { in_calls, end }));
            }
            Err(e) if e.is_retryable() => {
                count_retry(&mut m.counts, &e);
                m.counts.claim_retries += 1;
                if e.kind() == ErrorKind::LockTimeout {
                    m.counts.claim_lock_refusals += 1;
                }
                m.counts.retry_backoff_us += micros(pause);
                tokio::time::sleep(pause).await;
                pause = (pause * 2).min(Duration::from_millis(64));
                t = Instant::now();
            }
            Err(e) => return Err(e),
        }
    }
}

/// The simulated handler: sleeps `run_for`, extending the lease every `heartbeat` when
/// one is set. A refused heartbeat (the row was rescued) does not stop the handler: a
/// real handler does not know either, which is how a lease re-run happens.
async fn handle<S: Session>(
    session: &mut S,
    m: &mut WorkerMetrics,
    job: i64,
    token: i64,
    run_for: Duration,
    heartbeat: Option<Duration>,
) -> Result<(), BackendError> {
    let Some(every) = heartbeat else {
        if !run_for.is_zero() {
            tokio::time::sleep(run_for).await;
        }
        return Ok(());
    };
    let end = Instant::now() + run_for;
    loop {
        let left = end.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Ok(());
        }
        tokio::time::sleep(left.min(every)).await;
        if Instant::now() < end && !retrying!(m, session.heartbeat(job, token))? {
            m.counts.heartbeats_refused += 1;
        }
    }
}

pub use super::reconnect::Connector;

/// A worker's count of jobs claimed, for the progress bar: written by the worker after
/// every claim, read by the runner a few times a second. On a cache line of its own:
/// two workers' counters side by side (two 24-byte allocations share a line) made each
/// claim's store take the line from the other worker's core.
pub type Progress = Arc<crossbeam_utils::CachePadded<AtomicU64>>;

/// Runs the lifecycle until the stop flag is set, then hands unstarted jobs back. With a
/// `reconnect` (the workload injects connection faults), a worker whose connection dies
/// opens a new one and goes on; without, the error ends the trial.
pub async fn run<S: Session>(
    mut session: S,
    ledger: WorkerLedger,
    spec: Arc<WorkerSpec>,
    clock: TrialClock,
    shared: Arc<Shared>,
    progress: Progress,
    reconnect: Option<Connector<S>>,
) -> Result<WorkerReport<S>, BackendError> {
    let mut w = Worker::new(ledger, spec, clock, shared, progress);
    while !w.shared.stopping() {
        match w.round(&mut session).await {
            Ok(()) => {}
            // The stop ended this connection because its statement outran the grace:
            // what the worker held is stranded, and it has stopped.
            Err(e) if e.kind() == ErrorKind::ConnectionLost && w.shared.forced() => {
                w.strand_in_hand();
                break;
            }
            Err(e) if e.kind() == ErrorKind::ConnectionLost => match &reconnect {
                Some(connect) => session = w.reconnect(connect).await?,
                None => return Err(e),
            },
            Err(e) => return Err(e),
        }
    }
    Ok(WorkerReport {
        session,
        metrics: w.m,
    })
}

/// One worker's state across its rounds (a claim and the jobs it returned) and across
/// the connections it goes through.
struct Worker {
    index: u32,
    spec: Arc<WorkerSpec>,
    clock: TrialClock,
    shared: Arc<Shared>,
    progress: Progress,
    m: WorkerMetrics,
    ledger: WorkerLedger,
    rng: SmallRng,
    jobs: Vec<ClaimedJob>,
    unstarted: Vec<i64>,
    backoff: Duration,
    /// Executions started by this worker; with its index, each execution's token.
    executions: i64,
    /// Jobs of the batch before this index are done with (finished, handed back,
    /// abandoned); from it on, a lost connection strands them.
    in_hand: usize,
    /// With batched completion: jobs that succeeded (effect written) and wait for the
    /// batch's one `complete`; a lost connection strands them too.
    unacked: Vec<i64>,
}

impl Worker {
    fn new(
        ledger: WorkerLedger,
        spec: Arc<WorkerSpec>,
        clock: TrialClock,
        shared: Arc<Shared>,
        progress: Progress,
    ) -> Worker {
        let index = ledger.worker();
        Worker {
            ledger,
            rng: SmallRng::seed_from_u64(spec.seed ^ (u64::from(index) << 32)),
            jobs: Vec::with_capacity(spec.batch as usize),
            unstarted: Vec::with_capacity(spec.batch as usize),
            backoff: spec.backoff,
            executions: 0,
            in_hand: 0,
            unacked: Vec::with_capacity(spec.batch as usize),
            m: WorkerMetrics::default(),
            index,
            spec,
            clock,
            shared,
            progress,
        }
    }

    /// One claim, and the lifecycle of every job it returned.
    async fn round<S: Session>(&mut self, session: &mut S) -> Result<(), BackendError> {
        // Fields, not a clone of the Arc: no atomic increment per claim.
        let (spec, clock) = (&*self.spec, self.clock);
        // A new batch: none of it is done with yet (the last batch's index would strand
        // the wrong jobs, or slice past a smaller batch).
        self.in_hand = 0;
        let t0 = Instant::now();
        // The clock read once as nanoseconds since the start, and everything decided
        // from it (a subtraction of instants is a few dozen instructions each).
        let t0_ns = clock.ns(t0);
        // Between rounds nothing of this worker is in flight: its events so far may go.
        self.ledger.tick(t0_ns);
        let claimed = claim(session, spec, &mut self.jobs, &mut self.m, t0).await;
        let (
            outcome,
            ClaimTiming {
                in_calls: claim_time,
                end: t1,
            },
        ) = match claimed {
            Ok(r) => r,
            Err(e) => {
                if e.kind() == ErrorKind::ConnectionLost {
                    self.m.counts.claims_in_doubt += 1;
                }
                return Err(e);
            }
        };
        let m = &mut self.m;
        let n = self.jobs.len() as u32;
        m.counts.most_claimed = m.counts.most_claimed.max(u64::from(n));
        // `jobs` holds every try of this claim, and the tries asked for the batch in all.
        if n > spec.batch {
            m.counts.over_claims += 1;
        }
        // The measured window: claims that began after warm-up and before the planned
        // end (a claim begun after it, while the stop spreads, counts for nothing).
        let steady = clock.is_measured_ns(t0_ns);
        m.counts.claim_calls += 1;
        m.counts.lost_races += u64::from(outcome.lost_races);
        m.counts.jobs_claimed += u64::from(n);
        if steady {
            m.counts.claim_calls_steady += 1;
            m.counts.jobs_claimed_steady += u64::from(n);
            let us = micros(claim_time);
            if n == 0 {
                m.empty_claim_latency.saturating_record(us);
            } else {
                m.claim_latency.saturating_record(us);
                m.claim_seconds.record(second_of(t0_ns), us);
            }
        }
        let claimed_ns = clock.ns(t1);
        // A job seeded before the trial has waited since the trial began, not since the
        // reset that seeded it: the server's wait, capped at the time since the start.
        let since_start_us = claimed_ns / 1000;
        if outcome.lost_races > 0 {
            self.ledger.lost_races(claimed_ns, outcome.lost_races);
        }
        for j in &self.jobs {
            self.ledger.claim(j.id, claimed_ns, j.attempt);
            // A custom claim that returns no queue wait reports -1: nothing to record.
            if steady && j.queue_wait_us >= 0 {
                let wait_us = (j.queue_wait_us.max(1) as u64).min(since_start_us.max(1));
                m.queue_wait.saturating_record(wait_us);
            }
        }
        bump(&mut m.claimed_per_s, second_of(claimed_ns), n);
        self.progress
            .store(m.counts.jobs_claimed, Ordering::Relaxed);

        // What follows the claim is boxed, an allocation per round where it runs: a
        // round's future is copied whole as each round starts, and the waits and the
        // jobs' lifecycle would otherwise double its size on every claim.
        if n == 0 {
            m.counts.empty_claims += 1;
            return Box::pin(self.idle(session)).await;
        }
        self.backoff = spec.backoff;
        if spec.claim_only {
            return Ok(());
        }
        Box::pin(self.run_batch(session)).await
    }

    /// After a claim that found nothing: waits before the next.
    async fn idle<S: Session>(&mut self, session: &mut S) -> Result<(), BackendError> {
        let spec = &*self.spec;
        if spec.strategy.def().listens {
            // Until the producer announces work; the longest back-off catches jobs
            // no one announces (retries coming due, rescued claims).
            tokio::select! {
                woken = session.wait_for_work(spec.backoff_max) => {
                    self.m.counts.wakeups += u64::from(woken);
                }
                _ = self.shared.stopped() => {}
            }
            return Ok(());
        }
        // Jitter up to 100% so idle workers do not wake in lockstep.
        let sleep = self.backoff.mul_f64(1.0 + self.rng.r#gen::<f64>());
        self.backoff = (self.backoff * 2).min(spec.backoff_max);
        self.shared.sleep_unless_stopping(sleep).await;
        Ok(())
    }

    /// The lifecycle of every job the claim returned.
    async fn run_batch<S: Session>(&mut self, session: &mut S) -> Result<(), BackendError> {
        let clock = self.clock;
        for i in 0..self.jobs.len() {
            let job = self.jobs[i];
            if self.shared.stopping() {
                self.acknowledge(session).await?;
                self.unstarted.clear();
                self.unstarted.extend(self.jobs[i..].iter().map(|j| j.id));
                hand_back(
                    session,
                    &mut self.m,
                    &mut self.ledger,
                    clock,
                    &self.unstarted,
                )
                .await?;
                self.in_hand = self.jobs.len();
                return Ok(());
            }
            self.run_job(session, job).await?;
            self.in_hand = i + 1;
        }
        self.acknowledge(session).await
    }

    /// Batched completion: archives the batch's successes in one statement, and ends
    /// their claims in the ledger when it returns (they were held until then).
    async fn acknowledge<S: Session>(&mut self, session: &mut S) -> Result<(), BackendError> {
        if self.unacked.is_empty() {
            return Ok(());
        }
        let m = &mut self.m;
        let archived = retrying!(m, session.complete_many(&self.unacked))?;
        let t = Instant::now();
        let (clock, steady) = (
            self.clock,
            self.clock.is_steady(t) && !self.clock.is_over(t),
        );
        for &id in &self.unacked {
            self.ledger.release(id, clock.ns(t));
            if archived.contains(&id) {
                self.ledger.complete(id, clock.ns(t));
                m.counts.jobs_completed += 1;
                m.counts.jobs_completed_steady += u64::from(steady);
                bump(&mut m.completed_per_s, clock.sec(t), 1);
            } else {
                m.counts.finish_refused += 1;
            }
        }
        self.unacked.clear();
        Ok(())
    }

    /// One claimed job: start, handle, write its effect, finish; or the injected crash.
    async fn run_job<S: Session>(
        &mut self,
        session: &mut S,
        job: ClaimedJob,
    ) -> Result<(), BackendError> {
        let (spec, clock) = (&*self.spec, self.clock);
        let m = &mut self.m;
        if spec.abandon_rate > 0.0 && self.rng.r#gen::<f64>() < spec.abandon_rate {
            // A simulated crash: the claim is left to expire and the rescuer.
            m.counts.abandoned += 1;
            self.ledger.strand(job.id, clock.ns(Instant::now()));
            return session.crashed(job.id).await;
        }
        let t_start = clock.ns(Instant::now());
        self.executions += 1;
        let token = (i64::from(self.index) << 40) | self.executions;
        let Some(started_us) = retrying!(m, session.start(job.id, spec.start_gate, token))? else {
            self.ledger.release(job.id, t_start);
            m.counts.start_refused += 1;
            return Ok(());
        };
        let f = &spec.faults;
        if f.crash_after_start_rate > 0.0 && self.rng.r#gen::<f64>() < f.crash_after_start_rate {
            // Crashed mid-run: processing, no effect, until the lease expires.
            m.counts.crashed_after_start += 1;
            self.ledger.strand(job.id, clock.ns(Instant::now()));
            return session.crashed(job.id).await;
        }
        if f.hang_rate > 0.0 && self.rng.r#gen::<f64>() < f.hang_rate {
            // Hung: no heartbeats while it hangs, then it carries on as if nothing
            // happened (its effect and completion meet the ownership checks).
            // The rest of its batch waits with it.
            m.counts.hangs += 1;
            let t = clock.ns(Instant::now());
            for j in &self.jobs[self.in_hand..] {
                self.ledger.strand_hung(j.id, t);
                m.counts.hung_batch += 1;
            }
            self.shared.sleep_unless_stopping(f.hang).await;
        } else {
            let run_for = spec.handler_time.sample(&mut self.rng);
            handle(session, m, job.id, token, run_for, spec.heartbeat).await?;
        }
        let poison = f.is_poison(job.id, spec.poison_seed);
        m.counts.poisoned_runs += u64::from(poison);
        let failed =
            poison || (spec.failure_rate > 0.0 && self.rng.r#gen::<f64>() < spec.failure_rate);
        let receipt = match retrying!(
            m,
            session.effect(job.id, job.attempt, failed, started_us, token)
        ) {
            Ok(r) => r,
            Err(e) => {
                if e.kind() == ErrorKind::ConnectionLost {
                    m.counts.executions_in_doubt += 1;
                    let t = clock.ns(Instant::now());
                    self.ledger
                        .execute_in_doubt(job.id, t, (job.attempt, started_us, !failed));
                }
                return Err(e);
            }
        };
        let t_done = Instant::now();
        self.ledger.execute(
            job.id,
            clock.ns(t_done),
            (job.attempt, started_us, receipt.finished_us, !failed),
        );
        if spec.complete_batched && !failed {
            self.unacked.push(job.id);
            return Ok(());
        }
        finish(
            session,
            m,
            &mut self.ledger,
            spec,
            clock,
            job.id,
            failed,
            t_done,
        )
        .await
    }

    /// The connection is gone: the jobs this worker held (unfinished, or finished and
    /// not yet acknowledged) are left to the rescuer, their claims open in the ledger.
    fn strand_in_hand(&mut self) {
        let t = self.clock.ns(Instant::now());
        let unfinished = self.jobs[self.in_hand.min(self.jobs.len())..].iter();
        for id in unfinished.map(|j| j.id).chain(self.unacked.drain(..)) {
            self.ledger.strand(id, t);
            self.m.counts.stranded_by_loss += 1;
        }
        self.in_hand = self.jobs.len();
    }

    /// After the server ended this worker's connection: the jobs it held are left to
    /// the rescuer (their claims stay in the ledger until it releases them), and new
    /// connections are tried with a jittered, doubling pause until one opens.
    async fn reconnect<S: Session>(&mut self, connect: &Connector<S>) -> Result<S, BackendError> {
        let lost_at = Instant::now();
        self.strand_in_hand();
        let (session, out) = super::reconnect::reconnect(connect, &mut self.rng, lost_at).await?;
        let c = &mut self.m.counts;
        let out = micros(out);
        c.reconnects += 1;
        c.downtime_us += out;
        c.max_outage_us = c.max_outage_us.max(out);
        Ok(session)
    }
}

#[cfg(test)]
mod tests {
    //! The worker's own accounting around a claim, with a session that scripts its
    //! answers: no database concurrency is exercised here (the behavioural suite does
    //! that on real servers), only what the worker does with errors and time.
    use super::*;
    use crate::backend::Sample;
    use crate::backend::claim::{Ask, Done, Won};
    use crate::backend::lifecycle::{Reply, Step};

    /// Fails `failures` times with a lock timeout, then claims `rows` jobs from id 7,
    /// whatever batch it was asked for. Starts and effects succeed; a per-job
    /// `complete` is never expected, and each `complete_many` is recorded.
    #[derive(Default)]
    struct Scripted {
        failures: u32,
        rows: i64,
        acknowledged: Vec<Vec<i64>>,
    }

    fn unused<T>() -> Result<T, BackendError> {
        unreachable!("the paths under test send nothing else")
    }

    /// Its `claim` is scripted whole, so no claim step is ever asked for.
    impl crate::backend::ClaimSteps for Scripted {
        async fn locking_claim(&mut self, _: Ask<'_>, _: &mut Vec<ClaimedJob>) -> Done {
            unused()
        }
        async fn read_then_write(&mut self, _: Ask<'_>, _: &mut Vec<ClaimedJob>) -> Done {
            unused()
        }
        async fn candidates(&mut self, _: Ask<'_>, _: &mut Vec<ClaimedJob>) -> Done {
            unused()
        }
        async fn version_cas(
            &mut self,
            _: Ask<'_>,
            _: &mut Vec<ClaimedJob>,
        ) -> Result<u32, BackendError> {
            unused()
        }
        async fn claim_one(&mut self, _: Ask<'_>, _: ClaimedJob) -> Won {
            unused()
        }
    }

    impl crate::backend::Lifecycle for Scripted {
        async fn run(&mut self, step: Step) -> Result<Reply, BackendError> {
            match step {
                Step::Start { .. } => Ok(Reply::row(Some(1), None)),
                Step::Effect { .. } => Ok(Reply::row(Some(2), Some(1))),
                _ => unused(),
            }
        }
    }

    impl Session for Scripted {
        async fn claim(
            &mut self,
            _: &Strategy,
            _: u32,
            out: &mut Vec<ClaimedJob>,
        ) -> Result<ClaimOutcome, BackendError> {
            if self.failures > 0 {
                self.failures -= 1;
                return Err(BackendError::Query {
                    what: "claim",
                    kind: ErrorKind::LockTimeout,
                    code: None,
                    message: "scripted".into(),
                });
            }
            out.extend((7..7 + self.rows).map(|id| ClaimedJob {
                id,
                attempt: 0,
                queue_wait_us: 1,
            }));
            Ok(ClaimOutcome::default())
        }
        async fn complete_many(&mut self, jobs: &[i64]) -> Result<Vec<i64>, BackendError> {
            self.acknowledged.push(jobs.to_vec());
            Ok(jobs.to_vec())
        }
        async fn begin(&mut self) -> Result<(), BackendError> {
            unused()
        }
        async fn end(&mut self, _: bool) -> Result<(), BackendError> {
            unused()
        }
        async fn apply(&mut self, _: &[(String, String)]) -> Result<(), BackendError> {
            unused()
        }
        async fn release(&mut self, _: &[i64]) -> Result<Vec<i64>, BackendError> {
            unused()
        }
        async fn rescue(&mut self, _: Duration) -> Result<Vec<i64>, BackendError> {
            unused()
        }
        async fn produce(&mut self, _: &Workload, _: &[i64]) -> Result<u64, BackendError> {
            unused()
        }
        async fn sample(&mut self, _: &Workload) -> Result<Sample, BackendError> {
            unused()
        }
        async fn kill_workers(&mut self, _: &str) -> Result<u64, BackendError> {
            unused()
        }
    }

    /// One worker of production at `batch`, on a one-job workload whose `[handler]` and
    /// `[faults]` sections are `sections`, recording into a ledger of its own.
    fn one_worker(sections: &str, batch: u32) -> Worker {
        let w = crate::workload::Workload::parse(
            std::path::Path::new("t.toml"),
            &format!(
                "name = \"t\"\n[population]\nbacklog = 1\nqueues = [{{ name = \"q\" }}]\n{sections}[matrix]\nstrategies = [\"production\"]\nindex_layouts = [\"fetch-order\"]\nworkers = [1]\nbatch_sizes = [{batch}]\n[trial]\nduration_s = 1\n"
            ),
        )
        .unwrap();
        let spec = Arc::new(WorkerSpec::new(&w, &Strategy::PRODUCTION, batch, 1));
        let clock = TrialClock::new(&w, Instant::now());
        Worker::new(
            WorkerLedger::new(0),
            spec,
            clock,
            Arc::default(),
            Arc::default(),
        )
    }

    /// `handler.complete = "batched"`: the batch's jobs are acknowledged in one call
    /// after the batch (the scripted session panics on a per-job `complete`), and each
    /// counts as completed.
    #[tokio::test]
    async fn batched_completion_acknowledges_a_batch_in_one_call() {
        let mut worker = one_worker("[handler]\ncomplete = \"batched\"\n", 3);
        let mut s = Scripted {
            rows: 3,
            ..Scripted::default()
        };
        worker.round(&mut s).await.unwrap();
        worker.round(&mut s).await.unwrap();
        assert_eq!(s.acknowledged, vec![vec![7, 8, 9], vec![7, 8, 9]]);
        assert_eq!(worker.m.counts.jobs_completed, 6);
        assert!(worker.unacked.is_empty());
    }

    /// Regression: `in_hand` kept the last batch's length, so a hang in a smaller batch
    /// sliced past its end (a worker panic in CI) and one in a larger batch left the
    /// hanging job itself out of the stranded rest.
    #[tokio::test]
    async fn a_hang_strands_the_rest_of_its_own_batch_whatever_the_last_one_was() {
        let mut worker = one_worker(
            "[handler]\ncomplete = \"batched\"\n[faults]\nlease_s = 1\nhang_rate = 1.0\nhang_s = 0.001\n",
            3,
        );
        for rows in [1, 3, 1] {
            let mut s = Scripted {
                rows,
                ..Scripted::default()
            };
            worker.round(&mut s).await.unwrap();
        }
        assert_eq!(worker.m.counts.hangs, 5);
        // Each hang strands its job and the rest of its batch: 1, then 3 + 2 + 1, then 1.
        assert_eq!(worker.m.counts.hung_batch, 8);
    }

    #[tokio::test]
    async fn a_claim_returning_more_rows_than_its_batch_is_an_over_claim() {
        let mut worker = one_worker("[handler]\nmode = \"claim-only\"\n", 2);
        for rows in [2, 5, 1] {
            let mut s = Scripted {
                rows,
                ..Scripted::default()
            };
            worker.round(&mut s).await.unwrap();
        }
        assert_eq!(
            worker.m.counts.over_claims, 1,
            "only the claim of 5 for a batch of 2"
        );
        assert_eq!(worker.m.counts.most_claimed, 5);
        assert_eq!(worker.m.counts.jobs_claimed, 8);
    }

    #[tokio::test]
    async fn claim_latency_excludes_the_back_off_between_retries() {
        // Regression: the claim was timed around the retry loop, so four lock timeouts
        // added their 1 + 2 + 4 + 8 ms of back-off sleep to the claim's latency.
        let w = crate::workload::Workload::parse(
            std::path::Path::new("t.toml"),
            "name = \"t\"\n[population]\nbacklog = 1\nqueues = [{ name = \"q\" }]\n[matrix]\nstrategies = [\"production\"]\nindex_layouts = [\"fetch-order\"]\nworkers = [1]\nbatch_sizes = [3]\n[trial]\nduration_s = 1\n",
        )
        .unwrap();
        let spec = WorkerSpec::new(&w, &Strategy::PRODUCTION, 3, 1);
        let mut m = WorkerMetrics::default();
        let mut jobs = Vec::new();
        let mut s = Scripted {
            failures: 4,
            rows: 1,
            ..Scripted::default()
        };
        let start = Instant::now();
        let (_, timing) = claim(&mut s, &spec, &mut jobs, &mut m, start)
            .await
            .unwrap();
        let in_calls = timing.in_calls;
        assert_eq!(jobs.len(), 1);
        assert_eq!(m.counts.retries, 4);
        assert_eq!(m.counts.lock_timeouts, 4);
        assert_eq!(m.counts.retry_backoff_us, 15_000);
        assert!(
            in_calls < Duration::from_millis(15),
            "the claim calls themselves take no time here: {in_calls:?}"
        );
        // The back-off is in the wall time the claim took, only not in its latency.
        assert!(timing.end - start >= Duration::from_millis(15));
    }

    /// The size of the future a function of these argument types returns, without
    /// calling it.
    macro_rules! future_size {
        ($f:expr; $($arg:ident),*) => {{
            fn size<$($arg,)* F: Future>(_: impl Fn($($arg),*) -> F) -> usize {
                std::mem::size_of::<F>()
            }
            size($f)
        }};
    }

    #[test]
    fn claim_path_futures_stay_small() {
        // An async call's future is copied whole into its caller's as it starts, so a
        // claim copies each layer's future from the statement up to the worker's round
        // (the copies were a tenth of the client's instructions per claim at batch 1
        // under callgrind, with a claim path of 3.3, 3.1, 2.9, 1.7, 1.5, 1.4, 1.3 and
        // 1.1 KB futures). The largest backend claim sets every layer's size, and a
        // rare path's state (preparing, a two-step claim, a conditional claim, a
        // retry's back-off) must not sit in them: each layer adds little to the one
        // below it.
        use crate::backend::any::AnySession;
        use crate::backend::claim::ClaimSteps;
        use crate::backend::{mysql::MysqlSession, postgres::PostgresSession};
        let pg = future_size!(<PostgresSession as ClaimSteps>::locking_claim; A, B, C);
        let mysql = future_size!(<MysqlSession as ClaimSteps>::locking_claim; A, B, C);
        let any = future_size!(<AnySession as ClaimSteps>::locking_claim; A, B, C);
        let by_shape = future_size!(crate::backend::claim::by_shape::<AnySession>; A, B, C, D);
        let worker_claim = future_size!(claim::<AnySession>; A, B, C, D, E);
        let round = future_size!(Worker::round::<AnySession>; A, B);
        let sizes = format!(
            "PostgreSQL {pg}, MySQL {mysql}, any backend {any}, by shape {by_shape}, \
             the worker's claim {worker_claim}, its round {round} bytes"
        );
        assert!(any <= pg.max(mysql) + 64, "{sizes}");
        assert!(by_shape <= any + 128, "{sizes}");
        assert!(worker_claim <= by_shape + 256, "{sizes}");
        assert!(round <= worker_claim + 256, "{sizes}");
    }
}
