//! The figures of one cell, repetitions merged: what SLOs, `recommend` and the verdict
//! read, computed one way for all of them.

pub use crate::metric::fmt_ms;
use crate::metrics::{HistogramSummary, merge_histograms};
use crate::results::{CellResult, TrialResult};
use crate::slo::{Metric, Slo};

#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct CellFigures {
    /// The phase ran the claim path alone ([`CellResult::is_claim_only`]): completed
    /// jobs/s and duplicate executions are not measured.
    pub claim_only: bool,
    pub completed_per_s: f64,
    /// Completed jobs/s, or claimed jobs/s where the phase ran claim-only (nothing
    /// completes there): the rate to compare pools by.
    pub throughput: f64,
    /// Claim latency percentiles over every repetition, ms (`None`: no claim recorded).
    pub claim_p50_ms: Option<f64>,
    pub claim_p99_ms: Option<f64>,
    pub claim_p999_ms: Option<f64>,
    /// Only where jobs arrived during the trial (see [`CellResult::has_arrivals`]).
    pub queue_wait_p99_ms: Option<f64>,
    pub oldest_pending_p99_ms: Option<f64>,
    pub oldest_pending_max_ms: Option<f64>,
    pub duplicate_claims: u64,
    pub duplicate_executions: u64,
    pub lost: i64,
    pub lock_wait_share: f64,
    /// The mean over the repetitions that counted the server's transactions.
    pub transactions_per_job: Option<f64>,
}

fn mean(ts: &[TrialResult], f: impl Fn(&TrialResult) -> f64) -> f64 {
    if ts.is_empty() {
        return 0.0;
    }
    ts.iter().map(f).sum::<f64>() / ts.len() as f64
}

/// Every repetition's histogram merged once; `None` when nothing was recorded.
fn merged(
    ts: &[TrialResult],
    f: impl Fn(&TrialResult) -> &HistogramSummary,
) -> Option<hdrhistogram::Histogram<u64>> {
    merge_histograms(ts.iter().map(f))
        .ok()
        .filter(|h| !h.is_empty())
}

/// One repetition's throughput: what it completed, or in a claim-only cell what it
/// claimed.
pub(super) fn trial_throughput(claim_only: bool, t: &TrialResult) -> f64 {
    if claim_only {
        t.claimed_per_s
    } else {
        t.completed_per_s
    }
}

/// " in phase x", or nothing for a lone block: how a sentence names a cell's phase.
pub(super) fn in_phase(c: &CellResult) -> String {
    if c.phase.is_empty() {
        String::new()
    } else {
        format!(" in {}", c.phase)
    }
}

/// A per-repetition figure combined by the metric's rule in the catalogue (0 for a cell
/// without repetitions).
fn by_rule(metric: Metric, ts: &[TrialResult], f: impl Fn(&TrialResult) -> f64) -> f64 {
    metric.over_repetitions(ts.iter().map(f)).unwrap_or(0.0)
}

fn ms(us: u64) -> f64 {
    us as f64 / 1000.0
}

impl CellFigures {
    pub fn of(c: &CellResult) -> CellFigures {
        let ts = &c.trials;
        let arrivals = c.has_arrivals();
        let sampled = arrivals && ts.iter().any(|t| t.oldest_pending.sampled);
        let claim = merged(ts, |t| &t.claim_latency);
        let wait = arrivals.then(|| merged(ts, |t| &t.queue_wait)).flatten();
        let claim_only = c.is_claim_only();
        CellFigures {
            claim_only,
            completed_per_s: by_rule(Metric::CompletedPerS, ts, |t| t.completed_per_s),
            throughput: by_rule(Metric::Throughput, ts, |t| trial_throughput(claim_only, t)),
            claim_p50_ms: claim.as_ref().map(|h| ms(h.value_at_quantile(0.5))),
            claim_p99_ms: claim.as_ref().map(|h| ms(h.value_at_quantile(0.99))),
            claim_p999_ms: claim.as_ref().map(|h| ms(h.value_at_quantile(0.999))),
            queue_wait_p99_ms: wait.map(|h| ms(h.value_at_quantile(0.99))),
            oldest_pending_p99_ms: sampled
                .then(|| by_rule(Metric::OldestPendingP99, ts, |t| t.oldest_pending.p99_ms)),
            oldest_pending_max_ms: sampled
                .then(|| by_rule(Metric::OldestPendingMax, ts, |t| t.oldest_pending.max_ms)),
            duplicate_claims: ts
                .iter()
                .map(|t| t.duplicates.ledger.duplicate_claims)
                .sum(),
            duplicate_executions: ts.iter().map(TrialResult::duplicate_executions).sum(),
            lost: ts.iter().map(|t| t.reconciliation.lost).sum(),
            lock_wait_share: mean(ts, |t| t.locks.lock_wait_share),
            transactions_per_job: Metric::TransactionsPerJob
                .over_repetitions(super::cost::transactions_per_job_by_trial(c).into_iter()),
        }
    }

