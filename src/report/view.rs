//! One view of a run for every renderer: per cell, the aggregates that summary.md,
//! report.html and cells.csv show (repetitions averaged, histograms merged once), built
//! in one place so the formats cannot disagree about a number. Each renderer only
//! formats what it finds here; the figures SLOs, `recommend` and `compare` judge by are
//! the same [`CellFigures`], carried along.

use crate::analysis::RunAnalysis;
use crate::analysis::figures::CellFigures;
use crate::metrics::{HistogramSummary, merge_summaries};
use crate::results::{CellResult, RunResult, TrialResult};

/// A run as every renderer shows it, computed once per run: its analysis, each cell's
/// view and the warnings. summary.md, report.html, cells.csv, paired.json, the terminal
/// screen and the run's exit code read these; what only one format shows (its sections'
/// rows) each builds from `run`.
pub struct RunView<'a> {
    pub run: &'a RunResult,
    pub analysis: RunAnalysis,
    pub cells: Vec<CellView<'a>>,
    /// One line per cell and kind of warning; each format marks them as its own.
    pub warnings: Vec<String>,
}

impl<'a> RunView<'a> {
    pub fn of(run: &'a RunResult) -> RunView<'a> {
        let analysis = RunAnalysis::of(run);
        RunView {
            run,
            cells: run
                .cells
                .iter()
                .zip(&analysis.figures)
                .map(|(c, f)| CellView::of(c, *f))
                .collect(),
            analysis,
            warnings: warning_lines(run),
        }
    }
}

/// A per-trial rate over a cell's repetitions.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Spread {
    pub mean: f64,
    /// Sample standard deviation; 0 with one repetition.
    pub sd: f64,
    pub n: usize,
}

