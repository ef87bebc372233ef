//! The answers sections of every report: the verdict, the recommendation against the
//! SLOs, the sustainable arrival rates and the scalability fits, as Markdown text and as
//! rows that the HTML report lays out the same way.

use crate::analysis::RunAnalysis;
use crate::analysis::figures::{CellFigures, fmt_ms};
use crate::analysis::paired::Paired;
use crate::analysis::recommend::Recommendation;
use crate::analysis::usl;
use crate::results::{CellResult, RunResult};
use crate::slo::Slo;
use crate::strategy::Strategy;
use std::fmt::Write;

/// Header and rows of one recommendation's supporting table.
pub fn recommendation_rows(rec: &Recommendation) -> (Vec<&'static str>, Vec<Vec<String>>) {
    // A claim-only phase completes nothing: its throughput is what it claimed.
    let claimed = rec.candidates.iter().all(|c| c.figures.claim_only);
    let header = vec![
        "workers",
        "batch",
        if claimed { "claimed/s" } else { "completed/s" },
        "claim p99",
        "queue wait p99",
        "oldest pending max",
        "meets SLOs",
    ];
    let opt = |v: Option<f64>| v.map_or("–".to_string(), fmt_ms);
    let rows = rec
        .candidates
        .iter()
        .map(|c| {
            let mark = if Some((c.workers, c.batch)) == rec.recommended {
                "**yes (recommended)**".to_string()
            } else if !c.judged {
                "– (nothing to judge by)".to_string()
            } else if c.misses.is_empty() {
                "yes".to_string()
            } else {
                format!("no: {}", c.misses.join("; "))
            };
            vec![
                c.workers.to_string(),
                c.batch.to_string(),
                format!("{:.0}", c.figures.throughput),
                opt(c.figures.claim_p99_ms),
                opt(c.figures.queue_wait_p99_ms),
                opt(c.figures.oldest_pending_max_ms),
                mark,
            ]
        })
        .collect();
    (header, rows)
}

/// What `claimbench recommend` prints, and the report's Recommendation section.
pub fn recommendation_text(recs: &[Recommendation], slos: &[Slo]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "SLOs: {}\n",
        slos.iter()
            .map(Slo::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    );
    for rec in recs {
        let _ = writeln!(out, "{}\n", rec.sentence(slos));
        let (header, rows) = recommendation_rows(rec);
        crate::markdown::table(&mut out, &header, &rows, 0);
        out.push('\n');
    }
    out
}

/// One row per searched cell: the sustained rate and the steps that found it.
pub fn search_rows(r: &RunResult) -> Option<(Vec<&'static str>, Vec<Vec<String>>)> {
    if r.rate_searches.is_empty() {
        return None;
    }
    let mut header = crate::results::KEY_HEADER.to_vec();
    header.extend(["sustained arrivals/s", "steps (rate: held?)"]);
    let rows = r
        .rate_searches
        .iter()
        .map(|s| {
            vec![
                s.phase.clone(),
                s.backend.to_string(),
                s.strategy.to_string(),
                s.index_layout.clone(),
                s.workers.to_string(),
                s.batch_size.to_string(),
                match s.sustained_per_s {
                    Some(x) if s.bracketed() => format!("{x:.0}"),
                    Some(x) => format!(">= {x:.0}"),
                    None => "none".into(),
                },
                s.steps
                    .iter()
                    .map(|t| format!("{:.0}: {}", t.rate_per_s, if t.held { "yes" } else { "no" }))
                    .collect::<Vec<_>>()
                    .join(", "),
            ]
        })
        .collect();
    Some((header, rows))
}

/// Worker sweeps with enough points for a USL fit: (label, strategy, points, fit).
pub type Sweep = (String, Strategy, Vec<(f64, f64)>, usl::UslFit);

