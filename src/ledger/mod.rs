//! The claim ledger: which job went to which worker and when, and every handler run.
//! Each worker records into its own slice and hands it, every few milliseconds, to the
//! trial's [`tally`], which counts duplicates as the trial goes and keeps only the jobs
//! still in flight (memory bounded by what is held, not by what happened). Where a
//! finding needs the whole trial again (a failover's lost work, a capped queue's exact
//! holds, the shard moves' windows), the tally also keeps every event and the
//! [`merged`] ledger answers from them; builds with debug assertions keep them always
//! and check the two against each other at the end of every trial.
//!
//! Executions are counted by a rule the effects table applies too (each backend's
//! `evidence/reconcile.sql`): a run of a job is a duplicate when it overlaps an earlier
//! run of that job in time, or when an earlier run succeeded (nothing legitimately
//! released the job for another run), whatever attempt number each run believed it had.
//! Both sides use the database's clock for a run's start and finish (start and effect
//! return them), so they can only disagree when a run is missing or extra on one side:
//! a harness bug.
//!
//! Timestamps are chosen so that the analysis never reports a duplicate that did not
//! happen: a claim is stamped when the claim call *returned* (after the database made it),
//! a release when the releasing call *began* (before the database undid ownership). So a
//! legitimate hand-over (release committed, then claimed) always orders release < claim;
//! a claim stamped before the previous holder's release means both workers held the job
//! at that moment. Overlaps that end inside a call's round trip are not counted, so the
//! duplicate-claim count is a lower bound, never an over-count.

pub mod claimed;
pub mod held;
pub mod merged;
pub mod tally;

pub use merged::{MergedLedger, QueueHold};
pub use tally::{Tally, TallyFindings};

use serde::{Deserialize, Serialize};
use std::sync::mpsc::{Sender, TryRecvError};

/// The worker number used for the rescuer's releases.
pub const RESCUER: u32 = u32::MAX;

/// What happened to a job, in the order a job's events are read when two share an
/// instant: a stranding before a release (a rescue at the instant of the fault is the
/// fault's), a release before a claim (a hand-over, not an overlap).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventKind {
    /// A fault left the job held with nobody to finish it; `resumes` when the worker's
    /// handler carries on later (a hang) and may still record a run of it.
    Strand { resumes: bool },
    /// Ownership ends (complete, fail, refused start, stop-time release, rescue).
    Release,
    /// The worker now believes it owns the job; `attempt` from the claim.
    Claim { attempt: i32 },
    /// One handler run as its worker saw it: times are the database's (µs since the
    /// epoch), as the start and effect statements returned them.
    Run(Execution),
    /// The database acknowledged the job's completion, of the run that started at
    /// `started_us`: what a failover may have lost.
    Completed { started_us: i64 },
    /// A claim that returned at this instant found `n` of its candidates taken.
    Lost { n: u32 },
}

impl EventKind {
    /// Where the event sorts among a job's events at one instant.
    fn rank(&self) -> u8 {
        match self {
            EventKind::Strand { .. } => 0,
            EventKind::Release => 1,
            EventKind::Claim { .. } => 2,
            EventKind::Run(_) => 3,
            EventKind::Completed { .. } => 4,
            EventKind::Lost { .. } => 5,
        }
    }
}

/// One handler run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Execution {
    pub job: i64,
    pub worker: u32,
    /// The attempt the worker believed it was running (from its claim).
    pub attempt: i32,
    pub started_us: i64,
    pub finished_us: i64,
    pub ok: bool,
    /// The write of its effect lost its connection: the effect may or may not have been
    /// recorded. Not an execution the ledger counts, but one the effects may count, so
    /// it bounds how many more duplicates they may find
    /// ([`LedgerAnalysis::duplicate_executions_at_most`]).
    pub in_doubt: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Event {
    pub job: i64,
    /// Nanoseconds since the trial's start instant; a run is placed when it was
    /// recorded (after its effect returned).
    pub t_ns: u64,
    pub worker: u32,
    pub kind: EventKind,
}

impl Event {
    /// The order the tally reads events in: by time, then kind, then worker; one
    /// job's events read this way are in the merged ledger's per-job order.
    fn key(&self) -> (u64, u8, u32) {
        (self.t_ns, self.kind.rank(), self.worker)
    }
}

/// A worker's events since its last hand-over, and the instant before which it will
/// record nothing more: every later event it records is stamped at or after it.
#[derive(Debug, Clone)]
pub struct Chunk {
    pub source: u32,
    pub events: Vec<Event>,
    pub low_water_ns: u64,
}