impl Spread {
    fn of(ts: &[TrialResult], f: impl Fn(&TrialResult) -> f64) -> Spread {
        let n = ts.len();
        if n == 0 {
            return Spread::default();
        }
        let mean = ts.iter().map(&f).sum::<f64>() / n as f64;
        let sd = if n > 1 {
            (ts.iter().map(|t| (f(t) - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt()
        } else {
            0.0
        };
        Spread { mean, sd, n }
    }

    /// "12345 ±3%": the mean and, with repetitions, the spread relative to it.
    pub fn show(&self) -> String {
        if self.n > 1 && self.mean > 0.0 {
            format!("{:.0} ±{:.0}%", self.mean, self.sd / self.mean * 100.0)
        } else {
            format!("{:.0}", self.mean)
        }
    }
}

/// Everything a renderer shows about one cell.
#[derive(Debug, Clone)]
pub struct CellView<'a> {
    pub cell: &'a CellResult,
    pub figures: CellFigures,
    pub claims_per_s: Spread,
    pub claimed_per_s: Spread,
    pub completed_per_s: Spread,
    /// Claim latency and queue wait over every repetition.
    pub claim: HistogramSummary,
    pub queue_wait: HistogramSummary,
    pub empty_claims: u64,
    pub distinct_claimed: u64,
    pub duplicate_claims: u64,
    pub distinct_executed: u64,
    pub duplicate_executions_ledger: u64,
    pub duplicate_executions_effects: i64,
    pub lost: i64,
    pub lost_races: u64,
    pub deadlocks: i64,
    pub row_lock_waits: Option<i64>,
    pub lock_escalations: Option<i64>,
    pub retries: u64,
    pub lock_wait_share: f64,
    pub client_cpu_us_per_claim: f64,
    /// Mean over the repetitions that measured it (a local server).
    pub server_cpu_s: Option<f64>,
    /// Oldest-pending age p50 averaged over repetitions (its p99 and max are in
    /// `figures`, under the catalogue's rules).
    pub oldest_pending_p50_ms: f64,
    pub dead_tuples: i64,
    /// Sizes after the last repetition.
    pub table_bytes: i64,
    pub index_bytes: i64,
    pub warnings: usize,
}

impl<'a> CellView<'a> {
    /// `figures` are the cell's, from the run's analysis.
    pub fn of(c: &'a CellResult, figures: CellFigures) -> CellView<'a> {
        let t = &c.trials;
        let sum = |f: &dyn Fn(&TrialResult) -> u64| t.iter().map(f).sum::<u64>();
        let isum = |f: &dyn Fn(&TrialResult) -> i64| t.iter().map(f).sum::<i64>();
        let merged = |f| merged(c, f);
        let server: Vec<f64> = t.iter().filter_map(|t| t.resources.server_cpu_s).collect();
        CellView {
            cell: c,
            figures,
            claims_per_s: Spread::of(t, |t| t.claims_per_s),
            claimed_per_s: Spread::of(t, |t| t.claimed_per_s),
            completed_per_s: Spread::of(t, |t| t.completed_per_s),
            claim: merged(|t| &t.claim_latency),
            queue_wait: merged(|t| &t.queue_wait),
            empty_claims: sum(&|t| t.counts.empty_claims),
            distinct_claimed: sum(&|t| t.duplicates.ledger.distinct_claimed),
            duplicate_claims: sum(&|t| t.duplicates.ledger.duplicate_claims),
            distinct_executed: sum(&|t| t.duplicates.ledger.distinct_executed),
            duplicate_executions_ledger: sum(&|t| t.duplicates.ledger.duplicate_executions),
            duplicate_executions_effects: isum(&|t| t.duplicates.effects_duplicate_executions),
            lost: isum(&|t| t.reconciliation.lost),
            lost_races: sum(&|t| t.counts.lost_races),
            deadlocks: isum(&|t| t.locks.deadlocks),
            row_lock_waits: t.iter().map(|t| t.locks.row_lock_waits).sum(),
            lock_escalations: t.iter().map(|t| t.locks.lock_escalations).sum(),
            retries: sum(&|t| t.counts.retries),
            lock_wait_share: Spread::of(t, |t| t.locks.lock_wait_share).mean,
            client_cpu_us_per_claim: Spread::of(t, |t| t.resources.client_cpu_us_per_claim).mean,
            server_cpu_s: (!server.is_empty())
                .then(|| server.iter().sum::<f64>() / server.len() as f64),
            oldest_pending_p50_ms: Spread::of(t, |t| t.oldest_pending.p50_ms).mean,
            dead_tuples: isum(&|t| t.resources.table.dead_tuples),
            table_bytes: t.last().map_or(0, |t| t.resources.table.table_bytes),
            index_bytes: t.last().map_or(0, |t| t.resources.table.index_bytes),
            warnings: t.iter().map(|t| t.warnings.len()).sum(),
        }
    }

    /// Duplicates over distinct jobs claimed (0 when nothing was claimed).
    pub fn duplicate_claim_rate(&self) -> f64 {
        ratio(self.duplicate_claims, self.distinct_claimed)
    }

    pub fn duplicate_execution_rate(&self) -> f64 {
        ratio(self.duplicate_executions_ledger, self.distinct_executed)
    }
}

/// One of a cell's histograms over every repetition, merged.
pub fn merged(c: &CellResult, f: fn(&TrialResult) -> &HistogramSummary) -> HistogramSummary {
    merge_summaries(c.trials.iter().map(f)).unwrap_or_default()
}

fn ratio(n: u64, d: u64) -> f64 {
    if d == 0 { 0.0 } else { n as f64 / d as f64 }
}

/// One line per cell and kind of warning: repetitions that warn alike are folded into
/// one line, quoting the first occurrence.
pub fn warning_lines(r: &RunResult) -> Vec<String> {
    let mut lines = Vec::new();
    for c in &r.cells {
        let mut kinds: Vec<(
            std::mem::Discriminant<crate::warnings::Warning>,
            String,
            Vec<u32>,
        )> = Vec::new();
        for t in &c.trials {
            for w in &t.warnings {
                let d = std::mem::discriminant(w);
                match kinds.iter_mut().find(|(k, _, _)| *k == d) {
                    Some((_, _, reps)) => reps.push(t.repetition + 1),
                    None => kinds.push((d, w.to_string(), vec![t.repetition + 1])),
                }
            }
        }
        for (_, first, reps) in kinds {
            let which = if reps.len() == 1 {
                format!("rep {}", reps[0])
            } else {
                format!(
                    "{} of {} reps, first rep {}",
                    reps.len(),
                    c.trials.len(),
                    reps[0]
                )
            };
            // The phase first, as the per-trial lines name a cell: two blocks can hold
            // the same backend, strategy, layout, workers and batch.
            let phase = match c.phase.as_str() {
                "" => String::new(),
                p => format!("{p} "),
            };
            lines.push(format!(
                "{phase}{} {} {} w={} b={} ({which}): {first}",
                c.backend_label(),
                c.strategy,
                c.index_layout,
                c.workers,
                c.batch_size
            ));
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spreads_show_the_relative_sample_deviation_only_with_repetitions() {
        let trial = |x: f64| TrialResult {
            claimed_per_s: x,
            ..Default::default()
        };
        let two = [trial(90.0), trial(110.0)];
        let s = Spread::of(&two, |t| t.claimed_per_s);
        assert_eq!((s.mean, s.n), (100.0, 2));
        assert!((s.sd - 14.142).abs() < 1e-3);
        assert_eq!(s.show(), "100 ±14%");
        assert_eq!(Spread::of(&two[..1], |t| t.claimed_per_s).show(), "90");
        assert_eq!(Spread::of(&[], |t| t.claimed_per_s).show(), "0");
    }
}
