//! The ledger counted as the trial goes, in memory bounded by what is in flight.
//!
//! Workers hand over their events in chunks, each with a low-water mark (nothing they
//! record later is stamped before it). The tally reads, in time order, only the events
//! before the lowest mark of all sources: from then on no event of any worker can come
//! before them, so one job's events are read in the order the [`super::MergedLedger`]
//! sorts them into. A job is kept while someone holds it or a hung handler may still
//! record a run of it; then its runs are judged (sorted by start) and it is forgotten,
//! save a bit each in three bitmaps over job ids: claimed once, run once, succeeded once.
//! A later claim of the job (a retry, a duplicate) starts a new live period whose runs
//! began after all the forgotten ones: each later run is held against "an earlier run
//! succeeded" exactly as the whole-trial rule holds it.
//!
//! Older jobs passed over ([`super::PassedOver`]) are counted as each first claim is
//! read: the first-claimed bitmap's rank gives how many older jobs were claimed by then,
//! and the count is final once every older id from [`FIRST_ID`] up has been claimed too.
//! Until then it waits in a queue, at most [`PASSED_OVER_WAIT_NS`]: an older job first
//! claimed later than that after a newer one (or an id never claimed: a gap, a job left
//! pending) is taken as never claimed. So the figure equals the whole trial's whenever
//! no job waited a minute behind a newer one, and memory stays bounded when one did (a
//! minute of first claims at most, and never more than [`PASSED_OVER_QUEUE`]).

use super::claimed::ClaimedIds;
use super::held::HeldWindow;
use super::{
    Chunk, Ended, Event, EventKind, Execution, LedgerAnalysis, LedgerPeak, PassedOver, RESCUER,
};
use crate::metrics::{HistogramSummary, new_histogram};
use roaring::RoaringTreemap;
use smallvec::SmallVec;
use std::collections::{BTreeMap, HashMap, VecDeque};

/// The lowest job id a trial can claim: every backend's seed numbers the backlog from
/// it and new jobs follow the backlog and the history. A count may settle only once
/// every id from here to its job is claimed; settling once every id from the lowest
/// *claimed so far* was, after a grace second, undercounted whenever a lower id (a slow
/// worker's, a random pick's) was first claimed later than that.
pub const FIRST_ID: i64 = 1;
/// How long it waits for older ids at most: an older job first claimed later than this
/// after a newer one is not counted as passed over by it.
pub const PASSED_OVER_WAIT_NS: u64 = 60_000_000_000;
/// The most first claims that may wait at once (24 MB).
pub const PASSED_OVER_QUEUE: usize = 1 << 20;

/// A job someone holds, or a hung handler may still record a run of, or a stranding
/// of which the rescuer has not answered (a job only held, by one worker, is in the
/// [`HeldWindow`] instead). 56 bytes, so a map entry is one cache line.
#[derive(Debug, Default)]
struct Live {
    /// Inline: a heap allocation per held row was a tenth of the tally's instructions
    /// per row.
    holders: SmallVec<[u32; 2]>,
    /// Runs recorded while live, judged when it is no longer.
    runs: Vec<Execution>,
    /// What only a hang or a stranding leaves: boxed, as few jobs have it.
    hang: Option<Box<Hang>>,
}

const _: () = assert!(std::mem::size_of::<(i64, Live)>() <= 64);

#[derive(Debug, Default)]
struct Hang {
    /// Workers whose hang stranded the job and who have recorded nothing of it since.
    hung: SmallVec<[u32; 2]>,
    /// The latest stranding not yet answered by a release: (at, by worker).
    stranded: Option<(u64, u32)>,
}

impl Live {
    /// Nobody holds it, no hung handler may record a run, no stranding waits for its
    /// rescue (a worker may strand a job the rescuer took back already).
    fn settled(&self) -> bool {
        self.holders.is_empty()
            && self
                .hang
                .as_ref()
                .is_none_or(|h| h.hung.is_empty() && h.stranded.is_none())
    }

    fn held_by(workers: &[u32]) -> Live {
        Live {
            holders: SmallVec::from_slice(workers),
            ..Live::default()
        }
    }

    fn hang(&mut self) -> &mut Hang {
        self.hang.get_or_insert_default()
    }
}

