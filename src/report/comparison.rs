//! A comparison of two runs as Markdown (for a CI job summary): what fails first
//! (correctness, then regressions), then every metric of every matched cell.

use super::plots::Rendered;
use crate::analysis::compare::{CellComparison, Comparison, Estimate, MetricChange, Verdict};
use std::fmt::Write;

/// An estimate in its metric's unit (the catalogue's), with its interval when known.
fn est(e: &Option<Estimate>, metric: crate::metric::Metric) -> String {
    let show = |v: f64| metric.show(v);
    match e {
        Some(e) if e.noise_known && e.low != e.high => {
            format!("{} [{} – {}]", show(e.value), show(e.low), show(e.high))
        }
        Some(e) => show(e.value),
        None => "–".into(),
    }
}

/// A titled bullet list, or nothing when `items` is empty.
fn bullets(out: &mut String, title: &str, items: &[String]) {
    if !items.is_empty() {
        let _ = writeln!(out, "{title}\n");
        for i in items {
            let _ = writeln!(out, "- {}", crate::markdown::escape(i));
        }
        out.push('\n');
    }
}

/// Each cell's entries of one list (correctness failures, invalid trials), named by cell.
fn per_cell(c: &Comparison, list: fn(&CellComparison) -> &Vec<String>) -> Vec<String> {
    c.cells
        .iter()
        .flat_map(|cell| {
            list(cell)
                .iter()
                .map(move |x| format!("{}: {x}", cell.key.join(" ")))
        })
        .collect()
}

/// One metric's row: cell, metric, baseline, current, change, verdict.
fn metric_cells(cell: &[String], m: &MetricChange) -> Vec<String> {
    vec![
        cell.join(" "),
        m.metric.to_string(),
        est(&m.baseline, m.metric),
        est(&m.current, m.metric),
        m.change
            .map_or("–".into(), |x| format!("{:+.1}%", x * 100.0)),
        m.verdict.to_string(),
    ]
}

fn metric_row(cell: &[String], m: &MetricChange) -> String {
    let mut cells = metric_cells(cell, m);
    if m.verdict == Verdict::Regressed {
        cells[5] = format!("**{}**", cells[5]);
    }
    let cells: Vec<String> = cells.iter().map(|c| crate::markdown::cell(c)).collect();
    format!("| {} |", cells.join(" | "))
}

fn outcome(c: &Comparison) -> (&'static str, u8) {
    let code = c.exit_code();
    let what = match code {
        0 => "no regression",
        1 => "correctness failure",
        3 => "gate failed",
        4 => "performance regression",
        _ => "incomparable",
    };
    (what, code)
}

/// What fails the comparison, as (title, items) lists in the order a reader needs them.
fn failures(c: &Comparison) -> Vec<(&'static str, Vec<String>)> {
    let environments = if c.forced {
        "Environments differ (compared anyway: --force):"
    } else {
        "Environments differ, so every metric is incomparable (--force compares anyway):"
    };
    let failed_gates = c
        .gates
        .iter()
        .filter(|g| !g.passed)
        .map(|g| {
            format!(
                "{}: {} measured {}",
                g.gate,
                g.cell.join(" "),
                g.measured.as_deref().unwrap_or("–")
            )
        })
        .collect();
    vec![
        (environments, c.mismatches.clone()),
        ("Correctness", per_cell(c, |x| &x.correctness)),
        ("Invalid trials (not compared)", per_cell(c, |x| &x.invalid)),
        ("Failed gates", failed_gates),
    ]
}

/// The comparison section `compare --report` puts at the top of the current run's
/// report.html: the outcome, what fails it, the regressions, and the before/after plots.
pub fn html_section(c: &Comparison, baseline: &str, plots: &[Rendered]) -> String {
    use super::blocks::Section;
    use super::page::{Figure, render};
    #[derive(serde::Serialize)]
    struct Failure {
        title: String,
        items: Vec<String>,
    }
    /// Everything comparison.html shows.
    #[derive(serde::Serialize)]
    struct View<'a> {
        baseline: &'a str,
        outcome: &'a str,
        code: u8,
        failures: Vec<Failure>,
        regressions: Option<Section>,
        figures: Vec<Figure>,
    }
    let (what, code) = outcome(c);
    let failures: Vec<Failure> = failures(c)
        .into_iter()
        .filter(|(_, items)| !items.is_empty())
        .map(|(title, items)| Failure {
            title: title.trim_end_matches(':').to_string(),
            items,
        })
        .collect();
    let rows: Vec<Vec<String>> = c
        .regressions()
        .map(|(cell, m)| metric_cells(&cell.key, m))
        .collect();
    let regressions = (!rows.is_empty()).then(|| {
        Section::table(
            "Regressions",
            &["cell", "metric", "baseline", "current", "change", "verdict"],
            &rows,
            2,
            "Each beyond its threshold in the bad direction, with non-overlapping 95% intervals.",
        )
    });
    let view = View {
        baseline,
        outcome: what,
        code,
        failures,
        regressions,
        figures: plots.iter().map(Figure::of).collect(),
    };
    render("comparison.html", &view)
}

