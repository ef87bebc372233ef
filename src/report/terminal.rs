//! The screen a run ends with: what a person reads in a minute — the run in one line,
//! the notes on its servers, the verdict, one line per cell, the gates, the warnings
//! (the first few) and where the rest is. summary.md and report.html hold everything; `run --verbose`
//! prints summary.md instead.

use super::document::{Document, Part, Renderer, Section, Table};
use super::view::RunView;
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
    show(&RunView::of(r))
}

/// As [`render`], of a run analysed already.
pub fn show(view: &RunView) -> String {
    Terminal.text(&Document::of(view))
}

/// The screen: a minute's reading, plain text (no Markdown marks).
pub struct Terminal;

/// A table's text as the screen shows it: bold is for the page, not the screen.
fn plain(t: &Table) -> (Vec<&str>, Vec<Vec<String>>) {
    let rows = t
        .rows
        .iter()
        .map(|row| row.iter().map(|c| c.text.clone()).collect())
        .collect();
    (t.header_text(), rows)
}

impl Terminal {
    /// The screen, which cannot fail.
    pub fn text(&self, doc: &Document) -> String {
        let lead = &doc.lead;
        let mut out = String::new();
        para(
            &mut out,
            "",
            &format!(
                "claimbench run {}: workload {} on {}, {} cores.",
                lead.run_id, lead.workload_name, lead.targets, lead.cores
            ),
        );
        for (label, text) in &doc.notes {
            out.push('\n');
            para(&mut out, &format!("{label}: "), text);
        }
        if let Some(why) = &doc.partial {
            out.push('\n');
            para(&mut out, "Partial run: ", why);
        }
        if !doc.verdict.is_empty() {
            out.push_str("\nVerdict\n");
            for s in &doc.verdict {
                para(&mut out, "  - ", s);
            }
        }
        let (header, rows) = plain(&doc.glance);
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
        if let Some(gates) = doc.section(Part::Gates).and_then(Section::first_table) {
            let (header, rows) = plain(gates);
            let failed = rows.iter().filter(|g| g[3] != "pass").count();
            let _ = writeln!(out, "\nGates ({failed} of {} failed)", rows.len());
            aligned(&mut out, &header, &rows);
        }
        if let Some(paired) = doc.section(Part::Paired).and_then(Section::first_table) {
            let (mut header, mut rows) = plain(paired);
            let regressed = rows.iter().filter(|r| r[7].contains("regressed")).count();
            // One confidence for the whole run: said once, in the heading.
            header.remove(5);
            let confidence: Vec<String> = rows.iter_mut().map(|r| r.remove(5)).collect();
            let _ = writeln!(
                out,
                "\nPaired A/B ({regressed} regressed; intervals at {} confidence)",
                confidence.first().map_or("", String::as_str)
            );
            aligned(&mut out, &header, &rows);
        }
        let warnings = &doc.warnings;
        if !warnings.is_empty() {
            let _ = writeln!(out, "\nWarnings ({})", warnings.len());
            for w in warnings.iter().take(WARNINGS_SHOWN) {
                para(&mut out, "  - ", w);
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
}

impl Renderer for Terminal {
    type Error = std::convert::Infallible;

    fn render(&self, doc: &Document) -> Result<String, Self::Error> {
        Ok(self.text(doc))
    }
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