/// What the tally found, at the end of a trial.
#[derive(Debug, Clone)]
pub struct TallyFindings {
    pub analysis: LedgerAnalysis,
    pub passed_over: Option<PassedOver>,
    /// Time to rescue, µs, of every rescued stranding; `None` without one.
    pub time_to_rescue: Option<HistogramSummary>,
    /// Every event, when the tally was asked to keep them.
    pub events: Option<Vec<Event>>,
    /// The most jobs and waiting events the tally held at once.
    pub peak: LedgerPeak,
}

/// The streaming ledger of one trial.
pub struct Tally {
    /// Each source's low-water mark; the tally reads up to the lowest.
    low_water: BTreeMap<u32, u64>,
    /// Events at or after the lowest mark, not read yet.
    pending: Vec<Event>,
    /// The lowest mark at the last read.
    read_upto: u64,
    /// The events of one read (a buffer kept between reads).
    ready: Vec<Event>,
    /// Keyed by job id with foldhash, not SipHash: ids come from claimbench's own
    /// sequence, and hashing was a tenth of the client's instructions per claim.
    live: HashMap<i64, Live, foldhash::fast::RandomState>,
    /// Jobs held by one worker and nothing more yet: not in `live`.
    held: HeldWindow,
    /// Jobs of this read whose liveness may have ended.
    touched: Vec<i64>,
    /// What ended a job's last holding, where a redelivery needs more than "released":
    /// a rescue or a stranding not yet answered by a claim or its holder's release (a
    /// few jobs at a time: only faults mark one).
    marks: HashMap<i64, Ended, foldhash::fast::RandomState>,
    claimed: ClaimedIds,
    executed: RoaringTreemap,
    succeeded: RoaringTreemap,
    /// Jobs with a run whose effect is in doubt (a few a trial, where connections die).
    doubted: RoaringTreemap,
    out: LedgerAnalysis,
    passed: Passed,
    rescues: hdrhistogram::Histogram<u64>,
    kept: Option<Vec<Event>>,
    peak: LedgerPeak,
}

/// Job ids as bitmap values, in the same order.
fn bit(job: i64) -> u64 {
    (job as u64) ^ (1 << 63)
}

impl Tally {
    /// A tally that waits for a chunk from each of `sources` before reading anything,
    /// and keeps every event when `keep` (for the whole-trial findings).
    pub fn new(sources: impl IntoIterator<Item = u32>, keep: bool) -> Tally {
        Tally {
            low_water: sources.into_iter().map(|s| (s, 0)).collect(),
            pending: Vec::new(),
            read_upto: 0,
            ready: Vec::new(),
            live: HashMap::default(),
            held: HeldWindow::default(),
            touched: Vec::new(),
            marks: HashMap::default(),
            claimed: ClaimedIds::default(),
            executed: RoaringTreemap::new(),
            succeeded: RoaringTreemap::new(),
            doubted: RoaringTreemap::new(),
            out: LedgerAnalysis::default(),
            passed: Passed::default(),
            rescues: new_histogram(),
            kept: keep.then(Vec::new),
            peak: LedgerPeak::default(),
        }
    }

    /// A window of at most `cap` held jobs, so tests reach its edges.
    #[cfg(test)]
    fn with_window_cap(mut self, cap: usize) -> Tally {
        self.held = HeldWindow::with_cap(cap);
        self
    }

    /// Takes one source's chunk and reads whatever no source can precede any more.
    pub fn take(&mut self, chunk: Chunk) {
        self.stage(chunk);
        self.read_staged();
    }

    /// Takes one source's chunk without reading: the tally thread stages every chunk
    /// that came since its last wake-up and reads once ([`Tally::read_staged`]), so the
    /// waiting events are scanned once per wake-up, not once per chunk.
    pub fn stage(&mut self, chunk: Chunk) {
        self.pending.extend(chunk.events);
        self.peak.events = self.peak.events.max(self.pending.len() as u64);
        let mark = self.low_water.entry(chunk.source).or_insert(0);
        *mark = (*mark).max(chunk.low_water_ns);
    }

