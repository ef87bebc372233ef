//! The whole trial's events at once, sorted by job: what the findings that look back
//! over the trial read (a failover's lost work, capped queues' holds, shard moves), and
//! what the streaming [`super::Tally`] is checked against.

use super::{
    Ended, Event, EventKind, Execution, LedgerAnalysis, PassedOver, RESCUER, Redeliveries,
    WorkerLedger,
};
use std::collections::HashMap;

/// Every worker's recording, merged once at the end of a trial.
pub struct MergedLedger {
    /// Strandings, claims and releases, by (job, time, kind, worker).
    events: Vec<Event>,
    /// Handler runs, by (job, start, finish, worker).
    executions: Vec<Execution>,
    /// Handler runs whose effect is in doubt, by (job, start, worker): none of the
    /// findings reads them, only the most duplicates the effects may count.
    doubted: Vec<Execution>,
    /// Acknowledged completions, (job, start µs).
    completed: Vec<(i64, i64)>,
    /// Lost races, by time, one entry per race.
    lost: Vec<u64>,
}

impl MergedLedger {
    /// Reads ledgers that kept their events (made with [`WorkerLedger::new`]).
    pub fn new(ledgers: impl IntoIterator<Item = WorkerLedger>) -> MergedLedger {
        MergedLedger::from_events(
            ledgers
                .into_iter()
                .flat_map(|mut l| std::mem::take(&mut l.events)),
        )
    }

    pub fn from_events(all: impl IntoIterator<Item = Event>) -> MergedLedger {
        let mut events = Vec::new();
        let mut executions = Vec::new();
        let mut doubted = Vec::new();
        let mut completed = Vec::new();
        let mut lost = Vec::new();
        for e in all {
            match e.kind {
                EventKind::Run(x) if x.in_doubt => doubted.push(x),
                EventKind::Run(x) => executions.push(x),
                EventKind::Completed { started_us } => completed.push((e.job, started_us)),
                EventKind::Lost { n } => lost.extend(std::iter::repeat_n(e.t_ns, n as usize)),
                EventKind::Strand { .. } | EventKind::Release | EventKind::Claim { .. } => {
                    events.push(e)
                }
            }
        }
        lost.sort_unstable();
        events.sort_unstable_by_key(|e| (e.job, e.t_ns, e.kind.rank(), e.worker));
        executions.sort_unstable_by_key(|x| (x.job, x.started_us, x.finished_us, x.worker));
        doubted.sort_unstable_by_key(|x| (x.job, x.started_us, x.worker));
        MergedLedger {
            events,
            executions,
            doubted,
            completed,
            lost,
        }
    }

    /// When each lost race happened (ns since the start), earliest first.
    pub fn lost_race_times(&self) -> &[u64] {
        &self.lost
    }

    /// (job, start µs) of every handler run whose effect the database acknowledged.
    pub fn acknowledged_effects(&self) -> Vec<(i64, i64)> {
        self.executions
            .iter()
            .map(|x| (x.job, x.started_us))
            .collect()
    }

    /// (job, start µs) of every completion the database acknowledged.
    pub fn acknowledged_completions(&self) -> &[(i64, i64)] {
        &self.completed
    }

    /// Whether `job` ran (again) after `server_us` on the database's clock.
    pub fn ran_after(&self, job: i64, server_us: i64) -> bool {
        let from = self.executions.partition_point(|x| x.job < job);
        self.executions[from..]
            .iter()
            .take_while(|x| x.job == job)
            .any(|x| x.started_us > server_us)
    }

    /// Claims after `from_ns` of a job another worker had claimed before `to_ns` and
    /// not released: the job came back to pending under a worker that still believed
    /// it owned it. Around a failover that began at `from_ns` and whose new primary
    /// was known to take writes by `to_ns`, this is a claim the workers saw committed
    /// and the new primary did not have: the old primary kept committing after the
    /// fault began (its link cut first) and the new one may take writes before the
    /// promotion is reported, so the span between is the failover's own. A rescue
    /// releases a stranded holder first, so a job it returned is not counted.
    pub fn claims_retaken(&self, (from_ns, to_ns): (u64, u64)) -> u64 {
        let mut out = 0;
        // (worker, claimed at)
        let mut holders: Vec<(u32, u64)> = Vec::new();
        for job_events in self.events.chunk_by(|a, b| a.job == b.job) {
            holders.clear();
            for e in job_events {
                match e.kind {
                    EventKind::Claim { .. } => {
                        if e.t_ns > from_ns
                            && holders.iter().any(|&(w, at)| w != e.worker && at < to_ns)
                        {
                            out += 1;
                        }
                        holders.push((e.worker, e.t_ns));
                    }
                    EventKind::Release if e.worker == RESCUER => holders.clear(),
                    EventKind::Release => holders.retain(|&(w, _)| w != e.worker),
                    _ => {}
                }
            }
        }
        out
    }

