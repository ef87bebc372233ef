//! A paired block's judgement: B against A by the ratios of their rounds. Both sides of a
//! round ran minutes apart at most, interleaved A B, B A, …, so a round's B/A ratio
//! carries the change under test and little of the host's drift; two nights apart the
//! same host moves throughput by 15 % (docs/nightly.md). Each metric's ratios are
//! combined on the log scale (a geometric mean) with a Student-t interval over the
//! rounds, at a confidence that holds for the whole run (Bonferroni over every metric of
//! every pair), so a run of many metrics does not raise an alarm on noise by sheer
//! number. A metric regressed when its interval lies wholly on the worse side of 1 *and*
//! the ratio is beyond the block's `paired_threshold`.

use super::compare::{Verdict, cell_value};
use crate::metric::{Entry, Metric};
use crate::results::{CellResult, PairSide, RunResult};
use serde::{Deserialize, Serialize};
use statrs::distribution::{ContinuousCDF, StudentsT};

/// The chance, over the whole run, that any metric of any pair is called changed when
/// nothing changed.
pub const FAMILY_ALPHA: f64 = 0.05;

/// One metric of one pair.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PairedMetric {
    pub metric: Metric,
    /// Each side's figure over all its rounds, as a cell's figure is combined.
    pub a: f64,
    pub b: f64,
    /// Rounds where both sides measured it.
    pub rounds: usize,
    /// The geometric mean of the rounds' B/A, with its interval; `None` with fewer than
    /// [`crate::workload::Pairing::MIN_ROUNDS`] rounds.
    pub ratio: Option<RatioInterval>,
    pub verdict: Verdict,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RatioInterval {
    pub ratio: f64,
    pub low: f64,
    pub high: f64,
}

/// One pair of cells: the same phase, workers and batch size, two variants.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PairedCell {
    /// phase, backend, strategy, layout, workers, batch (A's; B's differs in one).
    pub key: Vec<String>,
    /// What differs: the two strategies, the two layouts or the two servers.
    pub a: String,
    pub b: String,
    pub threshold: f64,
    pub metrics: Vec<PairedMetric>,
}

/// Every pair of the run, and the confidence each interval was taken at.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Paired {
    pub cells: Vec<PairedCell>,
    /// Intervals judged (pairs × metrics with enough rounds): the Bonferroni divisor.
    pub tests: usize,
    /// Each interval's two-sided confidence, 1 − [`FAMILY_ALPHA`] / tests.
    pub confidence: f64,
}

impl Paired {
    pub fn regressions(&self) -> impl Iterator<Item = (&PairedCell, &PairedMetric)> {
        self.cells.iter().flat_map(|c| {
            c.metrics
                .iter()
                .filter(|m| m.verdict == Verdict::Regressed)
                .map(move |m| (c, m))
        })
    }
}

/// B's cell for A's: the other side of the same pair.
fn partner<'a>(r: &'a RunResult, a: &CellResult) -> Option<&'a CellResult> {
    let id = a.pair?.id;
    r.cells
        .iter()
        .find(|c| c.pair.is_some_and(|p| p.side == PairSide::B && p.id == id))
}