    /// Reads whatever no source can precede any more, if the lowest mark rose since the
    /// last read. It rises only when its own source hands over: a chunk of another
    /// source holds nothing before it (a source stamps nothing before its last mark), so
    /// there is nothing new to read, and the waiting events need no scan (while a hung
    /// worker holds the lowest mark, every other source's chunk waits).
    pub fn read_staged(&mut self) {
        let upto = self.upto();
        if upto > self.read_upto {
            self.read_upto = upto;
            self.read_before(upto);
        }
    }

    /// The instant before which every source has handed over all it will record.
    fn upto(&self) -> u64 {
        self.low_water.values().copied().min().unwrap_or(u64::MAX)
    }

    fn read_before(&mut self, upto: u64) {
        // Only what is ready is sorted: sorting every waiting event at each read sorted
        // each one once per source while it waited. Both parts keep their order, so
        // the stable sort of the ready part reads as the whole one's prefix would.
        let mut ready = std::mem::take(&mut self.ready);
        self.pending.retain(|e| {
            let now = e.t_ns < upto;
            if now {
                ready.push(*e);
            }
            !now
        });
        if ready.is_empty() {
            self.ready = ready;
            return;
        }
        // Stable: one worker's events at one instant stay in the order it made them.
        ready.sort_by_key(Event::key);
        for e in &ready {
            self.read(e);
        }
        match &mut self.kept {
            Some(kept) => kept.append(&mut ready),
            None => ready.clear(),
        }
        self.ready = ready;
        self.passed.close_group(&self.claimed);
        self.passed.settle_ready(upto, &self.claimed);
        self.settle();
    }

    fn read(&mut self, e: &Event) {
        let job = e.job;
        match Ended::by(e.kind, e.worker) {
            Some(Some(m)) => {
                self.marks.insert(job, m);
            }
            // A release with no mark to clear (nearly every one) costs no lookup.
            Some(None) if !self.marks.is_empty() => {
                self.marks.remove(&job);
            }
            _ => {}
        }
        match e.kind {
            EventKind::Lost { .. } | EventKind::Completed { .. } => return,
            EventKind::Claim { .. } => return self.claim(e),
            // Anything else of a job held in the window: it is a live job from now on.
            _ => {
                if let Some(w) = self.held.take(job) {
                    self.live.insert(job, Live::held_by(&[w]));
                }
            }
        }
        match e.kind {
            EventKind::Lost { .. } | EventKind::Completed { .. } | EventKind::Claim { .. } => {
                return;
            }
            EventKind::Release if e.worker == RESCUER => {
                let Some(live) = self.live.get_mut(&job) else {
                    return;
                };
                live.holders.clear();
                if let Some((at, _)) = live.hang.as_mut().and_then(|h| h.stranded.take()) {
                    self.rescues
                        .saturating_record(((e.t_ns - at) / 1000).max(1));
                }
            }
            EventKind::Release => {
                let Some(live) = self.live.get_mut(&job) else {
                    return;
                };
                live.holders.retain(|w| *w != e.worker);
                if let Some(h) = &mut live.hang {
                    h.hung.retain(|w| *w != e.worker);
                    if h.stranded.is_some_and(|(_, w)| w == e.worker) {
                        h.stranded = None;
                    }
                }
            }
            EventKind::Strand { resumes } => {
                let hang = self.live.entry(job).or_default().hang();
                hang.stranded = Some((e.t_ns, e.worker));
                if resumes && !hang.hung.contains(&e.worker) {
                    hang.hung.push(e.worker);
                }
            }
            EventKind::Run(x) => {
                let live = self.live.entry(job).or_default();
                if let Some(h) = &mut live.hang {
                    h.hung.retain(|w| *w != e.worker);
                }
                live.runs.push(x);
            }
        }
        self.touched.push(job);
    }