    /// The throughput of each of `c`'s repetitions: completed jobs/s, or claimed jobs/s
    /// in a claim-only cell (nothing completes there).
    pub fn trial_throughputs(c: &CellResult) -> Vec<f64> {
        let claim_only = c.is_claim_only();
        c.trials
            .iter()
            .map(|t| trial_throughput(claim_only, t))
            .collect()
    }

    /// The figure an SLO on `metric` reads (`None`: not measured in this cell).
    pub fn value(&self, metric: Metric) -> Option<f64> {
        match metric {
            Metric::ClaimP50 => self.claim_p50_ms,
            Metric::ClaimP99 => self.claim_p99_ms,
            Metric::ClaimP999 => self.claim_p999_ms,
            Metric::QueueWaitP99 => self.queue_wait_p99_ms,
            Metric::OldestPendingP99 => self.oldest_pending_p99_ms,
            Metric::OldestPendingMax => self.oldest_pending_max_ms,
            Metric::Duplicates => Some(self.duplicate_claims as f64),
            Metric::DuplicateExecutions => {
                (!self.claim_only).then_some(self.duplicate_executions as f64)
            }
            Metric::Lost => Some(self.lost as f64),
            Metric::CompletedPerS => (!self.claim_only).then_some(self.completed_per_s),
            Metric::Throughput => Some(self.throughput),
            Metric::TransactionsPerJob => self.transactions_per_job,
        }
    }

    /// Why [`CellFigures::value`] has nothing for `metric` in this cell.
    pub fn why_unmeasured(&self, metric: Metric) -> &'static str {
        match metric {
            Metric::CompletedPerS | Metric::DuplicateExecutions => "the phase is claim-only",
            Metric::ClaimP50 | Metric::ClaimP99 | Metric::ClaimP999 => "no claim returned a job",
            Metric::TransactionsPerJob => "the server's transactions were not counted",
            _ => "no arrivals in this phase",
        }
    }

    /// The SLOs this cell misses, each with what it measured. An SLO the cell cannot
    /// measure (queue wait or oldest-pending age in a phase without arrivals) is not a
    /// miss: see [`CellFigures::unmeasured`].
    pub fn misses(&self, slos: &[Slo]) -> Vec<String> {
        slos.iter()
            .filter_map(|s| {
                let v = self.value(s.metric)?;
                (!s.holds(Some(v))).then(|| format!("{s} (measured {})", s.metric.show(v)))
            })
            .collect()
    }

    /// The SLOs this cell cannot judge: it had no arrivals to measure them with.
    pub fn unmeasured<'a>(&self, slos: &'a [Slo]) -> Vec<&'a Slo> {
        slos.iter()
            .filter(|s| self.value(s.metric).is_none())
            .collect()
    }
}

/// A run's cells' figures, computed once by its analysis and looked up by cell: the
/// verdict's sentences read them rather than merging each cell's histograms again.
#[derive(Clone, Copy)]
pub struct RunFigures<'a> {
    cells: &'a [CellResult],
    figures: &'a [CellFigures],
}

impl<'a> RunFigures<'a> {
    /// `figures[i]` is `cells[i]`'s.
    pub fn new(cells: &'a [CellResult], figures: &'a [CellFigures]) -> RunFigures<'a> {
        RunFigures { cells, figures }
    }

    /// `c`'s figures: the analysis's when `c` is one of the run's cells (found by its
    /// address in the run's slice, not by a scan: the sentences ask for every cell of a
    /// run of up to 100,000), else computed.
    pub fn of(&self, c: &CellResult) -> CellFigures {
        let size = std::mem::size_of::<CellResult>().max(1);
        let at = (c as *const CellResult as usize)
            .checked_sub(self.cells.as_ptr() as usize)
            .filter(|offset| offset % size == 0)
            .map(|offset| offset / size);
        at.filter(|&i| self.cells.get(i).is_some_and(|x| std::ptr::eq(x, c)))
            .and_then(|i| self.figures.get(i).copied())
            .unwrap_or_else(|| CellFigures::of(c))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A cell of the run reads the analysis's figures (here a marked one, to tell them
    /// apart); a cell from elsewhere, an equal copy included, has its own computed.
    #[test]
    fn run_figures_are_looked_up_by_the_cell_itself() {
        let cells = vec![super::super::durability::at_level(None, 4, 100.0)];
        let marked = [CellFigures {
            throughput: 42.0,
            ..CellFigures::default()
        }];
        let run = RunFigures::new(&cells, &marked);
        assert_eq!(run.of(&cells[0]).throughput, 42.0);
        // The last of several, found by its place.
        let many: Vec<CellResult> = (1..=5)
            .map(|w| super::super::durability::at_level(None, w, 100.0))
            .collect();
        let each: Vec<CellFigures> = (1..=5)
            .map(|i| CellFigures {
                throughput: f64::from(i),
                ..CellFigures::default()
            })
            .collect();
        let run_of_many = RunFigures::new(&many, &each);
        for (i, c) in many.iter().enumerate() {
            assert_eq!(run_of_many.of(c).throughput, (i + 1) as f64);
        }
        let copy = cells[0].clone();
        assert_eq!(run.of(&copy), CellFigures::of(&copy));
    }
}
