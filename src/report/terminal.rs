//! The screen a run ends with: what a person reads in a minute — the run in one line,
//! the notes on its servers, the verdict, one line per cell, the gates, the warnings
//! (the first few) and where the rest is. summary.md and report.html hold everything; `run --verbose`
//! prints summary.md instead.

use super::tables::{server_notes, targets};
use super::view;
use crate::analysis::figures::fmt_ms;
use crate::results::RunResult;
use std::fmt::Write;

/// Prose is wrapped to this width; the cell table is as wide as its columns.
const WIDTH: usize = 100;
/// Warnings shown before "and N more".
const WARNINGS_SHOWN: usize = 5;

/// `text` (Markdown emphasis and code marks dropped) wrapped to [`WIDTH`], the first
/// line after `first`, the others indented to match.
fn para(out: &mut String, first: &str, text: &str) {
    let plain = text.replace("**", "").replace('`', "");
    let indent = " ".repeat(first.chars().count());
    // Break at spaces only: a URL, a path or a version string stays whole.
    let opts = textwrap::Options::new(WIDTH)
        .initial_indent(first)
        .subsequent_indent(&indent)
        .word_separator(textwrap::WordSeparator::AsciiSpace)
        .word_splitter(textwrap::WordSplitter::NoHyphenation)
        .break_words(false);
    for line in textwrap::wrap(&plain, opts) {
        let _ = writeln!(out, "{line}");
    }
}

pub fn render(r: &RunResult) -> String {
    let v = view::RunView::of(r);
    let mut out = String::new();
    let env = &r.environment;
    para(
        &mut out,
        "",
        &format!(
            "claimbench run {}: workload {} on {}, {} cores.",
            r.run_id,
            r.workload.name,
            targets(r),
            env.logical_cores
        ),
    );
    for (label, text) in server_notes(r) {
        out.push('\n');
        para(&mut out, &format!("{label}: "), &text);
    }
    if r.interrupted {
        out.push('\n');
        para(
            &mut out,
            "Partial run: ",
            r.stop_reason.as_deref().unwrap_or("stopped early"),
        );
    }
    if !v.verdict.is_empty() {
        out.push_str("\nVerdict\n");
        for s in &v.verdict {
            para(&mut out, "  - ", s);
        }
    }
    let (header, rows) = cell_table(&v);
    if !rows.is_empty() {
        out.push('\n');
        aligned(&mut out, &header, &rows);
        if rows
            .iter()
            .any(|row| row.last().is_some_and(|m| !m.is_empty()))
        {
            let _ = writeln!(
                out,
                "  ! missed an SLO or carries a warning (see summary.md)"
            );
        }
    }
    if let Some((header, rows)) = super::answers::gate_rows(r) {
        let failed = rows.iter().filter(|g| g[3] != "pass").count();
        let _ = writeln!(out, "\nGates ({failed} of {} failed)", rows.len());
        let rows: Vec<Vec<String>> = rows
            .into_iter()
            .map(|g| g.into_iter().map(|v| v.replace("**", "")).collect())
            .collect();
        aligned(&mut out, &header, &rows);
    }
    let warnings = &v.warnings;
    if !warnings.is_empty() {
        let _ = writeln!(out, "\nWarnings ({})", warnings.len());
        for w in warnings.iter().take(WARNINGS_SHOWN) {
            para(&mut out, "  - ", w.trim_start_matches("- "));
        }
        if warnings.len() > WARNINGS_SHOWN {
            let _ = writeln!(
                out,
                "  and {} more in summary.md",
                warnings.len() - WARNINGS_SHOWN
            );
        }
    }
    out
}