    /// Time to rescue, ns, per rescued stranding: from the fault that stranded a job to
    /// the rescuer's release of it. A stranding is answered by the next release of the
    /// job by the rescuer (a rescue) or by the stranded worker itself (a hang that ended
    /// before the lease did); the latest unanswered one counts. Rescues of jobs no fault
    /// stranded (a live handler past its lease) and strandings the trial ended before
    /// rescuing are not in it.
    pub fn rescue_times(&self) -> Vec<u64> {
        let mut out = Vec::new();
        for job_events in self.events.chunk_by(|a, b| a.job == b.job) {
            // (stranded at, by worker), unanswered
            let mut stranded: Option<(u64, u32)> = None;
            for e in job_events {
                match e.kind {
                    EventKind::Strand { .. } => stranded = Some((e.t_ns, e.worker)),
                    EventKind::Release if e.worker == RESCUER => {
                        if let Some((t, _)) = stranded.take() {
                            out.push(e.t_ns - t);
                        }
                    }
                    EventKind::Release if stranded.is_some_and(|(_, w)| w == e.worker) => {
                        stranded = None
                    }
                    _ => {}
                }
            }
        }
        out
    }

    /// Older jobs each first claim passed over ([`PassedOver`]); `None` without claims.
    /// O(n log n): a Fenwick tree over the ids' ranks, walked from the last claim back.
    pub fn passed_over(&self) -> Option<PassedOver> {
        // (claimed at, job) of each job's first claim; events are by (job, time).
        let mut firsts: Vec<(u64, i64)> = self
            .events
            .chunk_by(|a, b| a.job == b.job)
            .filter_map(|evs| {
                evs.iter()
                    .find(|e| matches!(e.kind, EventKind::Claim { .. }))
                    .map(|e| (e.t_ns, e.job))
            })
            .collect();
        if firsts.is_empty() {
            return None;
        }
        // Jobs are unique and already in id order: a job's rank is its position.
        let ids: Vec<i64> = firsts.iter().map(|&(_, j)| j).collect();
        firsts.sort_unstable();
        let mut tree = vec![0u32; ids.len() + 1];
        let mut passed: Vec<u64> = Vec::with_capacity(ids.len());
        for &(_, job) in firsts.iter().rev() {
            let rank = ids.partition_point(|&j| j < job);
            // Later first claims of smaller ids: the Fenwick prefix sum below `rank`.
            let (mut i, mut n) = (rank, 0u64);
            while i > 0 {
                n += u64::from(tree[i]);
                i &= i - 1;
            }
            passed.push(n);
            let mut i = rank + 1;
            while i < tree.len() {
                tree[i] += 1;
                i += i & i.wrapping_neg();
            }
        }
        passed.sort_unstable();
        let at = |q: f64| passed[((passed.len() - 1) as f64 * q).round() as usize];
        Some(PassedOver {
            claims: passed.len() as u64,
            mean: passed.iter().sum::<u64>() as f64 / passed.len() as f64,
            p99: at(0.99),
            max: *passed.last().unwrap_or(&0),
        })
    }

    /// When each duplicate claim returned (ns since the start), earliest first: the
    /// claims [`MergedLedger::analyse`] counts as `duplicate_claims`.
    pub fn duplicate_claim_times(&self) -> Vec<u64> {
        let mut at = Vec::new();
        self.walk_claims(|e| at.push(e.t_ns));
        at.sort_unstable();
        at
    }