    /// A claim: held now, so not settled by it (only a later release, run or stranding
    /// can end its liveness, and each of those marks it touched).
    fn claim(&mut self, e: &Event) {
        let job = e.job;
        let again = self.claimed.contains(job);
        if !again {
            // The group of an earlier instant is counted before this id joins.
            self.passed.first_claim(e.t_ns, job, &self.claimed);
            self.claimed.insert(job);
        }
        // A claim answers the mark, whether or not it is a redelivery.
        let ended = match self.marks.is_empty() {
            true => None,
            false => self.marks.remove(&job),
        };
        let by_another = match self.held.holder(job) {
            Some(w) if w == e.worker => false,
            Some(w) => {
                self.held.take(job);
                self.out.duplicate_claims += 1;
                self.live.insert(job, Live::held_by(&[w, e.worker]));
                true
            }
            None => {
                let mut by_another = false;
                if self.live.contains_key(&job) || !self.hold(job, e.worker) {
                    let live = self.live.entry(job).or_default();
                    by_another = live.holders.iter().any(|&w| w != e.worker);
                    self.out.duplicate_claims += u64::from(by_another);
                    if !live.holders.contains(&e.worker) {
                        live.holders.push(e.worker);
                    }
                }
                by_another
            }
        };
        if again {
            self.out.redelivered.count(ended, by_another);
        }
    }

    /// Holds `job` for `worker` in the window, moving the oldest jobs it gives up to
    /// make room into `live`; false when the job is for `live` itself.
    fn hold(&mut self, job: i64, worker: u32) -> bool {
        for (j, w) in self.held.make_room(job) {
            self.live.insert(j, Live::held_by(&[w]));
        }
        self.held.hold(job, worker)
    }

    /// Judges the runs of every job this read left settled, and forgets the job.
    fn settle(&mut self) {
        let jobs = self.live.len() as u64 + self.held.held();
        self.peak.jobs = self.peak.jobs.max(jobs);
        let mut touched = std::mem::take(&mut self.touched);
        for job in touched.drain(..) {
            // Looked up, and removed only when settled: most touched jobs are still held.
            if self.live.get(&job).is_some_and(Live::settled)
                && let Some(live) = self.live.remove(&job)
            {
                self.judge(job, live.runs);
            }
        }
        self.touched = touched;
    }

    fn judge(&mut self, job: i64, mut runs: Vec<Execution>) {
        if runs.is_empty() {
            return;
        }
        runs.sort_unstable_by_key(|x| (x.started_us, x.finished_us, x.worker));
        let b = bit(job);
        let ok = self.succeeded.contains(b);
        let dups = super::duplicate_runs(&runs, i64::MIN, ok, false);
        self.out.duplicate_executions += dups;
        // Runs in doubt are a few a trial: a job without one, now or before, is judged
        // once.
        let in_doubt = runs.iter().any(|x| x.in_doubt);
        let doubted_before = !self.doubted.is_empty() && self.doubted.contains(b);
        self.out.duplicate_executions_at_most += match in_doubt || doubted_before {
            false => dups,
            true => super::duplicate_runs(&runs, i64::MIN, ok || doubted_before, true),
        };
        let certain = runs.iter().filter(|x| !x.in_doubt);
        let (mut n, mut succeeded) = (0, false);
        for x in certain {
            n += 1;
            succeeded |= x.ok;
        }
        if n > 0 {
            self.executed.insert(b);
            self.out.executions += n;
        }
        if succeeded {
            self.succeeded.insert(b);
        }
        if in_doubt {
            self.doubted.insert(b);
        }
    }

    /// Reads everything left (every source has closed) and says what the trial did.
    pub fn finish(mut self) -> TallyFindings {
        self.read_before(u64::MAX);
        let live = std::mem::take(&mut self.live);
        let mut held = 0;
        for (job, l) in live {
            held += u64::from(!l.holders.is_empty());
            self.judge(job, l.runs);
        }
        self.out.held_at_end = held + self.held.held();
        self.out.distinct_claimed = self.claimed.len();
        self.out.distinct_executed = self.executed.len();
        TallyFindings {
            analysis: self.out,
            passed_over: self.passed.finish(&self.claimed),
            time_to_rescue: (!self.rescues.is_empty())
                .then(|| HistogramSummary::from_histogram(&self.rescues)),
            events: self.kept,
            peak: self.peak,
        }
    }
}

/// Older jobs passed over, counted as first claims are read.
#[derive(Debug, Default)]
struct Passed {
    /// First claims at the instant being read: all of one instant count as
    /// claimed before one another.
    group_t: u64,
    group: Vec<i64>,
    /// First claims whose count waits for older ids, in claim order: (claimed at, id,
    /// older ids claimed by then).
    waiting: VecDeque<(u64, i64, u64)>,
    /// The lowest id from [`FIRST_ID`] not claimed yet (`None`: not looked for yet);
    /// it only rises, as the claimed ids only grow.
    lowest_unclaimed: Option<i64>,
    /// How many first claims passed over each number of older jobs.
    counts: BTreeMap<u64, u64>,
}