/// How often a worker hands its events to the tally, and the most it holds between.
const HAND_OVER_NS: u64 = 50_000_000;
const HAND_OVER_EVENTS: usize = 8192;

/// One worker's (or the rescuer's) events. Appending is the only hot-path operation;
/// [`WorkerLedger::tick`] hands them over between rounds.
#[derive(Debug)]
pub struct WorkerLedger {
    worker: u32,
    events: Vec<Event>,
    sink: Option<Sender<Chunk>>,
    handed_at_ns: u64,
}

/// A copy of the events recorded so far, which hands nothing to a tally: a second
/// sender for one source would close it (on drop) while the first still records.
impl Clone for WorkerLedger {
    fn clone(&self) -> WorkerLedger {
        WorkerLedger {
            worker: self.worker,
            events: self.events.clone(),
            sink: None,
            handed_at_ns: self.handed_at_ns,
        }
    }
}

impl WorkerLedger {
    /// A ledger that keeps everything until [`MergedLedger::new`] reads it.
    pub fn new(worker: u32) -> WorkerLedger {
        WorkerLedger {
            worker,
            events: Vec::with_capacity(1024),
            sink: None,
            handed_at_ns: 0,
        }
    }

    /// A ledger that hands its events to a tally through `sink`.
    pub fn streaming(worker: u32, sink: Sender<Chunk>) -> WorkerLedger {
        let mut ledger = WorkerLedger::new(worker);
        ledger.sink = Some(sink);
        ledger
    }

    fn push(&mut self, job: i64, t_ns: u64, kind: EventKind) {
        self.events.push(Event {
            job,
            t_ns,
            worker: self.worker,
            kind,
        });
    }

    /// At a point where no call of this worker is in flight (so nothing it records
    /// later is stamped before `now_ns`): hands the events over when enough time or
    /// events have gone by. Without a sink, nothing.
    pub fn tick(&mut self, now_ns: u64) {
        if self.sink.is_some()
            && (self.events.len() >= HAND_OVER_EVENTS
                || now_ns.saturating_sub(self.handed_at_ns) >= HAND_OVER_NS)
        {
            self.hand_over(now_ns);
        }
    }

    fn hand_over(&mut self, low_water_ns: u64) {
        let Some(sink) = &self.sink else { return };
        let events = std::mem::replace(&mut self.events, Vec::with_capacity(1024));
        // A tally that is gone has failed its trial already; the join says how.
        let _ = sink.send(Chunk {
            source: self.worker,
            events,
            low_water_ns,
        });
        self.handed_at_ns = low_water_ns;
    }

    /// The worker this ledger records for.
    pub fn worker(&self) -> u32 {
        self.worker
    }

    /// A claim that returned at `t_ns` found `n` of its candidates taken.
    pub fn lost_races(&mut self, t_ns: u64, n: u32) {
        self.push(0, t_ns, EventKind::Lost { n });
    }

    pub fn claim(&mut self, job: i64, t_ns: u64, attempt: i32) {
        self.push(job, t_ns, EventKind::Claim { attempt });
    }

    /// A handler run that started at `started_us` and finished at `finished_us` (the
    /// database's clock) with `ok` or a failure, recorded at `t_ns`.
    pub fn execute(&mut self, job: i64, t_ns: u64, run: (i32, i64, i64, bool)) {
        self.run(job, t_ns, run, false);
    }

    fn run(&mut self, job: i64, t_ns: u64, run: (i32, i64, i64, bool), in_doubt: bool) {
        let (attempt, started_us, finished_us, ok) = run;
        let worker = self.worker;
        let x = Execution {
            job,
            worker,
            attempt,
            started_us,
            finished_us,
            ok,
            in_doubt,
        };
        self.push(job, t_ns, EventKind::Run(x));
    }

    /// A handler run that started at `started_us` and ran with `ok` or a failure, whose
    /// effect's write lost its connection at `t_ns`: the effects may hold it or not.
    pub fn execute_in_doubt(&mut self, job: i64, t_ns: u64, run: (i32, i64, bool)) {
        let (attempt, started_us, ok) = run;
        // Its finish on the database's clock is unknown: none later can be assumed not
        // to overlap it.
        self.run(job, t_ns, (attempt, started_us, i64::MAX, ok), true);
    }

    pub fn release(&mut self, job: i64, t_ns: u64) {
        self.push(job, t_ns, EventKind::Release);
    }

