//! `summary.md`: the table a person reads first, in GitHub-flavoured Markdown (fit for a
//! CI job summary), rendered from a `RunResult` alone. The same text is printed at the
//! end of a run.

use crate::metrics::merge_summaries;
use crate::results::{CellResult, RunResult, TrialResult};
use std::fmt::Write;

/// One line per finished trial, for the progress log.
pub fn trial_line(t: &TrialResult) -> String {
    format!(
        "{:.0} claimed/s, {:.0} completed/s, claim p50 {} p99 {}, dup claims {}, dup exec {}/{}, lost {}{}",
        t.claimed_per_s,
        t.completed_per_s,
        ms(t.claim_latency.p50_us),
        ms(t.claim_latency.p99_us),
        t.duplicates.ledger.duplicate_claims,
        t.duplicates.ledger.duplicate_executions,
        t.duplicates.effects_duplicate_executions,
        t.reconciliation.lost,
        if t.interrupted { " (interrupted)" } else { "" }
    )
}

fn ms(us: u64) -> String {
    format!("{:.2} ms", us as f64 / 1000.0)
}

fn mean(xs: impl Iterator<Item = f64>) -> (f64, f64) {
    let v: Vec<f64> = xs.collect();
    if v.is_empty() {
        return (0.0, 0.0);
    }
    let m = v.iter().sum::<f64>() / v.len() as f64;
    let var = if v.len() > 1 {
        v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (v.len() - 1) as f64
    } else {
        0.0
    };
    (m, var.sqrt())
}

/// A rate with its spread across repetitions: "12345 ±3%".
fn rate(cell: &CellResult, f: impl Fn(&TrialResult) -> f64) -> String {
    let (m, sd) = mean(cell.trials.iter().map(f));
    if cell.trials.len() > 1 && m > 0.0 {
        format!("{m:.0} ±{:.0}%", sd / m * 100.0)
    } else {
        format!("{m:.0}")
    }
}

fn sum(cell: &CellResult, f: impl Fn(&TrialResult) -> u64) -> u64 {
    cell.trials.iter().map(f).sum()
}

fn merged_us(
    cell: &CellResult,
    f: impl Fn(&TrialResult) -> &crate::metrics::HistogramSummary,
    q: fn(&crate::metrics::HistogramSummary) -> u64,
) -> String {
    match merge_summaries(cell.trials.iter().map(f)) {
        Ok(h) if h.count > 0 => format!("{:.2}", q(&h) as f64 / 1000.0),
        _ => "–".into(),
    }
}

pub fn render(r: &RunResult) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# claimbench run `{}`\n", r.run_id);
    let env = &r.environment;
    let _ = writeln!(
        out,
        "Workload **{}** (`{}`, sha256 `{}`) on {} ({}), {} cores, claimbench {}{}.\n",
        r.workload.name,
        r.workload.path,
        &r.workload.sha256[..r.workload.sha256.len().min(12)],
        env.target,
        env.server.version.split(',').next().unwrap_or_default(),
        env.logical_cores,
        env.claimbench_version,
        env.git_revision
            .as_deref()
            .map(|g| format!(" ({g})"))
            .unwrap_or_default(),
    );
    if r.interrupted {
        let _ = writeln!(
            out,
            "**Partial run**: {}.\n",
            r.stop_reason.as_deref().unwrap_or("stopped early")
        );
    }
    let (header, rows) = table(r);
    let _ = writeln!(out, "| {} |", header.join(" | "));
    let align: Vec<&str> = header
        .iter()
        .enumerate()
        .map(|(i, _)| if i < 3 { "---" } else { "--:" })
        .collect();
    let _ = writeln!(out, "|{}|", align.join("|"));
    for row in rows {
        let _ = writeln!(out, "| {} |", row.join(" | "));
    }
    let warnings = warning_lines(r);
    if !warnings.is_empty() {
        out.push_str("\n## Warnings\n\n");
        for w in warnings {
            out.push_str(&w);
            out.push('\n');
        }
    }
    out.push_str(
        "\nclaimed/s and completed/s are steady-state means after warm-up (± is the spread across repetitions); latencies merge every repetition's histogram; dup claims come from the claim ledger, dup exec from the ledger and from the effects table (they must agree).\n",
    );
    out
}

pub const HEADER: [&str; 17] = [
    "backend",
    "strategy",
    "layout",
    "workers",
    "batch",
    "reps",
    "claimed/s",
    "completed/s",
    "claim p50 ms",
    "claim p99 ms",
    "queue wait p99 ms",
    "oldest pending p99 ms",
    "dup claims",
    "dup exec ledger/effects",
    "lost",
    "lock wait",
    "CPU µs/claim",
];