impl Passed {
    fn first_claim(&mut self, t_ns: u64, job: i64, claimed: &ClaimedIds) {
        if t_ns != self.group_t {
            self.close_group(claimed);
            self.group_t = t_ns;
        }
        self.group.push(job);
    }

    /// The group's ids are in the bitmap: each one's older claimed ids are counted now.
    fn close_group(&mut self, claimed: &ClaimedIds) {
        for job in self.group.drain(..) {
            self.waiting
                .push_back((self.group_t, job, older_claimed(claimed, job)));
        }
    }

    /// Settles the first claims whose counts are final (every older id from
    /// [`FIRST_ID`] claimed) or must be taken as final ([`PASSED_OVER_WAIT_NS`] gone by,
    /// or [`PASSED_OVER_QUEUE`] waiting), as of `now_ns`.
    fn settle_ready(&mut self, now_ns: u64, claimed: &ClaimedIds) {
        let mut low = self.lowest_unclaimed.unwrap_or(FIRST_ID);
        while claimed.contains(low) {
            low += 1;
        }
        self.lowest_unclaimed = Some(low);
        while let Some(&(t, job, before)) = self.waiting.front() {
            let age = now_ns.saturating_sub(t);
            if !(job < low || age >= PASSED_OVER_WAIT_NS || self.waiting.len() > PASSED_OVER_QUEUE)
            {
                break;
            }
            self.waiting.pop_front();
            self.settle(job, before, claimed);
        }
    }

    fn settle(&mut self, job: i64, before: u64, claimed: &ClaimedIds) {
        // Below the lowest unclaimed id every older id from FIRST_ID is claimed, so the
        // count needs no rank (when no id below FIRST_ID was claimed): one of the two
        // ranks per first claim.
        let all_older = FIRST_ID <= job
            && self.lowest_unclaimed.is_some_and(|low| job < low)
            && claimed.min().is_some_and(|m| m >= FIRST_ID);
        let older = if all_older {
            (job - FIRST_ID) as u64
        } else {
            older_claimed(claimed, job)
        };
        debug_assert_eq!(older, older_claimed(claimed, job));
        let passed = older - before;
        *self.counts.entry(passed).or_default() += 1;
    }

    fn finish(mut self, claimed: &ClaimedIds) -> Option<PassedOver> {
        self.close_group(claimed);
        for (_, job, before) in std::mem::take(&mut self.waiting) {
            self.settle(job, before, claimed);
        }
        let n: u64 = self.counts.values().sum();
        if n == 0 {
            return None;
        }
        let sum: u64 = self.counts.iter().map(|(v, c)| v * c).sum();
        let p99_at = ((n - 1) as f64 * 0.99).round() as u64;
        let mut seen = 0;
        let p99 = self
            .counts
            .iter()
            .find(|&(_, c)| {
                seen += c;
                seen > p99_at
            })
            .map_or(0, |(v, _)| *v);
        Some(PassedOver {
            claims: n,
            mean: sum as f64 / n as f64,
            p99,
            max: self.counts.keys().next_back().copied().unwrap_or(0),
        })
    }
}

/// Claimed ids below `job`.
fn older_claimed(claimed: &ClaimedIds, job: i64) -> u64 {
    claimed.below(job)
}

#[cfg(test)]
mod tests {
    //! The tally against the whole-trial reading ([`super::super::MergedLedger`]) on
    //! generated histories: workers that claim (sometimes a job another holds), run,
    //! fail, hang, abandon; a rescuer that releases whatever it likes; every worker's
    //! events handed over in random chunks, the sources interleaved at random.
    use super::*;
    use crate::ledger::{MergedLedger, WorkerLedger};
    use rand::rngs::SmallRng;
    use rand::{Rng, SeedableRng};

    #[derive(Clone, Copy)]
    enum Phase {
        Idle,
        Claimed(i64),
        Running(i64, i64),
        Hung(i64, i64),
    }