    /// Walks every job's claims, releases and strandings, calling `duplicate` for each
    /// claim of a job another worker held; returns (jobs claimed, jobs still held at
    /// the end, the claims of jobs claimed before by what ended their last holding).
    fn walk_claims(&self, mut duplicate: impl FnMut(&Event)) -> (u64, u64, Redeliveries) {
        let (mut distinct, mut held) = (0, 0);
        let mut again = Redeliveries::default();
        let mut holders: Vec<u32> = Vec::new();
        for job_events in self.events.chunk_by(|a, b| a.job == b.job) {
            holders.clear();
            let mut claimed = false;
            let mut mark = None;
            for e in job_events {
                if let Some(m) = Ended::by(e.kind, e.worker) {
                    mark = m;
                }
                match e.kind {
                    EventKind::Claim { .. } => {
                        let by_another = holders.iter().any(|&w| w != e.worker);
                        // A claim answers the mark, whether or not it is a redelivery.
                        let ended = mark.take();
                        if claimed {
                            again.count(ended, by_another);
                        }
                        claimed = true;
                        if by_another {
                            duplicate(e);
                        }
                        if !holders.contains(&e.worker) {
                            holders.push(e.worker);
                        }
                    }
                    EventKind::Release if e.worker == RESCUER => holders.clear(),
                    EventKind::Release => holders.retain(|&w| w != e.worker),
                    _ => {}
                }
            }
            distinct += claimed as u64;
            held += !holders.is_empty() as u64;
        }
        (distinct, held, again)
    }

    /// The duplicate executions without the runs named (job, start µs): where a failover
    /// lost those runs' effects, the fewest the effects may count.
    pub fn duplicate_executions_without(&self, lost: &[(i64, i64)]) -> u64 {
        let lost: std::collections::HashSet<(i64, i64)> = lost.iter().copied().collect();
        self.executions
            .chunk_by(|a, b| a.job == b.job)
            .map(|runs| {
                let kept: Vec<Execution> = runs
                    .iter()
                    .filter(|x| !lost.contains(&(x.job, x.started_us)))
                    .copied()
                    .collect();
                super::duplicate_runs(&kept, i64::MIN, false, false)
            })
            .sum()
    }

    /// Duplicate claims and executions. O(n) after the sort in `new`.
    pub fn analyse(&self) -> LedgerAnalysis {
        let mut out = LedgerAnalysis::default();
        let mut duplicates = 0;
        (out.distinct_claimed, out.held_at_end, out.redelivered) =
            self.walk_claims(|_| duplicates += 1);
        out.duplicate_claims = duplicates;
        for runs in self.executions.chunk_by(|a, b| a.job == b.job) {
            out.distinct_executed += 1;
            out.executions += runs.len() as u64;
            out.duplicate_executions += super::duplicate_runs(runs, i64::MIN, false, false);
        }
        out.duplicate_executions_at_most = out.duplicate_executions;
        if !self.doubted.is_empty() {
            let mut all: Vec<Execution> = self.executions.clone();
            all.extend_from_slice(&self.doubted);
            all.sort_unstable_by_key(|x| (x.job, x.started_us, x.finished_us, x.worker));
            out.duplicate_executions_at_most = all
                .chunk_by(|a, b| a.job == b.job)
                .map(|runs| super::duplicate_runs(runs, i64::MIN, false, true))
                .sum();
        }
        out
    }

    /// The exact max-workers evidence per queue, from claim and release instants: the
    /// most jobs of the queue held at once, and how long more than `limits[q]` were
    /// held. `queue_of` maps a job to its queue's index (jobs of other queues absent).
    /// A claim is stamped when its call returned and a release when its call began, so
    /// both figures are lower bounds.
    pub fn holds(&self, queue_of: &HashMap<i64, usize>, limits: &[i64]) -> Vec<QueueHold> {
        // (time, +1 a job becomes held / -1 it is no longer held, queue)
        let mut steps: Vec<(u64, i8, usize)> = Vec::new();
        let mut holders: Vec<u32> = Vec::new();
        for job_events in self.events.chunk_by(|a, b| a.job == b.job) {
            let Some(&q) = queue_of.get(&job_events[0].job) else {
                continue;
            };
            holders.clear();
            for e in job_events {
                let was_held = !holders.is_empty();
                match e.kind {
                    EventKind::Claim { .. } if !holders.contains(&e.worker) => {
                        holders.push(e.worker)
                    }
                    EventKind::Claim { .. } => {}
                    EventKind::Release if e.worker == RESCUER => holders.clear(),
                    EventKind::Release => holders.retain(|&w| w != e.worker),
                    _ => {}
                }
                match (was_held, !holders.is_empty()) {
                    (false, true) => steps.push((e.t_ns, 1, q)),
                    (true, false) => steps.push((e.t_ns, -1, q)),
                    _ => {}
                }
            }
        }
        // Releases before claims at the same instant: a hand-over is not an overlap.
        steps.sort_unstable_by_key(|&(t, d, _)| (t, d));
        let mut out = vec![QueueHold::default(); limits.len()];
        let mut held = vec![0i64; limits.len()];
        let mut above_since: Vec<Option<u64>> = vec![None; limits.len()];
        for (t, d, q) in steps {
            held[q] += i64::from(d);
            out[q].max_held = out[q].max_held.max(held[q]);
            match (above_since[q], held[q] > limits[q]) {
                (None, true) => above_since[q] = Some(t),
                (Some(since), false) => {
                    out[q].ns_above_limit += t - since;
                    above_since[q] = None;
                }
                _ => {}
            }
        }
        out
    }
}