/// One line per cell: its key (backend and layout only when the run has several),
/// jobs/s, claim p99, duplicate claims, lost jobs, and `!` for a cell that missed an
/// SLO or warned.
fn cell_table(v: &view::RunView) -> (Vec<&'static str>, Vec<Vec<String>>) {
    let (r, cells) = (v.run, &v.cells);
    let several = |f: fn(&crate::results::CellResult) -> String| {
        let mut v: Vec<String> = cells.iter().map(|c| f(c.cell)).collect();
        v.sort();
        v.dedup();
        v.len() > 1
    };
    let phases =
        several(|c| c.phase.clone()) || r.cells.iter().any(|c| c.arrival_rate_per_s.is_some());
    let backends = several(|c| c.backend.to_string());
    let layouts = several(|c| c.index_layout.clone());
    let mut header = Vec::new();
    if phases {
        header.push("phase");
    }
    if backends {
        header.push("backend");
    }
    header.push("strategy");
    if layouts {
        header.push("layout");
    }
    header.extend([
        "workers",
        "batch",
        "jobs/s",
        "claim p99",
        "dup claims",
        "lost",
        "",
    ]);
    let rows = cells
        .iter()
        .map(|v| {
            let c = v.cell;
            let mut row = Vec::new();
            if phases {
                row.push(crate::results::phase_label(c));
            }
            if backends {
                row.push(c.backend.to_string());
            }
            row.push(c.strategy.to_string());
            if layouts {
                row.push(c.index_layout.clone());
            }
            let warned = c.trials.iter().any(|t| !t.warnings.is_empty())
                || !v.figures.misses(&r.slos).is_empty();
            row.extend([
                c.workers.to_string(),
                c.batch_size.to_string(),
                format!("{:.0}", v.figures.throughput),
                v.figures.claim_p99_ms.map_or("–".into(), fmt_ms),
                v.duplicate_claims.to_string(),
                v.lost.to_string(),
                if warned { "!".into() } else { String::new() },
            ]);
            row
        })
        .collect();
    (header, rows)
}

/// Columns padded to their widest entry: names left, numbers right.
fn aligned(out: &mut String, header: &[&str], rows: &[Vec<String>]) {
    let widths: Vec<usize> = (0..header.len())
        .map(|i| {
            rows.iter()
                .map(|r| r[i].chars().count())
                .chain([header[i].chars().count()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let numeric = |i: usize| {
        i < header.len() - 1
            && rows
                .iter()
                .all(|r| r[i].starts_with(|ch: char| ch.is_ascii_digit()) || r[i] == "–")
    };
    let line = |cols: Vec<String>| {
        let cells: Vec<String> = cols
            .iter()
            .enumerate()
            .map(|(i, v)| match numeric(i) {
                true => format!("{v:>w$}", w = widths[i]),
                false => format!("{v:<w$}", w = widths[i]),
            })
            .collect();
        cells.join("  ").trim_end().to_string()
    };
    let _ = writeln!(
        out,
        "{}",
        line(header.iter().map(|h| h.to_string()).collect())
    );
    for r in rows {
        let _ = writeln!(out, "{}", line(r.clone()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The committed fixture run reads in a screen: at most 60 lines of at most 160
    /// characters, the verdict and one line per cell there, shorter than summary.md.
    #[test]
    fn the_terminal_is_a_screen_of_short_lines() {
        let text = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/run.json"
        ))
        .unwrap();
        let r: RunResult = serde_json::from_str(&text).unwrap();
        let screen = render(&r);
        assert!(screen.lines().all(|l| l.chars().count() <= 160), "{screen}");
        assert!(screen.contains("\nVerdict\n"), "{screen}");
        // The cell table: its header, then exactly one line per cell.
        let table: Vec<&str> = screen
            .lines()
            .skip_while(|l| !l.starts_with("strategy"))
            .collect();
        assert!(
            table[0].contains("jobs/s") && table[0].contains("claim p99"),
            "{screen}"
        );
        let strategies: Vec<String> = r.cells.iter().map(|c| c.strategy.to_string()).collect();
        let rows: Vec<&str> = table[1..]
            .iter()
            .copied()
            .take_while(|l| strategies.iter().any(|s| l.starts_with(s.as_str())))
            .collect();
        assert_eq!(rows.len(), r.cells.len(), "{screen}");
        let full = super::super::summary::render(&r);
        assert!(screen.lines().count() <= 60, "{screen}");
        assert!(screen.len() < full.len(), "{screen}");
        assert!(!screen.contains("**") && !screen.contains('`'), "{screen}");
    }
}