    /// The database acknowledged `job`'s completion: by the run of it this worker
    /// recorded last (a batch's runs are a few entries back, in this round's events).
    pub fn complete(&mut self, job: i64, t_ns: u64) {
        let run = self.events.iter().rev().find_map(|e| match e.kind {
            EventKind::Run(x) if x.job == job => Some(x.started_us),
            _ => None,
        });
        if let Some(started_us) = run {
            self.push(job, t_ns, EventKind::Completed { started_us });
        }
    }

    /// A fault left `job` held with nobody to finish it (a crash, a lost connection);
    /// its claim stays open until the rescuer releases it.
    pub fn strand(&mut self, job: i64, t_ns: u64) {
        self.push(job, t_ns, EventKind::Strand { resumes: false });
    }

    /// A hang left `job` held; the handler carries on afterwards and may record a run
    /// and a release of it, however late.
    pub fn strand_hung(&mut self, job: i64, t_ns: u64) {
        self.push(job, t_ns, EventKind::Strand { resumes: true });
    }
}

/// What the ledger says about a trial.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LedgerAnalysis {
    pub distinct_claimed: u64,
    /// Claims that handed a worker a job another worker still held.
    pub duplicate_claims: u64,
    pub distinct_executed: u64,
    pub executions: u64,
    /// Runs of a job that overlapped an earlier run of it, or followed one that
    /// succeeded (see the module doc).
    pub duplicate_executions: u64,
    /// The duplicate executions the effects may count: as many, with every run whose
    /// effect is in doubt counted as recorded, succeeded and lasting to the end. One
    /// such run can make each later run of its job a duplicate (it succeeded, then the
    /// job was handed out again and failed and was retried: two), so the effects'
    /// excess is bounded by this, not by the number of runs in doubt.
    #[serde(default)]
    pub duplicate_executions_at_most: u64,
    /// Jobs still held by some worker when the trial ended (claim-only mode and
    /// abandoned claims leave these; anything else is a harness defect).
    pub held_at_end: u64,
    /// Claims of a job claimed before in the trial, by what ended its last holding.
    #[serde(default)]
    pub redelivered: Redeliveries,
}

/// Claims of a job that had been claimed before in the trial (a redelivery, on a
/// broker's terms), by what ended the holding before: what the table and each broker
/// hand out again, and why, on one ledger.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Redeliveries {
    /// Its holder gave it back: a failed attempt's retry, a release, a refused start.
    pub released: u64,
    /// The rescuer took it back after its lease ran out (a table's rescue, Redis's
    /// `XAUTOCLAIM`).
    pub rescued: u64,
    /// Its holder crashed or lost its connection, and it was handed out again with no
    /// rescue: the server's own redelivery (a closed connection's on RabbitMQ, an
    /// expired `AckWait` on JetStream).
    pub stranded: u64,
    /// Its holder hung, and it was handed out again with no rescue (JetStream's
    /// `AckWait`).
    pub hung: u64,
    /// Another worker still held it and nothing had ended that holding: a race (each
    /// is also a duplicate claim).
    pub while_held: u64,
}

/// What ended a job's last holding, where a redelivery needs more than "released".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ended {
    Rescued,
    Stranded,
    Hung,
}

impl Ended {
    /// The event's effect on a job's mark: a rescue or a stranding marks it, its
    /// holder's release clears the mark (`None` inside), anything else leaves it.
    fn by(kind: EventKind, worker: u32) -> Option<Option<Ended>> {
        match kind {
            EventKind::Release if worker == RESCUER => Some(Some(Ended::Rescued)),
            EventKind::Release => Some(None),
            EventKind::Strand { resumes: false } => Some(Some(Ended::Stranded)),
            EventKind::Strand { resumes: true } => Some(Some(Ended::Hung)),
            _ => None,
        }
    }
}

impl Redeliveries {
    /// Counts one claim of a job claimed before: by its mark, else by whether another
    /// worker still held it.
    fn count(&mut self, mark: Option<Ended>, held_by_another: bool) {
        match (mark, held_by_another) {
            (Some(Ended::Rescued), _) => self.rescued += 1,
            (Some(Ended::Stranded), _) => self.stranded += 1,
            (Some(Ended::Hung), _) => self.hung += 1,
            (None, true) => self.while_held += 1,
            (None, false) => self.released += 1,
        }
    }

    pub fn total(&self) -> u64 {
        self.released + self.rescued + self.stranded + self.hung + self.while_held
    }
}