/// Each metric's per-round ln(B/A) for one pair, rounds matched by repetition.
fn log_ratios(a: &CellResult, b: &CellResult) -> Vec<(&'static Entry, Vec<f64>)> {
    let shell = |c: &CellResult| CellResult {
        trials: Vec::new(),
        ..c.clone()
    };
    let (mut one_a, mut one_b) = (shell(a), shell(b));
    let mut out: Vec<(&'static Entry, Vec<f64>)> =
        Metric::compared().map(|e| (e, Vec::new())).collect();
    for ta in &a.trials {
        let Some(tb) = b.trials.iter().find(|t| t.repetition == ta.repetition) else {
            continue;
        };
        one_a.trials = vec![ta.clone()];
        one_b.trials = vec![tb.clone()];
        for (e, logs) in &mut out {
            let (x, y) = (cell_value(e.metric, &one_a), cell_value(e.metric, &one_b));
            if let (Some(x), Some(y)) = (x, y)
                && x > 0.0
                && y > 0.0
            {
                logs.push((y / x).ln());
            }
        }
    }
    out
}

/// The geometric mean of the ratios and its Student-t interval at `confidence`.
fn interval(logs: &[f64], confidence: f64) -> Option<RatioInterval> {
    let n = logs.len();
    if n < crate::workload::Pairing::MIN_ROUNDS as usize {
        return None;
    }
    let mean = logs.iter().sum::<f64>() / n as f64;
    let var = logs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
    let t = StudentsT::new(0.0, 1.0, (n - 1) as f64)
        .ok()?
        .inverse_cdf(1.0 - (1.0 - confidence) / 2.0);
    let half = t * (var / n as f64).sqrt();
    Some(RatioInterval {
        ratio: mean.exp(),
        low: (mean - half).exp(),
        high: (mean + half).exp(),
    })
}

/// Regressed: the interval wholly on the worse side of 1 and the ratio beyond the
/// threshold that way; improved the same the other way; else unchanged.
fn verdict(r: Option<RatioInterval>, higher_is_better: bool, threshold: f64) -> Verdict {
    let Some(r) = r else {
        return Verdict::Incomparable;
    };
    let (lower, higher) = (
        r.high < 1.0 && r.ratio <= 1.0 - threshold,
        r.low > 1.0 && r.ratio >= 1.0 + threshold,
    );
    match (higher_is_better, lower, higher) {
        (true, true, _) | (false, _, true) => Verdict::Regressed,
        (true, _, true) | (false, true, _) => Verdict::Improved,
        _ => Verdict::Unchanged,
    }
}

/// What differs between the sides, named for the report.
fn variants(a: &CellResult, b: &CellResult) -> (String, String) {
    if a.server != b.server {
        (a.backend_label(), b.backend_label())
    } else if a.strategy != b.strategy {
        (a.strategy.to_string(), b.strategy.to_string())
    } else {
        (a.index_layout.clone(), b.index_layout.clone())
    }
}

/// The run's pairs, judged; empty when the run has no paired block. Only
/// [`super::RunAnalysis`] calls it: a run is judged once.
pub(super) fn judge(r: &RunResult) -> Paired {
    let pairs: Vec<(&CellResult, &CellResult, f64)> = r
        .cells
        .iter()
        .filter_map(|a| {
            let p = a.pair.filter(|p| p.side == PairSide::A)?;
            Some((a, partner(r, a)?, p.threshold))
        })
        .collect();
    let logs: Vec<_> = pairs.iter().map(|(a, b, _)| log_ratios(a, b)).collect();
    let min = crate::workload::Pairing::MIN_ROUNDS as usize;
    let tests = logs
        .iter()
        .flatten()
        .filter(|(_, l)| l.len() >= min)
        .count();
    let confidence = 1.0 - FAMILY_ALPHA / tests.max(1) as f64;
    let cells = pairs
        .iter()
        .zip(logs)
        .map(|((a, b, threshold), logs)| {
            let (va, vb) = variants(a, b);
            let metrics = logs
                .into_iter()
                .filter_map(|(e, logs)| {
                    let (x, y) = (cell_value(e.metric, a)?, cell_value(e.metric, b)?);
                    let ratio = interval(&logs, confidence);
                    Some(PairedMetric {
                        metric: e.metric,
                        a: x,
                        b: y,
                        rounds: logs.len(),
                        ratio,
                        verdict: verdict(ratio, e.higher_is_better, *threshold),
                    })
                })
                .collect();
            PairedCell {
                key: crate::results::cell_key(a),
                a: va,
                b: vb,
                threshold: *threshold,
                metrics,
            }
        })
        .collect();
    Paired {
        cells,
        tests,
        confidence,
    }
}

/// A paired block's answer first: what moved beyond its threshold outside the paired
/// interval, or that nothing did and how closely it was measured.
pub(super) fn sentences(judged: &Paired, out: &mut Vec<String>) {
    for c in &judged.cells {
        let rounds = c.metrics.iter().map(|m| m.rounds).max().unwrap_or(0);
        let moved: Vec<String> = c
            .metrics
            .iter()
            .filter(|m| matches!(m.verdict, Verdict::Regressed | Verdict::Improved))
            .filter_map(|m| {
                let x = m.ratio?;
                Some(format!(
                    "{} ×{:.3} ({:.3}–{:.3}), {}",
                    m.metric.name(),
                    x.ratio,
                    x.low,
                    x.high,
                    m.verdict
                ))
            })
            .collect();
        let at = format!("at {} workers, batch {}", c.key[4], c.key[5]);
        // Where and what, when the sides are not strategies: "in contention: production on".
        let phase = match c.key[0].as_str() {
            p if p.starts_with('–') => String::new(),
            p => format!(" in {p}"),
        };
        let what = match c.key[2] == c.a {
            true => String::new(),
            false => format!("{} on ", c.key[2]),
        };
        let head = format!(
            "paired{phase}: {what}{} (B) against {} (A) {at}, {rounds} rounds",
            c.b, c.a
        );
        if moved.is_empty() {
            // The tightest interval says how small a change this run could have seen.
            let finest = c
                .metrics
                .iter()
                .filter(|m| m.metric != crate::metric::Metric::TransactionsPerJob)
                .filter_map(|m| Some((m.metric.name(), m.ratio?)))
                .min_by(|a, b| (a.1.high / a.1.low).total_cmp(&(b.1.high / b.1.low)));
            let finest = match finest {
                Some((name, x)) => format!(
                    "; the finest interval, {name}'s, is {:.3}–{:.3}",
                    x.low, x.high
                ),
                None => String::new(),
            };
            out.push(format!(
                "{head}: no figure moved beyond {:.0} % outside its interval{finest}.",
                c.threshold * 100.0
            ));
        } else {
            out.push(format!("{head}: {}.", moved.join("; ")));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ratios(xs: &[f64]) -> Vec<f64> {
        xs.iter().map(|x| x.ln()).collect()
    }

    #[test]
    fn a_steady_ten_percent_is_a_regression_and_noise_is_not() {
        let slower = ratios(&[1.09, 1.11, 1.10, 1.12, 1.08, 1.10, 1.11, 1.09]);
        let r = interval(&slower, 0.99).unwrap();
        assert!((r.ratio - 1.10).abs() < 0.005, "{r:?}");
        assert!(r.low > 1.07 && r.high < 1.13, "{r:?}");
        assert_eq!(verdict(Some(r), false, 0.05), Verdict::Regressed);
        assert_eq!(verdict(Some(r), true, 0.05), Verdict::Improved);
        // Beyond the noise but inside the threshold: not a change that counts.
        assert_eq!(verdict(Some(r), false, 0.15), Verdict::Unchanged);
        let noise = ratios(&[1.04, 0.97, 1.02, 0.99, 1.05, 0.96, 1.01, 0.98]);
        let r = interval(&noise, 0.99).unwrap();
        assert!(r.low < 1.0 && r.high > 1.0, "{r:?}");
        assert_eq!(verdict(Some(r), false, 0.01), Verdict::Unchanged);
    }

    #[test]
    fn a_large_mean_ratio_from_one_wild_round_stays_inside_its_interval() {
        // One round ×1.6, the rest flat: the mean moves 7 %, the interval spans 1.
        let wild = ratios(&[1.0, 1.01, 0.99, 1.6, 1.0, 0.99]);
        let r = interval(&wild, 0.99).unwrap();
        assert!(r.ratio > 1.05, "{r:?}");
        assert_eq!(verdict(Some(r), false, 0.05), Verdict::Unchanged, "{r:?}");
    }

    #[test]
    fn too_few_rounds_are_not_judged() {
        assert_eq!(interval(&ratios(&[1.2, 1.2]), 0.95), None);
        assert_eq!(verdict(None, false, 0.05), Verdict::Incomparable);
    }

    #[test]
    fn the_confidence_widens_with_the_number_of_intervals() {
        let logs = ratios(&[1.05, 1.08, 1.06, 1.07, 1.04, 1.06]);
        let one = interval(&logs, 0.95).unwrap();
        let many = interval(&logs, 1.0 - 0.05 / 16.0).unwrap();
        assert!(many.low < one.low && many.high > one.high);
        // t(0.975, 5 df) = 2.571: the interval is the textbook one.
        let n = logs.len() as f64;
        let mean = logs.iter().sum::<f64>() / n;
        let sd = (logs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt();
        let low = (mean - 2.5706 * sd / n.sqrt()).exp();
        assert!((one.low - low).abs() < 1e-4, "{} vs {low}", one.low);
    }
}
