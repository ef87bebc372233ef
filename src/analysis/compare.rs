//! `claimbench compare`: two runs, cell by cell, metric by metric, each change judged
//! against its noise. A change counts only when it is beyond the metric's threshold *and*
//! the two 95% intervals do not overlap, so noise that happens to cross a threshold stays
//! "unchanged". Correctness is not a matter of noise: duplicates or lost jobs where the
//! baseline had none always fail.

use super::bootstrap::mean_interval;
use super::figures::CellFigures;
use crate::metric::{Combine, Metric};
use crate::metrics::{HistogramSummary, merge_summaries};
use crate::results::{CellResult, RunResult, TrialResult};
use serde::{Deserialize, Serialize};

/// A value with its 95% interval (equal to the value when the noise is unknown).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Estimate {
    pub value: f64,
    pub low: f64,
    pub high: f64,
    /// Whether `low`/`high` measure noise (repetitions, or enough samples).
    pub noise_known: bool,
}

impl Estimate {
    fn point(value: f64) -> Estimate {
        Estimate {
            value,
            low: value,
            high: value,
            noise_known: false,
        }
    }

    fn overlaps(&self, other: &Estimate) -> bool {
        self.low <= other.high && other.low <= self.high
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    Improved,
    Unchanged,
    Regressed,
    Incomparable,
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Verdict::Improved => "improved",
            Verdict::Unchanged => "unchanged",
            Verdict::Regressed => "regressed",
            Verdict::Incomparable => "incomparable",
        })
    }
}

/// How `compare` estimates a catalogue metric from one cell's repetitions: the value is
/// the catalogue's (as every report shows it, `CellFigures::value`), the interval the
/// spread compare judges noise by. Name, direction and default threshold are the
/// catalogue's too (`metric.rs`).
fn estimate(metric: Metric, c: &CellResult) -> Option<Estimate> {
    match metric {
        Metric::Throughput => over_repetitions(metric, &CellFigures::trial_throughputs(c)),
        Metric::ClaimP50 => claim_quantile(c, 0.50),
        Metric::ClaimP99 => claim_quantile(c, 0.99),
        Metric::ClaimP999 => claim_quantile(c, 0.999),
        Metric::QueueWaitP99 => queue_wait_p99(c),
        Metric::OldestPendingP99 => per_trial(metric, c, |t| t.oldest_pending.p99_ms),
        Metric::OldestPendingMax => per_trial(metric, c, |t| t.oldest_pending.max_ms),
        Metric::TransactionsPerJob => transactions_per_job(c),
        Metric::CompletedPerS | Metric::Duplicates | Metric::DuplicateExecutions | Metric::Lost => {
            None
        }
    }
}

/// A compared metric's value for one cell (its repetitions combined as the catalogue
/// combines them), without the interval: one side of a pair's round.
pub fn cell_value(metric: Metric, c: &CellResult) -> Option<f64> {
    estimate(metric, c).map(|e| e.value)
}

/// The default threshold of each metric, for the docs and the report.
pub fn thresholds() -> Vec<(&'static str, f64)> {
    Metric::compared()
        .filter_map(|e| Some((e.name, e.compare_threshold?)))
        .collect()
}

fn transactions_per_job(c: &CellResult) -> Option<Estimate> {
    let xs = super::cost::transactions_per_job_by_trial(c);
    over_repetitions(Metric::TransactionsPerJob, &xs)
}

/// The repetitions' figures combined as the catalogue combines them, with their spread:
/// a mean's bootstrap interval, a maximum's range (lowest to largest maximum). A single
/// repetition leaves the noise unknown.
fn over_repetitions(metric: Metric, xs: &[f64]) -> Option<Estimate> {
    let value = metric.over_repetitions(xs.iter().copied())?;
    if xs.len() < 2 {
        return Some(Estimate::point(value));
    }
    match metric.entry().combine {
        Combine::Mean => mean_interval(xs).map(|i| Estimate {
            value,
            low: i.low,
            high: i.high,
            noise_known: true,
        }),
        Combine::Max => Some(Estimate {
            value,
            low: xs.iter().copied().fold(f64::INFINITY, f64::min),
            high: value,
            noise_known: true,
        }),
        Combine::Sum | Combine::MergedHistogram => Some(Estimate::point(value)),
    }
}

fn per_trial(metric: Metric, c: &CellResult, f: fn(&TrialResult) -> f64) -> Option<Estimate> {
    if !c.has_arrivals() {
        return None;
    }
    let xs: Vec<f64> = c.trials.iter().map(f).collect();
    over_repetitions(metric, &xs)
}