    /// One history: each source's events in its own time order.
    fn history(seed: u64, workers: u32, jobs: i64, steps: usize) -> Vec<WorkerLedger> {
        let mut rng = SmallRng::seed_from_u64(seed);
        let mut ledgers: Vec<WorkerLedger> = (0..workers).map(WorkerLedger::new).collect();
        let mut rescuer = WorkerLedger::new(RESCUER);
        let mut phase = vec![Phase::Idle; workers as usize];
        let mut next = 1i64;
        let mut t = 1u64;
        for _ in 0..steps {
            // Whole µs (rescue times are recorded in µs), two events often at one.
            t += rng.gen_range(0..3) * 1000;
            let us = t as i64;
            let w = rng.gen_range(0..=workers) as usize;
            if w == workers as usize {
                if rng.gen_bool(0.3) {
                    rescuer.release(rng.gen_range(1..=jobs), t);
                }
                continue;
            }
            let l = &mut ledgers[w];
            phase[w] = match phase[w] {
                Phase::Idle => {
                    // Mostly the next job in id order; sometimes any (a duplicate, a
                    // retry, an older job passed over until now).
                    let job = if rng.gen_bool(0.7) && next <= jobs {
                        next += 1;
                        next - 1
                    } else {
                        rng.gen_range(1..=jobs)
                    };
                    l.claim(job, t, 1);
                    if rng.gen_bool(0.1) {
                        l.lost_races(t, 2);
                    }
                    Phase::Claimed(job)
                }
                Phase::Claimed(job) => match rng.gen_range(0..10) {
                    0 => {
                        l.release(job, t); // a refused start
                        Phase::Idle
                    }
                    1 => {
                        l.strand(job, t); // abandoned or crashed
                        Phase::Idle
                    }
                    _ => Phase::Running(job, us),
                },
                Phase::Running(job, started) if rng.gen_bool(0.1) => {
                    l.strand_hung(job, t);
                    Phase::Hung(job, started)
                }
                Phase::Running(job, started) if rng.gen_bool(0.05) => {
                    // The effect's write lost its connection: the run is in doubt,
                    // and the reconnect strands the job.
                    l.execute_in_doubt(job, t, (1, started, rng.gen_bool(0.8)));
                    l.strand(job, t);
                    Phase::Idle
                }
                Phase::Running(job, started) | Phase::Hung(job, started) => {
                    let ok = rng.gen_bool(0.8);
                    l.execute(job, t, (1, started, us, ok));
                    l.release(job, t);
                    if ok {
                        l.complete(job, t);
                    }
                    Phase::Idle
                }
            };
        }
        ledgers.push(rescuer);
        ledgers
    }

    /// The history handed over in random chunks (each marked with the time of the
    /// source's next event), sources interleaved at random, into `tally`, read at
    /// random points.
    fn stream(ledgers: &[WorkerLedger], seed: u64, tally: Tally) -> TallyFindings {
        streamed(ledgers, seed, tally, 0.6)
    }

    /// [`stream`], a `staged` share of the chunks staged and read with a later one.
    fn streamed(
        ledgers: &[WorkerLedger],
        seed: u64,
        mut tally: Tally,
        staged: f64,
    ) -> TallyFindings {
        let mut rng = SmallRng::seed_from_u64(seed ^ 0x5eed);
        let mut at: Vec<usize> = vec![0; ledgers.len()];
        loop {
            let open: Vec<usize> = (0..ledgers.len())
                .filter(|&i| at[i] <= ledgers[i].events.len())
                .collect();
            if open.is_empty() {
                break;
            }
            let i = open[rng.gen_range(0..open.len())];
            let events = &ledgers[i].events;
            let to = (at[i] + rng.gen_range(0..40)).min(events.len());
            let low_water_ns = events.get(to).map_or(u64::MAX, |e| e.t_ns);
            let chunk = Chunk {
                source: ledgers[i].worker,
                events: events[at[i]..to].to_vec(),
                low_water_ns,
            };
            // As the tally thread does, several chunks staged and read at once, or (as
            // a chunk's own reading does) each read as it comes.
            if rng.gen_bool(staged) {
                tally.stage(chunk);
            } else {
                tally.take(chunk);
            }
            // Past the end once the closing chunk (marked u64::MAX) has gone.
            at[i] = if to == events.len() && low_water_ns == u64::MAX {
                events.len() + 1
            } else {
                to
            };
        }
        tally.finish()
    }

