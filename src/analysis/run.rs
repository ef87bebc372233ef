//! A run's analysis, built once from its `RunResult`: each cell's figures, the paired
//! judgement, the gates and the verdict. The report's every format, the run's exit code
//! and the paired.json file read this one value, so a run is judged once and no two of
//! them can judge it differently (they did: four places each judged the pairs again).

use super::figures::{CellFigures, RunFigures};
use super::gates::GateResult;
use super::paired::Paired;
use crate::results::RunResult;

pub struct RunAnalysis {
    /// Each cell's figures, in the run's cell order.
    pub figures: Vec<CellFigures>,
    pub paired: Paired,
    pub gates: Vec<GateResult>,
    /// The verdict's sentences, most important first.
    pub verdict: Vec<String>,
}

impl RunAnalysis {
    pub fn of(r: &RunResult) -> RunAnalysis {
        let paired = super::paired::judge(r);
        let figures: Vec<CellFigures> = r.cells.iter().map(CellFigures::of).collect();
        let verdict = super::story::sentences(r, RunFigures::new(&r.cells, &figures), &paired);
        RunAnalysis {
            figures,
            gates: super::gates::check(r),
            verdict,
            paired,
        }
    }

    pub fn failed_gates(&self) -> usize {
        self.gates.iter().filter(|g| !g.passed).count()
    }
}