/// The most the streaming tally held at once: jobs in flight (held, or waiting for a
/// hung handler or a rescue) and events not yet read (waiting for every worker's
/// low-water mark to pass them).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LedgerPeak {
    pub jobs: u64,
    pub events: u64,
}

/// How far the claims strayed from oldest-first: for each job's first claim, how many
/// jobs with a smaller id were first claimed after it, i.e. older jobs it passed over.
/// Ids are the creation order, so this is the fetch order only where priorities and
/// schedules do not reorder jobs; the trial records it only there. A head-first claim
/// passes over the jobs other claims in flight hold (about workers x batch); a claim
/// that starts elsewhere passes over more.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct PassedOver {
    /// First claims counted.
    pub claims: u64,
    pub mean: f64,
    pub p99: u64,
    pub max: u64,
}

/// Runs of one job, sorted by start, after earlier runs that ended by `earlier_end` and
/// succeeded if `earlier_ok`: those that overlap an earlier run or follow one that
/// succeeded. Runs in doubt are left out, or (`with_doubt`) taken as succeeded and
/// lasting to the end, which can only add duplicates: the most the effects may count.
fn duplicate_runs(
    runs: &[Execution],
    mut earlier_end: i64,
    mut earlier_ok: bool,
    with_doubt: bool,
) -> u64 {
    let mut dups = 0;
    for r in runs.iter().filter(|r| with_doubt || !r.in_doubt) {
        if earlier_end > r.started_us || earlier_ok {
            dups += 1;
        }
        earlier_end = earlier_end.max(r.finished_us);
        earlier_ok |= r.ok || r.in_doubt;
    }
    dups
}

/// Merges every worker's recording and counts duplicates.
pub fn analyse(ledgers: impl IntoIterator<Item = WorkerLedger>) -> LedgerAnalysis {
    MergedLedger::new(ledgers).analyse()
}

/// How often the tally thread wakes to read what the workers handed over. It polls
/// rather than blocks on the channel: a receiver blocked on it makes every send a
/// futex wake-up, paid by the sending worker and by the tally's own sleep and wake
/// (measured with `perf record` of the worker threads, 16 workers at batch 10: 2.3%
/// of the client's samples in the send's notify, 3.9% in the tally's receive).
const TALLY_PERIOD: std::time::Duration = std::time::Duration::from_millis(20);

/// A [`Tally`] on a thread of its own, fed by the ledgers it hands out: the workers pay
/// for a vector push per event and a channel send every [`HAND_OVER_NS`] that wakes no
/// one; the tally reads what came every [`TALLY_PERIOD`].
pub struct TallyThread {
    sink: Sender<Chunk>,
    thread: std::thread::JoinHandle<TallyFindings>,
}

impl TallyThread {
    /// Reads the chunks of `sources` (worker numbers, [`RESCUER`]) as they come;
    /// `keep` every event for the findings that look back over the whole trial.
    pub fn start(sources: Vec<u32>, keep: bool) -> std::io::Result<TallyThread> {
        let (sink, chunks) = std::sync::mpsc::channel::<Chunk>();
        let thread = std::thread::Builder::new()
            .name("claimbench-tally".into())
            .spawn(move || {
                let mut tally = Tally::new(sources, keep);
                loop {
                    let open = loop {
                        match chunks.try_recv() {
                            Ok(chunk) => tally.stage(chunk),
                            Err(TryRecvError::Empty) => break true,
                            Err(TryRecvError::Disconnected) => break false,
                        }
                    };
                    tally.read_staged();
                    if !open {
                        break;
                    }
                    std::thread::sleep(TALLY_PERIOD);
                }
                tally.finish()
            })?;
        Ok(TallyThread { sink, thread })
    }

    /// A ledger for `worker` that hands its events to this tally.
    pub fn ledger(&self, worker: u32) -> WorkerLedger {
        WorkerLedger::streaming(worker, self.sink.clone())
    }

    /// Once every ledger it handed out has been dropped: what the trial did.
    pub fn finish(self) -> Result<TallyFindings, String> {
        drop(self.sink);
        self.thread.join().map_err(|p| {
            let why = p
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| p.downcast_ref::<String>().cloned());
            match why {
                Some(s) => format!("the ledger's tally failed: {s}"),
                None => "the ledger's tally failed".into(),
            }
        })
    }
}

impl Drop for WorkerLedger {
    /// A worker's ledger goes however its task ends (done, failed, unwound): its
    /// last events go to the tally, which stops waiting for it.
    fn drop(&mut self) {
        if self.sink.is_some() {
            self.hand_over(u64::MAX);
            self.sink = None;
        }
    }
}
