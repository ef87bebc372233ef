//! A paired block's cells: its two sides run interleaved, round by round, in the order
//! A B, B A, A B, … so that whatever the host does over the minutes of a run (a build
//! elsewhere, a CPU that warms, a neighbour that wakes) falls on both sides alike, and
//! each round's B/A ratio measures the change and not the hour
//! ([`crate::analysis::paired`] judges them).

use super::{CellSpec, Progress, RunFailure, push_cell};
use crate::backend::Backend;
use crate::results::{Pair, PairSide};
use std::sync::Arc;

/// Which side runs first in round `round`: A in even rounds, B in odd ones, so every
/// side runs first as often as second (ABBA) and a drift within a round cancels.
pub fn order(round: u32) -> [usize; 2] {
    if round.is_multiple_of(2) {
        [0, 1]
    } else {
        [1, 0]
    }
}

impl Progress<'_> {
    /// Runs both sides' repetitions as rounds and records the two cells; `false` when
    /// the run must stop. Each trial resets the schema as any trial does.
    pub(super) async fn pair<B: Backend>(
        &mut self,
        sides: [(&Arc<B>, &CellSpec<'_>); 2],
    ) -> Result<bool, RunFailure> {
        let [(a_backend, a), (b_backend, b)] = sides;
        let threshold = a.phase.matrices[0]
            .phase
            .paired
            .map_or(crate::workload::Pairing::DEFAULT_THRESHOLD, |p| p.threshold);
        self.pairs += 1;
        let id = self.pairs;
        let mut cells = [
            self.new_cell(a_backend, a).await?,
            self.new_cell(b_backend, b).await?,
        ];
        for (cell, (side, server)) in cells.iter_mut().zip([
            (PairSide::A, self.versus.as_ref().map(|v| v[0].clone())),
            (PairSide::B, self.versus.as_ref().map(|v| v[1].clone())),
        ]) {
            cell.pair = Some(Pair {
                side,
                id,
                threshold,
            });
            cell.server = server;
        }
        for round in 0..a.phase.trial.repetitions {
            for i in order(round) {
                let (backend, spec) = sides[i];
                let outcome = self.rep(backend, spec, &mut cells[i], round).await;
                if !matches!(outcome, Ok(true)) {
                    // Stopping or failed: both sides keep the rounds they finished.
                    cells
                        .into_iter()
                        .for_each(|c| push_cell(&mut self.result, c));
                    return outcome.map_err(|error| self.fail(error));
                }
            }
        }
        self.finish_cells(cells)
    }
}

#[cfg(test)]
mod tests {
    use super::order;

    #[test]
    fn each_side_runs_first_in_half_the_rounds() {
        let firsts: Vec<usize> = (0..8).map(|r| order(r)[0]).collect();
        assert_eq!(firsts, [0, 1, 0, 1, 0, 1, 0, 1]);
        let seq: Vec<usize> = (0..4).flat_map(order).collect();
        assert_eq!(seq, [0, 1, 1, 0, 0, 1, 1, 0], "A B B A A B B A");
    }
}