/// Every worker sweep (same phase, backend, strategy, layout, batch, no arrivals) that
/// the USL can be fitted to.
pub fn sweeps(r: &RunResult) -> Vec<Sweep> {
    let mut keys: Vec<&CellResult> = Vec::new();
    for c in r.cells.iter().filter(|c| !c.has_arrivals()) {
        if !keys.iter().any(|k| same_sweep(k, c)) {
            keys.push(c);
        }
    }
    keys.into_iter()
        .filter_map(|k| {
            let mut pts: Vec<(f64, f64)> = r
                .cells
                .iter()
                .filter(|c| same_sweep(k, c))
                .map(|c| (c.workers as f64, CellFigures::of(c).completed_per_s))
                .collect();
            pts.sort_by(|a, b| a.0.total_cmp(&b.0));
            let fit = usl::fit(&pts)?;
            let label = format!(
                "{}{} {} {} b={}",
                if k.phase.is_empty() {
                    String::new()
                } else {
                    format!("{} ", k.phase)
                },
                k.backend,
                k.strategy,
                k.index_layout,
                k.batch_size
            );
            Some((label, k.strategy.clone(), pts, fit))
        })
        .collect()
}

fn same_sweep(a: &CellResult, b: &CellResult) -> bool {
    a.phase == b.phase
        && a.backend == b.backend
        && a.strategy == b.strategy
        && a.index_layout == b.index_layout
        && a.batch_size == b.batch_size
        && !b.has_arrivals()
}

pub fn usl_rows(r: &RunResult) -> Option<(Vec<&'static str>, Vec<Vec<String>>)> {
    let rows: Vec<Vec<String>> = sweeps(r)
        .into_iter()
        .map(|(label, _, _, f)| {
            vec![
                label,
                format!("{:.0}", f.lambda),
                format!("{:.4}", f.sigma),
                format!("{:.5}", f.kappa),
                format!("{:.3}", f.r_squared),
                f.peak_workers.map_or("none".into(), |p| format!("{p:.0}")),
            ]
        })
        .collect();
    (!rows.is_empty()).then(|| {
        (
            vec![
                "sweep",
                "λ jobs/s",
                "σ contention",
                "κ coherency",
                "R²",
                "peak workers",
            ],
            rows,
        )
    })
}

/// Cells with repetitions: the 95% bootstrap interval of their throughput and claim p99.
pub fn confidence_rows(r: &RunResult) -> Option<(Vec<&'static str>, Vec<Vec<String>>)> {
    use crate::analysis::bootstrap::{disagreement, mean_interval};
    let rows: Vec<Vec<String>> = r
        .cells
        .iter()
        .filter(|c| c.trials.len() > 1)
        .map(|c| {
            let rates = CellFigures::trial_throughputs(c);
            let p99: Vec<f64> = c
                .trials
                .iter()
                .map(|t| t.claim_latency.p99_us as f64 / 1e3)
                .collect();
            let show = |xs: &[f64], digits: usize| match mean_interval(xs) {
                Some(i) => format!(
                    "{:.d$} [{:.d$} – {:.d$}]",
                    i.mean,
                    i.low,
                    i.high,
                    d = digits
                ),
                None => "–".into(),
            };
            let mut row = crate::results::cell_key(c);
            row.push(c.trials.len().to_string());
            row.push(show(&rates, 0));
            row.push(show(&p99, 2));
            row.push(disagreement(c).unwrap_or_else(|| "agree".into()));
            row
        })
        .collect();
    let mut header = crate::results::KEY_HEADER.to_vec();
    header.extend([
        "reps",
        "jobs/s, 95% CI",
        "claim p99 ms, 95% CI",
        "repetitions",
    ]);
    (!rows.is_empty()).then_some((header, rows))
}

pub const CONFIDENCE_HOW: &str = "For cells with two or more repetitions: the mean over repetitions of throughput (completed jobs/s, claimed in claim-only phases) and of each repetition's claim p99, with a 95% percentile-bootstrap interval that resamples whole repetitions (2,000 resamples, seeded). With 3 repetitions the interval is coarse; more repetitions narrow it. Repetitions disagree when their throughputs spread more than 10% of the mean (coefficient of variation) or their p99s differ more than 2x: the verdict names such cells.";