/// The exact max-workers figures of one capped queue.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct QueueHold {
    pub max_held: i64,
    pub ns_above_limit: u64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ledger::analyse;

    #[test]
    fn passed_over_counts_older_jobs_first_claimed_later() {
        // Claimed in the order 3, 1, 2, 5, 4 (job 1 claimed again later: not counted).
        let ledgers = [
            ledger(0, |l| {
                l.claim(3, 10, 0);
                l.claim(2, 30, 0);
                l.claim(1, 90, 1);
            }),
            ledger(1, |l| {
                l.claim(1, 20, 0);
                l.claim(5, 40, 0);
                l.claim(4, 50, 0);
            }),
        ];
        let p = MergedLedger::new(ledgers).passed_over().unwrap();
        // 3 passed over 1 and 2; 5 passed over 4; the rest none.
        assert_eq!((p.claims, p.max, p.p99), (5, 2, 2));
        assert!((p.mean - 3.0 / 5.0).abs() < 1e-9, "{p:?}");
        let in_order = [ledger(0, |l| {
            (1..=100).for_each(|j| l.claim(j, j as u64, 0))
        })];
        let p = MergedLedger::new(in_order).passed_over().unwrap();
        assert_eq!((p.claims, p.max), (100, 0));
        assert!(
            MergedLedger::new([ledger(0, |_| {})])
                .passed_over()
                .is_none()
        );
    }

    #[test]
    fn a_claim_lost_at_a_failover_is_retaken_while_its_holder_still_holds_it() {
        let t = 1_000;
        let ledgers = [
            // Worker 0 claimed jobs 1 and 2 before the failover and never released them
            // (its connection died); job 2 the rescuer returned first.
            ledger(0, |l| {
                l.claim(1, 500, 1);
                l.claim(2, 600, 1);
                l.claim(3, 700, 1);
                l.release(3, 800);
            }),
            ledger(RESCUER, |l| l.release(2, 1_500)),
            // Worker 1 takes all three after it.
            ledger(1, |l| {
                l.claim(1, 1_200, 1);
                l.claim(2, 1_600, 2);
                l.claim(3, 1_700, 2);
            }),
        ];
        let merged = MergedLedger::new(ledgers);
        // Only job 1: job 2 was rescued, job 3 released.
        assert_eq!(merged.claims_retaken((t, t)), 1);
        // A holder's claim during the failover (after it began, before the promotion
        // was reported) was made on the old primary too.
        assert_eq!(merged.claims_retaken((400, 1_100)), 1);
        // Before anything was claimed: nothing was held across it.
        assert_eq!(merged.claims_retaken((0, 0)), 0);
    }

    #[test]
    fn a_completion_is_named_by_the_run_it_completed() {
        let mut l = WorkerLedger::new(0);
        l.execute(7, 0, (1, 100, 150, false));
        l.execute(7, 0, (2, 200, 250, true));
        l.execute(8, 0, (1, 300, 350, true));
        l.complete(7, 0);
        l.complete(9, 0); // no run of it: nothing to name
        let merged = MergedLedger::new([l]);
        assert_eq!(merged.acknowledged_completions(), &[(7, 200)]);
        assert_eq!(merged.acknowledged_effects().len(), 3);
        assert!(merged.ran_after(7, 150));
        assert!(!merged.ran_after(7, 200));
        assert!(!merged.ran_after(9, 0));
    }

    fn ledger(worker: u32, f: impl FnOnce(&mut WorkerLedger)) -> WorkerLedger {
        let mut l = WorkerLedger::new(worker);
        f(&mut l);
        l
    }

    #[test]
    fn hand_over_after_release_is_not_a_duplicate() {
        let a = ledger(0, |l| {
            l.claim(1, 10, 0);
            l.release(1, 20);
        });
        let b = ledger(1, |l| l.claim(1, 30, 1));
        let r = analyse([a, b]);
        assert_eq!(r.duplicate_claims, 0);
        assert_eq!(r.distinct_claimed, 1);
        assert_eq!(r.held_at_end, 1);
    }

    #[test]
    fn rescue_time_runs_from_the_latest_stranding_to_the_rescuers_release() {
        let a = ledger(0, |l| {
            l.claim(1, 10, 0);
            l.strand(1, 20);
            l.claim(2, 10, 0);
            l.strand(2, 15);
            l.claim(3, 10, 0); // rescued with no stranding: a live handler past its lease
        });
        let b = ledger(1, |l| {
            l.claim(1, 200, 1);
            l.strand(1, 250);
            l.claim(4, 10, 0);
            l.strand(4, 30); // never rescued
        });
        let rescuer = ledger(RESCUER, |l| {
            l.release(1, 120);
            l.release(2, 115);
            l.release(3, 100);
            l.release(1, 400);
        });
        let mut times = MergedLedger::new([a, b, rescuer]).rescue_times();
        times.sort_unstable();
        assert_eq!(times, vec![100, 100, 150]);
    }

    #[test]
    fn claim_while_another_worker_holds_is_a_duplicate() {
        let a = ledger(0, |l| {
            l.claim(1, 10, 0);
            l.execute(1, 11, (0, 100, 150, true));
            l.release(1, 40);
        });
        let b = ledger(1, |l| {
            l.claim(1, 20, 0);
            l.execute(1, 21, (0, 120, 160, true));
            l.release(1, 50);
        });
        let r = analyse([a, b]);
        assert_eq!(r.duplicate_claims, 1);
        assert_eq!(r.duplicate_executions, 1);
        assert_eq!(r.distinct_executed, 1);
        assert_eq!(r.executions, 2);
        assert_eq!(r.held_at_end, 0);
    }

    #[test]
    fn a_retry_after_a_failed_run_is_no_duplicate_but_a_rerun_after_success_is() {
        let a = ledger(0, |l| {
            l.claim(7, 10, 0);
            l.execute(7, 11, (0, 100, 110, false));
            l.release(7, 20);
        });
        let b = ledger(1, |l| {
            l.claim(7, 30, 1);
            l.execute(7, 31, (1, 200, 210, true));
            l.release(7, 40);
        });
        let r = analyse([a.clone(), b.clone()]);
        assert_eq!(r.duplicate_executions, 0, "a legitimate retry");
        // A lease that expired while the handler ran: rescued, claimed and run again as
        // attempt 1 after the first run had succeeded. No duplicate claim (the rescue
        // released the job), but a duplicate execution, whatever the attempt numbers.
        let a = ledger(0, |l| {
            l.claim(7, 10, 0);
            l.execute(7, 11, (0, 100, 190, true));
        });
        let rescuer = ledger(RESCUER, |l| l.release(7, 25));
        let r = analyse([a, rescuer, b]);
        assert_eq!(r.duplicate_claims, 0);
        assert_eq!(r.duplicate_executions, 1);
    }

    /// Job 7 run again from 30 ns on: a run that fails (started 200 µs), then its retry
    /// (300 µs), which succeeds.
    fn failed_then_retried(l: &mut WorkerLedger) {
        l.claim(7, 30, 1);
        l.execute(7, 31, (1, 200, 210, false));
        l.release(7, 32);
        l.claim(7, 40, 2);
        l.execute(7, 41, (2, 300, 310, true));
        l.release(7, 42);
    }

    /// A clean-clone CI run's JetStream trial (a server restart, connections cut): one
    /// run's effect was written and its reply died; the job ran again, failed, and its
    /// retry ran. The effects count two duplicates where the ledger counts none, and
    /// the bound the ledger gives them is two, not the one run in doubt.
    #[test]
    fn a_run_in_doubt_bounds_every_later_run_of_its_job() {
        let a = ledger(0, |l| {
            l.claim(7, 10, 0);
            l.execute_in_doubt(7, 12, (0, 100, true));
            l.strand(7, 12);
        });
        let b = ledger(1, failed_then_retried);
        let r = analyse([a, b]);
        assert_eq!((r.executions, r.distinct_executed), (2, 1));
        assert_eq!(r.duplicate_executions, 0);
        assert_eq!(r.duplicate_executions_at_most, 2);
    }

    /// The other side of the bound: a failover lost the effect of a run that succeeded,
    /// and the job ran twice more. To the ledger both later runs are duplicates; to the
    /// effects, which never saw the first, the second is the job's first run and the
    /// third its one duplicate.
    #[test]
    fn runs_whose_effects_a_failover_lost_lower_the_bound() {
        let a = ledger(0, |l| {
            l.claim(7, 10, 0);
            l.execute(7, 11, (0, 100, 150, true));
            l.release(7, 12);
            failed_then_retried(l);
        });
        let m = MergedLedger::new([a]);
        assert_eq!(m.analyse().duplicate_executions, 2);
        assert_eq!(m.duplicate_executions_without(&[(7, 100)]), 0);
        assert_eq!(m.duplicate_executions_without(&[(7, 300)]), 1);
        assert_eq!(m.duplicate_executions_without(&[]), 2);
    }

    #[test]
    fn overlapping_runs_are_duplicates_even_when_the_first_failed() {
        let a = ledger(0, |l| {
            l.claim(3, 10, 0);
            l.execute(3, 11, (0, 100, 300, false));
        });
        let b = ledger(1, |l| {
            l.claim(3, 20, 1);
            l.execute(3, 21, (1, 200, 250, true));
        });
        assert_eq!(analyse([a, b]).duplicate_executions, 1);
    }

    #[test]
    fn rescue_ends_every_claim() {
        let a = ledger(0, |l| l.claim(7, 10, 0));
        let rescuer = ledger(RESCUER, |l| l.release(7, 100));
        let b = ledger(1, |l| {
            l.claim(7, 110, 1);
            l.execute(7, 111, (1, 120, 125, true));
            l.release(7, 130);
        });
        let r = analyse([a, rescuer, b]);
        assert_eq!(r.duplicate_claims, 0);
        assert_eq!(r.duplicate_executions, 0);
        assert_eq!(r.executions, 1);
        assert_eq!(r.held_at_end, 0);
    }

    #[test]
    fn same_instant_release_and_claim_hand_over() {
        let a = ledger(0, |l| {
            l.claim(3, 1, 0);
            l.release(3, 5);
        });
        let b = ledger(1, |l| l.claim(3, 5, 0));
        assert_eq!(analyse([a, b]).duplicate_claims, 0);
    }

    #[test]
    fn holds_count_jobs_held_at_once_and_time_above_the_limit() {
        // Queue 0, limit 2: jobs 1, 2, 3 held over [10, 50), [20, 60), [30, 40).
        let a = ledger(0, |l| {
            l.claim(1, 10, 0);
            l.release(1, 50);
            l.claim(3, 30, 0);
            l.release(3, 40);
        });
        let b = ledger(1, |l| {
            l.claim(2, 20, 0);
            // A job of another queue (absent from `queue_of`) does not count.
            l.claim(9, 0, 0);
            l.release(2, 60);
        });
        let c = ledger(2, |l| {
            // Job 2 held by two workers at once (a duplicate claim) is one job held.
            l.claim(2, 25, 0);
            l.release(2, 55);
        });
        let queue_of = HashMap::from([(1, 0), (2, 0), (3, 0)]);
        let merged = MergedLedger::new([a, b, c]);
        let holds = merged.holds(&queue_of, &[2]);
        assert_eq!(
            holds,
            [QueueHold {
                max_held: 3,
                ns_above_limit: 10
            }]
        );
        // A rescue releases every holder; a release and a claim at one instant hand over.
        let a = ledger(0, |l| {
            l.claim(1, 10, 0);
            l.release(1, 20);
        });
        let b = ledger(1, |l| l.claim(4, 20, 0));
        let r = ledger(RESCUER, |l| l.release(4, 30));
        let merged = MergedLedger::new([a, b, r]);
        let holds = merged.holds(&HashMap::from([(1, 0), (4, 0)]), &[1]);
        assert_eq!(holds[0].max_held, 1);
        assert_eq!(holds[0].ns_above_limit, 0);
    }
}
