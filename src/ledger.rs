//! The claim ledger: which job went to which worker and when, recorded by each worker
//! into its own slice and analysed once at the end of a trial.
//!
//! Timestamps are chosen so that the analysis never reports a duplicate that did not
//! happen: a claim is stamped when the claim call *returned* (after the database made it),
//! a release when the releasing call *began* (before the database undid ownership). So a
//! legitimate hand-over (release committed, then claimed) always orders release < claim;
//! a claim stamped before the previous holder's release means both workers held the job
//! at that moment. Overlaps that end inside a call's round trip are not counted, so the
//! duplicate-claim count is a lower bound, never an over-count.

use serde::{Deserialize, Serialize};

/// The worker number used for the rescuer's releases.
pub const RESCUER: u32 = u32::MAX;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum EventKind {
    /// Ownership ends (complete, fail, refused start, stop-time release, rescue).
    /// Ordered first so that a release and a claim at the same nanosecond hand over.
    Release,
    /// The worker now believes it owns the job; `attempt` from the claim.
    Claim { attempt: i32 },
    /// The handler ran and wrote its effect for `attempt`.
    Execute { attempt: i32 },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Event {
    pub job: i64,
    /// Nanoseconds since the trial's start instant.
    pub t_ns: u64,
    pub worker: u32,
    pub kind: EventKind,
}

/// One worker's (or the rescuer's) events. Appending is the only hot-path operation.
#[derive(Debug, Default, Clone)]
pub struct WorkerLedger {
    worker: u32,
    events: Vec<Event>,
}

impl WorkerLedger {
    pub fn new(worker: u32) -> WorkerLedger {
        WorkerLedger {
            worker,
            events: Vec::with_capacity(4096),
        }
    }

    fn push(&mut self, job: i64, t_ns: u64, kind: EventKind) {
        self.events.push(Event {
            job,
            t_ns,
            worker: self.worker,
            kind,
        });
    }

    pub fn claim(&mut self, job: i64, t_ns: u64, attempt: i32) {
        self.push(job, t_ns, EventKind::Claim { attempt });
    }

    pub fn execute(&mut self, job: i64, t_ns: u64, attempt: i32) {
        self.push(job, t_ns, EventKind::Execute { attempt });
    }

    pub fn release(&mut self, job: i64, t_ns: u64) {
        self.push(job, t_ns, EventKind::Release);
    }
}

/// What the merged ledger says about a trial.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LedgerAnalysis {
    pub distinct_claimed: u64,
    /// Claims that handed a worker a job another worker still held.
    pub duplicate_claims: u64,
    pub distinct_executed: u64,
    pub executions: u64,
    /// Executions beyond the first for the same job and attempt.
    pub duplicate_executions: u64,
    /// Jobs still held by some worker when the trial ended (claim-only mode and
    /// abandoned claims leave these; anything else is a harness defect).
    pub held_at_end: u64,
}

/// Merges every worker's events and counts duplicates. O(n log n) in events.
pub fn analyse(ledgers: impl IntoIterator<Item = WorkerLedger>) -> LedgerAnalysis {
    let mut events: Vec<Event> = ledgers.into_iter().flat_map(|l| l.events).collect();
    events.sort_unstable_by_key(|e| (e.job, e.t_ns, e.kind, e.worker));
    let mut out = LedgerAnalysis::default();
    let mut holders: Vec<u32> = Vec::new();
    let mut runs: Vec<i32> = Vec::new();
    for job_events in events.chunk_by(|a, b| a.job == b.job) {
        holders.clear();
        runs.clear();
        let mut claimed = false;
        for e in job_events {
            match e.kind {
                EventKind::Claim { .. } => {
                    claimed = true;
                    if holders.iter().any(|&w| w != e.worker) {
                        out.duplicate_claims += 1;
                    }
                    if !holders.contains(&e.worker) {
                        holders.push(e.worker);
                    }
                }
                EventKind::Release if e.worker == RESCUER => holders.clear(),
                EventKind::Release => holders.retain(|&w| w != e.worker),
                EventKind::Execute { attempt } => runs.push(attempt),
            }
        }
        out.distinct_claimed += claimed as u64;
        out.held_at_end += !holders.is_empty() as u64;
        if !runs.is_empty() {
            out.distinct_executed += 1;
            out.executions += runs.len() as u64;
            runs.sort_unstable();
            let distinct_attempts = runs.chunk_by(|a, b| a == b).count() as u64;
            out.duplicate_executions += runs.len() as u64 - distinct_attempts;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn claim_while_another_worker_holds_is_a_duplicate() {
        let a = ledger(0, |l| {
            l.claim(1, 10, 0);
            l.execute(1, 15, 0);
            l.release(1, 40);
        });
        let b = ledger(1, |l| {
            l.claim(1, 20, 0);
            l.execute(1, 25, 0);
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
    fn rescue_ends_every_claim_and_a_new_attempt_is_no_duplicate() {
        let a = ledger(0, |l| {
            l.claim(7, 10, 0);
            l.execute(7, 12, 0);
        });
        let rescuer = ledger(RESCUER, |l| l.release(7, 100));
        let b = ledger(1, |l| {
            l.claim(7, 110, 1);
            l.execute(7, 120, 1);
            l.release(7, 130);
        });
        let r = analyse([a, rescuer, b]);
        assert_eq!(r.duplicate_claims, 0);
        assert_eq!(r.duplicate_executions, 0);
        assert_eq!(r.executions, 2);
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
}