fn queue_wait_p99(c: &CellResult) -> Option<Estimate> {
    if !c.has_arrivals() {
        return None;
    }
    quantile(c.trials.iter().map(|t| &t.queue_wait), 0.99)
}

fn claim_quantile(c: &CellResult, q: f64) -> Option<Estimate> {
    quantile(c.trials.iter().map(|t| &t.claim_latency), q)
}

/// A percentile of the merged HDR histogram (ms) with its distribution-free 95% interval:
/// the values at the order statistics n·q ± 1.96·√(n·q·(1−q)), as a binomial bound on
/// which sample the percentile is. Below 10 samples past the percentile the upper
/// bound is the maximum.
fn quantile<'a>(parts: impl Iterator<Item = &'a HistogramSummary>, q: f64) -> Option<Estimate> {
    let merged = merge_summaries(parts).ok()?;
    let h = merged.histogram().ok()?;
    let n = h.len() as f64;
    if n == 0.0 {
        return None;
    }
    let spread = 1.96 * (n * q * (1.0 - q)).sqrt();
    let at = |rank: f64| h.value_at_quantile((rank / n).clamp(0.0, 1.0)) as f64 / 1000.0;
    Some(Estimate {
        value: at(n * q),
        low: at((n * q - spread).floor()),
        high: at((n * q + spread).ceil()),
        noise_known: true,
    })
}

/// A metric of one cell, before and after.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MetricChange {
    /// Serialized by its catalogue name, as compare's JSON always wrote it.
    pub metric: Metric,
    pub baseline: Option<Estimate>,
    pub current: Option<Estimate>,
    /// (current − baseline) / baseline.
    pub change: Option<f64>,
    pub verdict: Verdict,
}