/// Every gate checked on every cell it applies to, breaches first.
pub fn gate_rows(a: &RunAnalysis) -> Option<(Vec<&'static str>, Vec<Vec<String>>)> {
    let mut results = a.gates.clone();
    if results.is_empty() {
        return None;
    }
    results.sort_by_key(|g| g.passed);
    let rows = results
        .into_iter()
        .map(|g| {
            vec![
                g.gate,
                g.cell.join(" "),
                g.measured.unwrap_or_else(|| "–".into()),
                if g.passed { "pass" } else { "**FAIL**" }.to_string(),
            ]
        })
        .collect();
    Some((vec!["gate", "cell", "measured", "result"], rows))
}

/// One row per paired cell and metric: both sides' figures, the rounds' B/A with its
/// interval, and the verdict.
pub fn paired_rows(judged: &Paired) -> Option<(Vec<&'static str>, Vec<Vec<String>>)> {
    if judged.cells.is_empty() {
        return None;
    }
    let mut rows = Vec::new();
    for c in &judged.cells {
        let [phase, backend, strategy, layout, workers, batch] = &c.key[..] else {
            continue;
        };
        // The variants in place of what they replace in the key.
        let shown = |x: &String| match x == &c.a {
            true => format!("{} → {}", c.a, c.b),
            false => x.clone(),
        };
        let cell = format!(
            "{phase} {} {} {} w={workers} b={batch}",
            shown(backend),
            shown(strategy),
            shown(layout)
        );
        for m in &c.metrics {
            let ratio = match m.ratio {
                Some(x) => format!("×{:.3} ({:.3}–{:.3})", x.ratio, x.low, x.high),
                None => format!("– ({} rounds)", m.rounds),
            };
            let verdict = match m.verdict {
                crate::analysis::compare::Verdict::Regressed => "**regressed**".to_string(),
                v => v.to_string(),
            };
            rows.push(vec![
                cell.clone(),
                m.metric.name().to_string(),
                m.metric.show(m.a),
                m.metric.show(m.b),
                ratio,
                format!("{:.0} %", c.threshold * 100.0),
                verdict,
            ]);
        }
    }
    let confidence = format!("{:.2} %", judged.confidence * 100.0);
    rows.iter_mut()
        .for_each(|row| row.insert(5, confidence.clone()));
    Some((
        vec![
            "cell: A → B",
            "metric",
            "A",
            "B",
            "B/A (interval)",
            "confidence",
            "threshold",
            "verdict",
        ],
        rows,
    ))
}

pub const PAIRED_HOW: &str = "A paired block runs its two variants interleaved, one repetition of each per round, A first in even rounds and B first in odd ones (A B B A …), each trial on a freshly reset schema. B/A is the geometric mean of the rounds' ratios with its Student-t interval over the rounds, at a confidence that keeps the whole run's chance of a false alarm at 5 % (Bonferroni over every metric of every pair). A metric regressed when the interval lies wholly on its worse side of 1 and the ratio is beyond the threshold (`paired_threshold`); a regression fails the run: exit code 4.";

pub const GATES_HOW: &str = "Each [[gate]] of the workload on every cell it names that can measure it (queue wait and oldest-pending age only where jobs arrived). A failed gate fails the run: exit code 3.";

pub const SEARCH_HOW: &str = "Per searched cell, the highest open-loop Poisson arrival rate at which the phase's queue-wait and oldest-pending SLOs held over the measured window (or queue_wait_p99<=1s when the workload sets none). The rate doubles from the start until a step fails, then the bracket is bisected; each step is its own trial, listed in the table above under the phase's name. \">=\" marks a rate no step exceeded: the limit lies above it.";

pub const USL_HOW: &str = "The Universal Scalability Law X(N) = λN / (1 + σ(N−1) + κN(N−1)) fitted to each worker sweep of 4 or more worker counts: λ is one worker's throughput, σ the share lost to contention (serialised work such as lock queues), κ the coherency cost that makes throughput fall past the peak (N* = √((1−σ)/κ)). An R² well below 1 means the law does not describe the sweep; do not extrapolate from it.";
