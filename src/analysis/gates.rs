//! Absolute gates: objectives every matching cell of a run must meet (`[[gate]]` in a
//! workload, `check = "claim_p99<=20ms"`, optionally narrowed to a phase, strategy,
//! layout, worker count or batch size). Unlike SLOs, which `recommend` uses to pick among
//! cells, a gate that any matching cell misses fails the run (exit 3), on every run and
//! in `compare`.

use super::figures::CellFigures;
use crate::results::RunResult;
use serde::{Deserialize, Serialize};

pub use crate::results::Gate;

/// One gate checked on one cell.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GateResult {
    pub gate: String,
    pub cell: Vec<String>,
    /// What the cell measured (`None`: it cannot measure it, e.g. queue wait without
    /// arrivals: the gate does not apply there).
    pub measured: Option<String>,
    pub passed: bool,
}

/// What a gate's one result says when no cell of the run measured its metric.
pub const MATCHED_NO_CELL: &str = "matched no cell that measures it";

/// Every gate on every cell it applies to and can measure. A gate that no cell could
/// answer fails, with one result saying so: a gate that checks nothing must not pass
/// (validation refuses what the matrix alone decides; this is what only the run sees,
/// such as an interrupted run or a phase whose claims returned nothing).
pub fn check(r: &RunResult) -> Vec<GateResult> {
    let mut out = Vec::new();
    for g in &r.gates {
        let before = out.len();
        for c in r.cells.iter().filter(|c| g.applies_to(c)) {
            let v = CellFigures::of(c).value(g.check.metric);
            let Some(v) = v else { continue };
            out.push(GateResult {
                gate: g.label(),
                cell: crate::results::cell_key(c),
                measured: Some(g.check.metric.show(v)),
                passed: g.check.holds(Some(v)),
            });
        }
        if out.len() == before {
            out.push(GateResult {
                gate: g.label(),
                cell: vec![MATCHED_NO_CELL.to_string()],
                measured: None,
                passed: false,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::CellResult;
    use crate::slo::Slo;
    use crate::strategy::Strategy;

    fn cell(strategy: &Strategy, workers: u32, p99_ms: u64) -> CellResult {
        let mut t = crate::results::TrialResult::default();
        let mut h = crate::metrics::new_histogram();
        h.record(p99_ms * 1000).unwrap();
        t.claim_latency = crate::metrics::HistogramSummary::from_histogram(&h);
        CellResult::fetch_order(strategy.clone(), workers, 10, vec![t])
    }

    #[test]
    fn a_gate_checks_the_cells_it_names_and_only_those() {
        let r = RunResult {
            cells: vec![
                cell(&Strategy::PRODUCTION, 4, 5),
                cell(&Strategy::PRODUCTION, 16, 30),
                cell(&Strategy::WAITING, 16, 90),
            ],
            gates: vec![Gate {
                check: Slo::parse("claim_p99<=20ms").unwrap(),
                phase: None,
                strategy: Some(Strategy::PRODUCTION),
                index_layout: None,
                workers: None,
                batch_size: None,
            }],
            ..RunResult::default()
        };
        let got = check(&r);
        assert_eq!(got.len(), 2, "waiting is not gated");
        assert!(got[0].passed);
        assert!(!got[1].passed);
        assert_eq!(got[1].measured.as_deref(), Some("30 ms"));
        assert_eq!(got[1].gate, "claim_p99<=20ms for production");
    }

    #[test]
    fn a_gate_no_cell_can_measure_fails_saying_so() {
        let r = RunResult {
            cells: vec![cell(&Strategy::PRODUCTION, 4, 5)],
            gates: vec![Gate {
                check: Slo::parse("queue_wait_p99<=1s").unwrap(),
                phase: None,
                strategy: None,
                index_layout: None,
                workers: None,
                batch_size: None,
            }],
            ..RunResult::default()
        };
        let got = check(&r);
        assert_eq!(got.len(), 1, "{got:?}");
        assert!(!got[0].passed, "a gate that checked nothing fails");
        assert_eq!(got[0].cell, [MATCHED_NO_CELL]);
    }
}