/// The rule: beyond the threshold in the bad direction and outside the noise.
pub fn judge(
    base: Option<Estimate>,
    cur: Option<Estimate>,
    higher_is_better: bool,
    threshold: f64,
) -> (Option<f64>, Verdict) {
    let (Some(b), Some(c)) = (base, cur) else {
        return (None, Verdict::Incomparable);
    };
    if b.value == 0.0 {
        let v = if c.value == 0.0 {
            Verdict::Unchanged
        } else {
            Verdict::Incomparable
        };
        return (None, v);
    }
    let change = (c.value - b.value) / b.value;
    let better = if higher_is_better { change } else { -change };
    let verdict = if b.overlaps(&c) || better.abs() <= threshold {
        Verdict::Unchanged
    } else if better > 0.0 {
        Verdict::Improved
    } else {
        Verdict::Regressed
    };
    (Some(change), verdict)
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CellComparison {
    /// phase, backend, strategy, layout, workers, batch (as the summary names them).
    pub key: Vec<String>,
    /// Why a side's trials are invalid (then every metric is incomparable).
    #[serde(default)]
    pub invalid: Vec<String>,
    pub metrics: Vec<MetricChange>,
    /// Correctness failures of the current run where the baseline had none.
    pub correctness: Vec<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// Why the runs' environments differ (empty: same fingerprint).
    pub mismatches: Vec<String>,
    /// Whether the comparison went ahead despite them (`--force`).
    pub forced: bool,
    pub cells: Vec<CellComparison>,
    /// Cells only one run has.
    pub only_in_baseline: Vec<Vec<String>>,
    pub only_in_current: Vec<Vec<String>>,
    /// The current run's absolute gates.
    pub gates: Vec<super::gates::GateResult>,
}

/// What a run's numbers depend on besides the code under test, as (what, value).
pub fn fingerprint(r: &RunResult) -> Vec<(String, String)> {
    let e = &r.environment;
    let mut out = vec![
        ("logical cores".to_string(), e.logical_cores.to_string()),
        ("cpu".to_string(), e.cpu.clone()),
        ("workload sha256".to_string(), r.workload.sha256.clone()),
        (
            "claimbench version".to_string(),
            e.claimbench_version.clone(),
        ),
    ];
    for t in &e.targets {
        out.push((format!("{} server", t.backend), t.server.version.clone()));
    }
    out
}

/// Every fingerprint entry that differs, or that only one run has.
fn mismatches(base: &RunResult, cur: &RunResult) -> Vec<String> {
    let (b, c) = (fingerprint(base), fingerprint(cur));
    let value = |f: &[(String, String)], what: &str| {
        f.iter()
            .find(|(w, _)| w == what)
            .map_or("(none)".to_string(), |(_, v)| v.clone())
    };
    let mut whats: Vec<&String> = b.iter().chain(&c).map(|(w, _)| w).collect();
    let mut seen: Vec<&String> = Vec::new();
    whats.retain(|w| {
        let new = !seen.contains(w);
        seen.push(w);
        new
    });
    whats
        .into_iter()
        .filter_map(|w| {
            let (x, y) = (value(&b, w), value(&c, w));
            (x != y).then(|| format!("{w}: {x} -> {y}"))
        })
        .collect()
}

fn key(c: &CellResult) -> Vec<String> {
    crate::results::cell_key(c)
}

fn correctness(base: &CellResult, cur: &CellResult) -> Vec<String> {
    let (b, c) = (CellFigures::of(base), CellFigures::of(cur));
    let mut out = Vec::new();
    let mut check = |name: &str, before: f64, after: f64| {
        if before == 0.0 && after > 0.0 {
            out.push(format!("{name}: 0 -> {after}"));
        }
    };
    check(
        "duplicate claims",
        b.duplicate_claims as f64,
        c.duplicate_claims as f64,
    );
    check(
        "duplicate executions",
        b.duplicate_executions as f64,
        c.duplicate_executions as f64,
    );
    check("lost jobs", b.lost as f64, c.lost as f64);
    out
}

pub use crate::slo::parse_threshold;

/// Compares `cur` with `base`; with mismatched environments every metric is
/// incomparable unless `force`.
pub fn compare(base: &RunResult, cur: &RunResult, force: bool) -> Comparison {
    compare_with(base, cur, force, &[])
}

/// As [`compare`], with `flags` replacing the thresholds of the metrics they name; the
/// current run's workload thresholds (`[thresholds]`) replace the defaults before them.
pub fn compare_with(
    base: &RunResult,
    cur: &RunResult,
    force: bool,
    flags: &[(String, f64)],
) -> Comparison {
    let thresholds: Vec<(String, f64)> = flags.iter().chain(&cur.thresholds).cloned().collect();
    let mismatches = mismatches(base, cur);
    let blocked = !mismatches.is_empty() && !force;
    let mut cells = Vec::new();
    let mut only_in_current = Vec::new();
    for c in &cur.cells {
        let Some(b) = base.cells.iter().find(|b| key(b) == key(c)) else {
            only_in_current.push(key(c));
            continue;
        };
        let invalid: Vec<String> = [("baseline", b), ("current", c)]
            .iter()
            .flat_map(|(side, cell)| {
                cell.trials
                    .iter()
                    .flat_map(|t| &t.warnings)
                    .filter(|w| w.invalidates())
                    .map(move |w| format!("{side}: {w}"))
            })
            .collect();
        let metrics = Metric::compared()
            .filter_map(|m| {
                let (before, after) = (estimate(m.metric, b), estimate(m.metric, c));
                if before.is_none() && after.is_none() {
                    return None;
                }
                let threshold = thresholds
                    .iter()
                    .find(|t| t.0 == m.name)
                    .map(|t| t.1)
                    .or(m.compare_threshold)?;
                let (change, verdict) = judge(before, after, m.higher_is_better, threshold);
                Some(MetricChange {
                    metric: m.metric,
                    baseline: before,
                    current: after,
                    change,
                    verdict: if blocked || !invalid.is_empty() {
                        Verdict::Incomparable
                    } else {
                        verdict
                    },
                })
            })
            .collect();
        cells.push(CellComparison {
            key: key(c),
            invalid,
            metrics,
            correctness: correctness(b, c),
        });
    }
    let only_in_baseline = base
        .cells
        .iter()
        .map(key)
        .filter(|k| !cur.cells.iter().any(|c| &key(c) == k))
        .collect();
    Comparison {
        mismatches,
        forced: force,
        cells,
        only_in_baseline,
        only_in_current,
        gates: super::gates::check(cur),
    }
}

/// Exit codes of `compare`, also documented in docs/cli.md.
pub mod exit {
    /// A correctness failure: duplicates or lost jobs where the baseline had none.
    pub const CORRECTNESS: u8 = 1;
    /// An absolute gate of the current run failed.
    pub const GATE: u8 = 3;
    /// A metric regressed beyond its threshold and outside the noise.
    pub const REGRESSION: u8 = 4;
    /// The runs' environments differ (without `--force`), or no cell matched.
    pub const INCOMPARABLE: u8 = 5;
}

impl Comparison {
    pub fn regressions(&self) -> impl Iterator<Item = (&CellComparison, &MetricChange)> {
        self.cells.iter().flat_map(|c| {
            c.metrics
                .iter()
                .filter(|m| m.verdict == Verdict::Regressed)
                .map(move |m| (c, m))
        })
    }

    /// The exit code: correctness first, whatever the timings; then a failed gate; then
    /// incomparable; then regression; else 0.
    pub fn exit_code(&self) -> u8 {
        if self.cells.iter().any(|c| !c.correctness.is_empty()) {
            exit::CORRECTNESS
        } else if self.gates.iter().any(|g| !g.passed) {
            exit::GATE
        } else if (!self.mismatches.is_empty() && !self.forced) || self.cells.is_empty() {
            exit::INCOMPARABLE
        } else if self.regressions().next().is_some() {
            exit::REGRESSION
        } else {
            0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn est(value: f64, low: f64, high: f64) -> Option<Estimate> {
        Some(Estimate {
            value,
            low,
            high,
            noise_known: true,
        })
    }

    #[test]
    fn a_change_counts_only_beyond_the_threshold_and_the_noise() {
        // p99 up 50%, intervals apart: regressed.
        let (ch, v) = judge(est(10.0, 9.0, 11.0), est(15.0, 14.0, 16.0), false, 0.2);
        assert_eq!(v, Verdict::Regressed);
        assert!((ch.unwrap() - 0.5).abs() < 1e-9);
        // Up 50% but the intervals overlap: inside the noise, unchanged.
        let (_, v) = judge(est(10.0, 6.0, 16.0), est(15.0, 12.0, 20.0), false, 0.2);
        assert_eq!(v, Verdict::Unchanged);
        // Apart but under the threshold: unchanged.
        let (_, v) = judge(est(10.0, 9.9, 10.1), est(11.0, 10.9, 11.1), false, 0.2);
        assert_eq!(v, Verdict::Unchanged);
        // Throughput up 30%, apart: improved.
        let (_, v) = judge(est(100.0, 95.0, 105.0), est(130.0, 125.0, 135.0), true, 0.1);
        assert_eq!(v, Verdict::Improved);
        // Missing on one side: incomparable.
        assert_eq!(
            judge(None, est(1.0, 1.0, 1.0), true, 0.1).1,
            Verdict::Incomparable
        );
    }

    #[test]
    fn an_invalid_trial_is_never_called_a_regression() {
        let cell = |rate: f64, warnings| {
            let mut t = TrialResult {
                completed_per_s: rate,
                warnings,
                ..TrialResult::default()
            };
            t.counts.jobs_completed = 1;
            CellResult::fetch_order(crate::strategy::Strategy::PRODUCTION, 4, 1, vec![t])
        };
        let run = |c| RunResult {
            cells: vec![c],
            ..RunResult::default()
        };
        let base = run(cell(1000.0, Vec::new()));
        let slow = run(cell(500.0, Vec::new()));
        assert_eq!(compare(&base, &slow, false).exit_code(), exit::REGRESSION);
        let busy = run(cell(
            500.0,
            vec![crate::warnings::Warning::HarnessBusy {
                cpu_share: 0.95,
                threads: 1,
            }],
        ));
        let c = compare(&base, &busy, false);
        assert_eq!(c.exit_code(), 0);
        assert_eq!(c.cells[0].metrics[0].verdict, Verdict::Incomparable);
        assert!(c.cells[0].invalid[0].starts_with("current: claimbench used 95%"));
    }

    fn reps(rates: &[f64], dups: u64) -> RunResult {
        let trials = rates
            .iter()
            .map(|&r| {
                let mut t = TrialResult::completing(r);
                t.duplicates.ledger.duplicate_claims = dups;
                t
            })
            .collect();
        let mut run = RunResult {
            cells: vec![CellResult::fetch_order(
                crate::strategy::Strategy::PRODUCTION,
                4,
                1,
                trials,
            )],
            ..RunResult::default()
        };
        run.environment.logical_cores = 2;
        run
    }

    #[test]
    fn workload_thresholds_apply_and_flags_replace_them() {
        let base = reps(&[1000.0, 1020.0, 990.0, 1010.0, 1005.0], 0);
        let mut drop = reps(&[700.0, 714.0, 693.0, 707.0, 703.0], 0);
        drop.thresholds = vec![("throughput".into(), 0.4)];
        assert_eq!(
            compare(&base, &drop, false).exit_code(),
            0,
            "30% is under 40%"
        );
        let flag = [("throughput".to_string(), 0.2)];
        assert_eq!(
            compare_with(&base, &drop, false, &flag).exit_code(),
            exit::REGRESSION
        );
    }

    #[test]
    fn a_backend_only_one_run_has_is_a_mismatch() {
        let mut base = reps(&[1000.0], 0);
        let mut cur = base.clone();
        let target = |backend, version: &str| crate::results::TargetRecord {
            backend,
            target: String::new(),
            embedded: true,
            session_settings: Vec::new(),
            standbys: Vec::new(),
            cluster: None,
            pooler: None,
            their_pooler: None,
            server: crate::backend::ServerInfo {
                version: version.into(),
                ..Default::default()
            },
        };
        base.environment.targets = vec![target(crate::backend::BackendKind::Postgres, "15.20")];
        cur.environment.targets = vec![
            target(crate::backend::BackendKind::Postgres, "15.20"),
            target(crate::backend::BackendKind::Mysql, "10.11"),
        ];
        assert_eq!(
            mismatches(&base, &cur),
            vec!["mysql server: (none) -> 10.11"]
        );
        cur.environment.targets[0].server.version = "16.1".into();
        assert_eq!(mismatches(&base, &cur)[0], "postgres server: 15.20 -> 16.1");
    }

    #[test]
    fn the_issues_fixture_cases() {
        let base = reps(&[1000.0, 1020.0, 990.0, 1010.0, 1005.0], 0);
        // Identical: unchanged, success.
        assert_eq!(compare(&base, &base, false).exit_code(), 0);
        // A 30% throughput drop: regressed.
        let drop = reps(&[700.0, 714.0, 693.0, 707.0, 703.0], 0);
        let c = compare(&base, &drop, false);
        assert_eq!(c.exit_code(), exit::REGRESSION);
        assert_eq!(c.cells[0].metrics[0].verdict, Verdict::Regressed);
        // Inside the noise: unchanged.
        let noisy = reps(&[900.0, 1150.0, 980.0, 1060.0, 940.0], 0);
        assert_eq!(compare(&base, &noisy, false).exit_code(), 0);
        // Different core counts: incomparable.
        let mut bigger = base.clone();
        bigger.environment.logical_cores = 8;
        let c = compare(&base, &bigger, false);
        assert_eq!(c.exit_code(), exit::INCOMPARABLE);
        assert_eq!(c.mismatches, vec!["logical cores: 2 -> 8".to_string()]);
        // One duplicate: a correctness failure even though every timing improved.
        let faster_but_dup = reps(&[1500.0, 1510.0, 1490.0, 1505.0, 1495.0], 1);
        let c = compare(&base, &faster_but_dup, false);
        assert_eq!(c.cells[0].metrics[0].verdict, Verdict::Improved);
        assert_eq!(c.exit_code(), exit::CORRECTNESS);
    }

    /// One figure, one value: on the three-repetition fixture, every metric compare
    /// judges has the value the catalogue gives the cell (summary.md, cells.csv, the
    /// terminal and history read that one), its interval around it.
    #[test]
    fn compare_reads_every_metric_as_the_catalogue_does() {
        let path =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/three-reps.json");
        let r = RunResult::read(&path).unwrap();
        let (mut checked, mut maxima) = (0, 0);
        for c in &r.cells {
            let figures = CellFigures::of(c);
            for e in Metric::compared() {
                let (estimated, catalogue) = (estimate(e.metric, c), figures.value(e.metric));
                assert_eq!(
                    estimated.map(|x| x.value),
                    catalogue,
                    "{} of {} {}",
                    e.name,
                    c.strategy,
                    c.workers
                );
                if let Some(x) = estimated {
                    assert!(x.low <= x.value && x.value <= x.high, "{} {x:?}", e.name);
                    checked += 1;
                    // The case that drifted: a maximum is the largest repetition's, not
                    // the mean of the repetitions' maxima.
                    maxima += usize::from(e.combine == Combine::Max);
                }
            }
        }
        assert!(checked >= 4 * r.cells.len(), "{checked} figures");
        assert!(maxima > 0, "the fixture has a cell with arrivals");
    }

    #[test]
    fn the_quantile_interval_brackets_the_percentile_and_narrows_with_samples() {
        let summary = |n: u64| {
            let mut h = crate::metrics::new_histogram();
            for i in 1..=n {
                h.record(i * 1000 / n.max(1) + 1000).unwrap();
            }
            HistogramSummary::from_histogram(&h)
        };
        let small = quantile([summary(200)].iter(), 0.99).unwrap();
        let large = quantile([summary(20_000)].iter(), 0.99).unwrap();
        assert!(small.low <= small.value && small.value <= small.high);
        assert!(large.high - large.low < small.high - small.low);
        assert!(quantile([HistogramSummary::default()].iter(), 0.99).is_none());
    }
}
