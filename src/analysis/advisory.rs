//! Advisory locks that outlive their jobs: a claim that owns each job by a session-level
//! lock and never gives it back duplicates nothing and loses nothing, so the ledger and
//! the effects table are silent; only the server's lock table grows, one lock per job
//! run, until it refuses new ones. The trial's warning ([`Warning::AdvisoryLocksPiled`])
//! carries the count; the verdict says it once per cell, beside the correctness lines.

use super::figures::in_phase;
use crate::results::RunResult;
use crate::warnings::Warning;

/// One sentence per cell whose trials held more advisory locks than their claims could.
pub(super) fn sentences(r: &RunResult, out: &mut Vec<String>) {
    for c in &r.cells {
        let piled = c
            .trials
            .iter()
            .flat_map(|t| &t.warnings)
            .filter_map(|w| match w {
                Warning::AdvisoryLocksPiled { most, bound } => Some((*most, *bound)),
                _ => None,
            });
        let Some((most, bound)) = piled.max() else {
            continue;
        };
        out.push(format!(
            "advisory locks piled up: {} at {} workers, batch {}{}: the server held up to {most} advisory locks during a trial, against the {bound} its jobs in hand and claims in flight could hold; its locks outlive their jobs (no release step, or one that misses), which no duplicate or lost job shows: the lock table grows with every job run until the server refuses new locks.",
            c.strategy,
            c.workers,
            c.batch_size,
            in_phase(c)
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::{CellResult, TrialResult};
    use crate::strategy::Strategy;

    #[test]
    fn a_cell_whose_locks_piled_up_is_named_with_the_most_held() {
        let trial = |most: Option<i64>| {
            let mut t = TrialResult::default();
            if let Some(most) = most {
                t.warnings
                    .push(Warning::AdvisoryLocksPiled { most, bound: 40 });
            }
            t
        };
        let r = RunResult {
            cells: vec![
                CellResult::fetch_order(Strategy::PRODUCTION, 4, 5, vec![trial(None)]),
                CellResult::fetch_order(
                    Strategy::builtin_named("advisory").unwrap(),
                    4,
                    5,
                    vec![trial(Some(76)), trial(Some(412))],
                ),
            ],
            ..RunResult::default()
        };
        let mut out = Vec::new();
        sentences(&r, &mut out);
        assert_eq!(
            out,
            [
                "advisory locks piled up: advisory at 4 workers, batch 5: the server held up to 412 advisory locks during a trial, against the 40 its jobs in hand and claims in flight could hold; its locks outlive their jobs (no release step, or one that misses), which no duplicate or lost job shows: the lock table grows with every job run until the server refuses new locks."
            ]
        );
    }
}