/// The per-cell table every report shows: one row per cell, repetitions merged.
pub fn table(r: &RunResult) -> ([&'static str; 17], Vec<Vec<String>>) {
    let rows = r
        .cells
        .iter()
        .map(|c| {
            let (oldest, _) = mean(c.trials.iter().map(|t| t.oldest_pending.p99_ms));
            let (lock_share, _) = mean(c.trials.iter().map(|t| t.locks.lock_wait_share));
            let (cpu, _) = mean(c.trials.iter().map(|t| t.resources.client_cpu_us_per_claim));
            vec![
                c.backend.to_string(),
                c.strategy.to_string(),
                c.index_layout.clone(),
                c.workers.to_string(),
                c.batch_size.to_string(),
                c.trials.len().to_string(),
                rate(c, |t| t.claimed_per_s),
                rate(c, |t| t.completed_per_s),
                merged_us(c, |t| &t.claim_latency, |h| h.p50_us),
                merged_us(c, |t| &t.claim_latency, |h| h.p99_us),
                merged_us(c, |t| &t.queue_wait, |h| h.p99_us),
                format!("{oldest:.0}"),
                sum(c, |t| t.duplicates.ledger.duplicate_claims).to_string(),
                format!(
                    "{}/{}",
                    sum(c, |t| t.duplicates.ledger.duplicate_executions),
                    c.trials
                        .iter()
                        .map(|t| t.duplicates.effects_duplicate_executions)
                        .sum::<i64>()
                ),
                c.trials
                    .iter()
                    .map(|t| t.reconciliation.lost)
                    .sum::<i64>()
                    .to_string(),
                format!("{:.1}%", lock_share * 100.0),
                format!("{cpu:.1}"),
            ]
        })
        .collect();
    (HEADER, rows)
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
            lines.push(format!(
                "- {} {} w={} b={} ({which}): {first}",
                c.strategy, c.index_layout, c.workers, c.batch_size
            ));
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::BackendKind;
    use crate::metrics::{HistogramSummary, new_histogram};
    use crate::strategy::Strategy;
    use crate::warnings::Warning;

    fn trial(rep: u32, claimed: f64, latencies_us: &[u64], warnings: Vec<Warning>) -> TrialResult {
        let mut h = new_histogram();
        for &v in latencies_us {
            h.record(v).unwrap();
        }
        let mut t = TrialResult {
            repetition: rep,
            claimed_per_s: claimed,
            completed_per_s: claimed / 2.0,
            claim_latency: HistogramSummary::from_histogram(&h),
            warnings,
            ..TrialResult::default()
        };
        t.duplicates.ledger.duplicate_claims = 3;
        t
    }

    #[test]
    fn rows_merge_repetitions_and_warnings_fold_per_cell() {
        let few = |n| Warning::FewSamples { claims: n };
        let r = RunResult {
            run_id: "20260101-000000-t".into(),
            workload: crate::results::WorkloadRecord {
                name: "t".into(),
                sha256: "abcdef0123456789".into(),
                ..Default::default()
            },
            cells: vec![CellResult {
                backend: BackendKind::Postgres,
                strategy: Strategy::Naive,
                index_layout: "fetch-order".into(),
                workers: 4,
                batch_size: 10,
                trials: vec![
                    trial(0, 900.0, &[1000, 2000], vec![few(2)]),
                    trial(1, 1100.0, &[3000, 4000], vec![few(3)]),
                ],
            }],
            ..RunResult::default()
        };
        let md = render(&r);
        // mean 1000, sample sd 141 = 14%; p50 over both reps' histograms: 2 ms.
        assert!(
            md.contains(
                "| postgres | naive | fetch-order | 4 | 10 | 2 | 1000 ±14% | 500 ±14% | 2.00 |"
            ),
            "{md}"
        );
        assert!(
            md.contains("| 6 | 0/0 | 0 |"),
            "dup claims summed over reps: {md}"
        );
        assert!(
            md.contains("- naive fetch-order w=4 b=10 (2 of 2 reps, first rep 1): only 2 claims"),
            "{md}"
        );
        assert_eq!(md.matches("only ").count(), 1, "folded into one line: {md}");
    }

    #[test]
    fn an_empty_cell_renders_dashes_not_a_panic() {
        let r = RunResult {
            workload: crate::results::WorkloadRecord::default(),
            cells: vec![CellResult {
                backend: BackendKind::Postgres,
                strategy: Strategy::Production,
                index_layout: "pk-only".into(),
                workers: 1,
                batch_size: 1,
                trials: vec![TrialResult::default()],
            }],
            ..RunResult::default()
        };
        let md = render(&r);
        assert!(md.contains("| 0 | 0 | – | – | – |"), "{md}");
    }
}