    fn whole(ledgers: &[WorkerLedger]) -> (LedgerAnalysis, Option<PassedOver>, Vec<u64>) {
        let merged = MergedLedger::new(ledgers.to_vec());
        (
            merged.analyse(),
            merged.passed_over(),
            merged.rescue_times(),
        )
    }

    fn rescue_summary(times: &[u64]) -> Option<HistogramSummary> {
        let mut h = new_histogram();
        times
            .iter()
            .for_each(|ns| h.saturating_record((ns / 1000).max(1)));
        (!times.is_empty()).then(|| HistogramSummary::from_histogram(&h))
    }

    #[test]
    fn the_tally_reads_every_generated_history_as_the_whole_trial_does() {
        let mut duplicates = (0, 0, 0, 0);
        let mut doubt = 0;
        for seed in 0..400 {
            let ledgers = history(seed, 1 + (seed % 5) as u32, 60, 600);
            let (analysis, passed, rescues) = whole(&ledgers);
            let sources = ledgers.iter().map(|l| l.worker);
            let got = stream(&ledgers, seed, Tally::new(sources, false));
            assert_eq!(got.analysis, analysis, "seed {seed}");
            assert_eq!(got.passed_over, passed, "seed {seed}");
            assert_eq!(got.time_to_rescue, rescue_summary(&rescues), "seed {seed}");
            duplicates.0 += analysis.duplicate_claims;
            duplicates.1 += analysis.duplicate_executions;
            duplicates.2 += analysis.held_at_end;
            duplicates.3 += rescues.len();
            doubt += analysis.duplicate_executions_at_most - analysis.duplicate_executions;
        }
        assert!(
            doubt > 100,
            "runs in doubt make {doubt} possible duplicates"
        );
        // The histories exercise what the rules are about.
        let (claims, runs, held, rescued) = duplicates;
        assert!(
            claims > 100 && runs > 100 && held > 100 && rescued > 100,
            "{duplicates:?}"
        );
    }

    /// The same with a window of held jobs a few ids wide: most jobs are held below it
    /// or given up by it to the map of live jobs, and the counts do not change.
    /// A redelivery is counted by what ended the job's last holding, the same by the
    /// tally and by the whole trial: its holder's release, the rescuer's, a stranding
    /// or a hang with no rescue after it, or nothing (another worker still held it).
    #[test]
    fn redeliveries_are_counted_by_what_ended_the_last_holding() {
        let (mut a, mut b, mut rescuer) = (
            WorkerLedger::new(0),
            WorkerLedger::new(1),
            WorkerLedger::new(RESCUER),
        );
        let ms = |n: u64| n * 1_000_000;
        // Job 1: released by its holder (a failed attempt), claimed again.
        a.claim(1, ms(1), 0);
        a.release(1, ms(2));
        b.claim(1, ms(3), 1);
        b.release(1, ms(4));
        // Job 2: stranded (a crash), rescued, claimed again: the rescue is what ended it.
        a.claim(2, ms(5), 0);
        a.strand(2, ms(6));
        rescuer.release(2, ms(7));
        b.claim(2, ms(8), 1);
        b.release(2, ms(9));
        // Job 3: stranded with no rescue (a closed connection's delivery handed back).
        a.claim(3, ms(10), 0);
        a.strand(3, ms(11));
        b.claim(3, ms(12), 0);
        b.release(3, ms(13));
        // Job 4: hung, handed out again while hung (an expired AckWait).
        a.claim(4, ms(14), 0);
        a.strand_hung(4, ms(15));
        b.claim(4, ms(16), 1);
        b.release(4, ms(17));
        a.release(4, ms(18));
        // Job 5: claimed by another while held, nothing ended it (a race).
        a.claim(5, ms(19), 0);
        b.claim(5, ms(20), 0);
        a.release(5, ms(21));
        b.release(5, ms(22));
        // Job 6: claimed once.
        a.claim(6, ms(23), 0);
        a.release(6, ms(24));
        let ledgers = vec![a, b, rescuer];
        let want = crate::ledger::Redeliveries {
            released: 1,
            rescued: 1,
            stranded: 1,
            hung: 1,
            while_held: 1,
        };
        let (whole, ..) = whole(&ledgers);
        assert_eq!(whole.redelivered, want);
        assert_eq!(whole.redelivered.total(), 5);
        for seed in 0..8 {
            let streamed = stream(&ledgers, seed, Tally::new([0, 1, RESCUER], false));
            assert_eq!(streamed.analysis.redelivered, want, "seed {seed}");
        }
    }

