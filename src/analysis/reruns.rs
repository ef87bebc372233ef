//! Jobs that ran again although no claim was duplicated: the seed's point that a claim
//! is not exactly-once, measured, as the verdict tells it.

use super::figures::{RunFigures, in_phase};
use crate::results::{CellResult, RunResult};

/// A cell without duplicate claims whose jobs still ran twice: the claim held, and the
/// job ran again after a rescue of a worker that was still running (a lease that ran out
/// under it). The seed's point that a claim is not exactly-once, measured. Where no
/// rescue took a job back, the second run came from a claim that read the row before
/// the first run finished and wrote it without checking it (a stale read), and the
/// sentence says that instead. One sentence per strategy of a phase on a backend: a
/// sweep whose cells all met it says so once.
pub(super) fn sentences(r: &RunResult, figures: RunFigures, out: &mut Vec<String>) {
    // A failover's re-runs have their own sentence.
    let cells: Vec<&CellResult> = r.cells.iter().filter(|c| !fails_over(c)).collect();
    let group = |c: &CellResult| (c.phase.clone(), c.backend, c.strategy.clone());
    // Each group once, in the run's order.
    let mut groups = Vec::new();
    for c in &cells {
        if !groups.contains(&group(c)) {
            groups.push(group(c));
        }
    }
    for g in groups {
        let of_group: Vec<&CellResult> = cells.iter().copied().filter(|c| group(c) == g).collect();
        let rerun: Vec<(&CellResult, u64)> = of_group
            .iter()
            .map(|c| (*c, figures.of(c)))
            .filter(|(_, f)| !f.claim_only && f.duplicate_claims == 0 && f.duplicate_executions > 0)
            .map(|(c, f)| (c, f.duplicate_executions))
            .collect();
        let Some(&(first, n)) = rerun.first() else {
            continue;
        };
        let rescued: u64 = rerun
            .iter()
            .flat_map(|(c, _)| &c.trials)
            .map(|t| t.rescued_jobs)
            .sum();
        let why = match rescued {
            // The server itself handed a lost connection's deliveries back.
            0 if first.strategy.redelivers_on_connection_loss() => {
                "the server hands a delivery back as soon as its worker's connection closes (a killed connection, a restart), so a job whose run had finished there, its acknowledgement lost with the connection, ran again"
            }
            0 => {
                "no rescue took a job back, so a worker claimed a job after its run had finished: its claim read the row before that run ended and wrote it without checking it (a stale read)"
            }
            _ => {
                "a rescue took back a lease that ran out under a live worker, and the job ran again (a claim is not exactly-once)"
            }
        };
        if rerun.len() == 1 {
            out.push(format!(
                "{} at {} worker{}{}: 0 duplicate claims, yet {n} job runs overlapped another run of the same job or followed it without a release: {why}.",
                first.strategy,
                first.workers,
                if first.workers == 1 { "" } else { "s" },
                in_phase(first),
            ));
            continue;
        }
        let low = rerun.iter().map(|r| r.1).min().unwrap_or(0);
        let high = rerun.iter().map(|r| r.1).max().unwrap_or(0);
        let mut workers: Vec<u32> = rerun.iter().map(|r| r.0.workers).collect();
        workers.sort_unstable();
        workers.dedup();
        let workers: Vec<String> = workers.iter().map(u32::to_string).collect();
        out.push(format!(
            "{}{} on {}, {} of {} cells (at {} workers): 0 duplicate claims, yet {low}–{high} job runs per cell overlapped another run of the same job or followed it without a release: {why}.",
            first.strategy,
            in_phase(first),
            first.backend,
            rerun.len(),
            of_group.len(),
            workers.join(", "),
        ));
    }
}

/// Whether a trial of `c` failed over: its re-runs have the failover's own sentence.
pub(super) fn fails_over(c: &CellResult) -> bool {
    c.trials.iter().any(|t| !t.failovers.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::strategy::Strategy;

    /// Runs that a rescue made again: one sentence for a lone cell, one per strategy
    /// for a sweep, naming how many of its cells and the range per cell.
    #[test]
    fn jobs_that_ran_again_are_told_once_per_strategy_of_a_sweep() {
        let cell = |workers: u32, reran: u64| {
            let mut t = crate::results::TrialResult::completing(1000.0);
            t.duplicates.ledger.duplicate_executions = reran;
            t.rescued_jobs = reran;
            CellResult::fetch_order(Strategy::PRODUCTION, workers, 10, vec![t])
        };
        let said = |cells: Vec<CellResult>| {
            let r = RunResult {
                cells,
                ..RunResult::default()
            };
            let mut out = Vec::new();
            super::super::reruns::sentences(&r, RunFigures::new(&[], &[]), &mut out);
            out
        };
        let one = said(vec![cell(8, 3)]);
        assert_eq!(one.len(), 1);
        assert!(
            one[0].starts_with("production at 8 workers: 0 duplicate claims, yet 3 job runs"),
            "{one:?}"
        );
        let sweep = said(vec![cell(1, 0), cell(4, 2), cell(16, 12)]);
        assert_eq!(sweep.len(), 1, "{sweep:?}");
        assert!(
            sweep[0].starts_with(
                "production on postgres, 2 of 3 cells (at 4, 16 workers): 0 duplicate claims, yet 2–12 job runs per cell"
            ),
            "{sweep:?}"
        );
        assert!(said(vec![cell(1, 0), cell(4, 0)]).is_empty());
        assert!(sweep[0].ends_with("a rescue took back a lease that ran out under a live worker, and the job ran again (a claim is not exactly-once)."), "{sweep:?}");
    }

    /// Runs again without any rescue: a stale read's unchecked write, said as such.
    #[test]
    fn a_rerun_without_a_rescue_is_told_as_a_stale_read() {
        let mut t = crate::results::TrialResult::completing(1000.0);
        t.duplicates.ledger.duplicate_executions = 2;
        let lock = Strategy::builtin_named("lock-service").unwrap();
        let r = RunResult {
            cells: vec![CellResult::fetch_order(lock, 16, 1, vec![t])],
            ..RunResult::default()
        };
        let mut out = Vec::new();
        sentences(&r, RunFigures::new(&[], &[]), &mut out);
        assert_eq!(
            out,
            [
                "lock-service at 16 workers: 0 duplicate claims, yet 2 job runs overlapped another run of the same job or followed it without a release: no rescue took a job back, so a worker claimed a job after its run had finished: its claim read the row before that run ended and wrote it without checking it (a stale read)."
            ]
        );
    }

    /// On a broker that hands a lost connection's deliveries back, a rerun without a
    /// rescue is the server's redelivery, not a stale read.
    #[test]
    fn a_rerun_on_rabbitmq_is_told_as_a_lost_connections_redelivery() {
        let mut t = crate::results::TrialResult::completing(1000.0);
        t.duplicates.ledger.duplicate_executions = 1;
        let rabbitmq = Strategy::builtin_named("rabbitmq").unwrap();
        let r = RunResult {
            cells: vec![CellResult::fetch_order(rabbitmq, 1, 1, vec![t])],
            ..RunResult::default()
        };
        let mut out = Vec::new();
        sentences(&r, RunFigures::new(&[], &[]), &mut out);
        assert_eq!(out.len(), 1);
        assert!(
            out[0].contains("as soon as its worker's connection closes"),
            "{out:?}"
        );
        assert!(!out[0].contains("stale read"), "{out:?}");
    }
}