const METRIC_HEADER: &str =
    "| cell | metric | baseline | current | change | verdict |\n|---|---|--:|--:|--:|---|";

/// The comparison as Markdown: the outcome, then what fails it (environment,
/// correctness, invalid trials, gates, regressions), then every metric.
pub fn markdown(c: &Comparison) -> String {
    let mut out = String::new();
    let (what, code) = outcome(c);
    let _ = writeln!(out, "# claimbench compare\n\n**{what}** (exit {code})\n");
    for (i, (title, items)) in failures(c).into_iter().enumerate() {
        // The environment line is a lead-in; the rest are sections.
        let title = if i == 0 {
            title.to_string()
        } else {
            format!("## {title}")
        };
        bullets(&mut out, &title, &items);
    }
    let regressions: Vec<String> = c
        .regressions()
        .map(|(cell, m)| metric_row(&cell.key, m))
        .collect();
    if !regressions.is_empty() {
        let _ = writeln!(
            out,
            "## Regressions\n\n{METRIC_HEADER}\n{}\n",
            regressions.join("\n")
        );
    }
    let _ = writeln!(out, "## Every metric\n\n{METRIC_HEADER}");
    for cell in &c.cells {
        for m in &cell.metrics {
            let _ = writeln!(out, "{}", metric_row(&cell.key, m));
        }
    }
    out.push('\n');
    let keys = |k: &[Vec<String>]| k.iter().map(|k| k.join(" ")).collect::<Vec<_>>();
    bullets(
        &mut out,
        "Only in the baseline run (not compared):",
        &keys(&c.only_in_baseline),
    );
    bullets(
        &mut out,
        "Only in the current run (not compared):",
        &keys(&c.only_in_current),
    );
    let _ = writeln!(
        out,
        "A metric regresses when it moved beyond its threshold in the bad direction and the two 95% intervals do not overlap (throughput: bootstrap over repetitions; percentiles: order-statistic bounds from the merged HDR histograms). Default thresholds: {}.",
        crate::analysis::compare::thresholds()
            .iter()
            .map(|(n, t)| format!("{n} {:.0}%", t * 100.0))
            .collect::<Vec<_>>()
            .join(", ")
    );
    out
}

/// The comparison as JUnit XML, for CI test reporters: one test case per cell and
/// metric (failed when it regressed, skipped when incomparable), one per cell for
/// correctness, and one per gate and cell.
pub fn junit(c: &Comparison) -> Result<String, quick_junit::SerializeError> {
    use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite};
    let failure = |message: String| {
        let mut s = TestCaseStatus::non_success(NonSuccessKind::Failure);
        s.set_message(message);
        s
    };
    let mut metrics = TestSuite::new("claimbench compare: metrics");
    for cell in &c.cells {
        let name = cell.key.join(" ");
        for m in &cell.metrics {
            let change = m
                .change
                .map_or("–".into(), |x| format!("{:+.1}%", x * 100.0));
            let status = match m.verdict {
                Verdict::Regressed => failure(format!("{} regressed {change}", m.metric)),
                Verdict::Incomparable => {
                    let mut s = TestCaseStatus::skipped();
                    s.set_message("incomparable");
                    s
                }
                _ => TestCaseStatus::success(),
            };
            metrics.add_test_case(TestCase::new(format!("{name} {}", m.metric), status));
        }
        let status = if cell.correctness.is_empty() {
            TestCaseStatus::success()
        } else {
            failure(cell.correctness.join("; "))
        };
        metrics.add_test_case(TestCase::new(format!("{name} correctness"), status));
    }
    let mut gates = TestSuite::new("claimbench compare: gates");
    for g in &c.gates {
        let status = if g.passed {
            TestCaseStatus::success()
        } else {
            failure(format!("measured {}", g.measured.as_deref().unwrap_or("–")))
        };
        gates.add_test_case(TestCase::new(
            format!("{}: {}", g.gate, g.cell.join(" ")),
            status,
        ));
    }
    let mut report = Report::new("claimbench");
    report.add_test_suite(metrics);
    if !c.gates.is_empty() {
        report.add_test_suite(gates);
    }
    report.to_string()
}