    #[test]
    fn a_narrow_window_of_held_jobs_reads_as_the_whole_trial_does() {
        for seed in 0..200 {
            let ledgers = history(seed, 1 + (seed % 5) as u32, 60, 600);
            let (analysis, passed, _) = whole(&ledgers);
            let sources = ledgers.iter().map(|l| l.worker);
            let tally = Tally::new(sources, false).with_window_cap(1 + (seed % 4) as usize);
            let got = stream(&ledgers, seed, tally);
            assert_eq!(got.analysis, analysis, "seed {seed}");
            assert_eq!(got.passed_over, passed, "seed {seed}");
        }
    }

    #[test]
    fn a_lower_id_first_claimed_seconds_later_is_still_counted() {
        // Worker 0 claims jobs 2..=400, one per 10 ms; worker 1, slow to start, claims
        // job 1 only at 5 s. Each of worker 0's claims before then passed job 1 over,
        // although no claim had gone below job 2 in the seconds before.
        let ms = 1_000_000;
        let mut fast = WorkerLedger::new(0);
        for j in 2..=400i64 {
            fast.claim(j, j as u64 * 10 * ms, 1);
        }
        let mut slow = WorkerLedger::new(1);
        slow.claim(1, 5_000 * ms, 1);
        let ledgers = [fast, slow];
        let (_, whole_passed, _) = whole(&ledgers);
        let w = whole_passed.unwrap();
        // Jobs 2..=400 claimed at 20..4000 ms: all 399 before job 1.
        assert_eq!((w.claims, w.max), (400, 1));
        assert!((w.mean - 399.0 / 400.0).abs() < 1e-9, "{w:?}");
        for seed in 0..20 {
            let got = stream(&ledgers, seed, Tally::new([0, 1], false));
            assert_eq!(got.passed_over, Some(w), "seed {seed}");
        }
    }

    #[test]
    fn a_job_passed_over_longer_than_the_wait_is_taken_as_never_claimed() {
        // Job 1, then jobs 3.. one per ms for three minutes; job 2 only then.
        let ms = 1_000_000;
        let n = 180_000i64;
        let mut l = WorkerLedger::new(0);
        for j in std::iter::once(1).chain(3..n + 3) {
            let t = j as u64 * ms;
            l.claim(j, t, 1);
            l.execute(j, t + 1, (1, t as i64, t as i64 + 1, true));
            l.release(j, t + 1);
        }
        l.claim(2, (n as u64 + 3) * ms, 1);
        let ledgers = [l];
        let (analysis, whole_passed, _) = whole(&ledgers);
        // Each chunk read as it comes: how long a job waited is judged at the reads,
        // so staged chunks would stretch it by up to their span.
        let got = streamed(&ledgers, 7, Tally::new([0], false), 0.0);
        assert_eq!(got.analysis, analysis);
        // The whole trial: every job after it passed over job 2.
        let w = whole_passed.unwrap();
        assert_eq!((w.claims, w.max), (n as u64 + 2, 1));
        assert!((w.mean * (n + 2) as f64 - n as f64).abs() < 1e-6, "{w:?}");
        // The tally: only the last minute's claims were still waiting when it came.
        let waited = (PASSED_OVER_WAIT_NS / ms) as f64;
        let p = got.passed_over.unwrap();
        assert_eq!((p.claims, p.max), (n as u64 + 2, 1));
        assert!((p.mean * (n + 2) as f64 - waited).abs() <= 2.0, "{p:?}");
        // And what it held stayed small: the jobs of one chunk (at most 40 events).
        assert!(got.peak.jobs <= 20 && got.peak.events <= 40, "{got:?}");
    }
}
