//! `report.html`: one self-contained file (styles inline, plots inline as SVG, no
//! network) with the summary table, the plots and how to read each, the warnings, every
//! trial, the environment fingerprint and the workload text.

use super::plots::Rendered;
use super::tables;
use super::view::RunView;
use crate::results::RunResult;
use serde::Serialize;
use std::fmt::Write;

use super::page::{self, Block, Figure, Section, Table};

/// Where the table of contents goes, once every section is written.
const CONTENTS: &str = "<!--contents-->";

/// Gives every section heading an id and puts links to them all where [`CONTENTS`]
/// stands: a long report is read by jumping to the section one came for. Titles are
/// already escaped; ids are their letters and digits, numbered when two repeat.
fn with_contents(h: &str) -> String {
    let mut out = String::with_capacity(h.len() + 2048);
    let mut links: Vec<String> = Vec::new();
    let mut ids: Vec<String> = Vec::new();
    let mut rest = h;
    while let Some(at) = rest.find("<h2>") {
        out.push_str(&rest[..at]);
        let after = &rest[at + "<h2>".len()..];
        let end = after.find("</h2>").unwrap_or(after.len());
        let title = &after[..end];
        let base: String = title
            .chars()
            .map(|c| match c.is_ascii_alphanumeric() {
                true => c.to_ascii_lowercase(),
                false => '-',
            })
            .collect();
        let base = base.trim_matches('-').to_string();
        let n = ids.iter().filter(|i| **i == base).count();
        ids.push(base.clone());
        let id = match n {
            0 => base,
            n => format!("{base}-{}", n + 1),
        };
        let _ = write!(out, "<h2 id=\"{id}\">{title}</h2>");
        links.push(format!("<a href=\"#{id}\">{title}</a>"));
        rest = after.get(end + "</h2>".len()..).unwrap_or("");
    }
    out.push_str(rest);
    let nav = format!("<nav class=\"toc\">{}</nav>", links.join(" · "));
    out.replacen(CONTENTS, &nav, 1)
}

/// A count a backend may not have: "–" where it has none.
fn or_dash(n: Option<i64>) -> String {
    n.map_or_else(|| "–".to_string(), |n| n.to_string())
}

/// The facts that decide whether two runs may be compared, and the server's settings.
fn environment(r: &RunResult) -> Table {
    let env = &r.environment;
    let facts = [
        ("host", env.host.clone()),
        ("os", env.os.clone()),
        ("cpu", env.cpu.clone()),
        (
            "cores",
            format!(
                "{} logical, {} physical",
                env.logical_cores,
                env.physical_cores.map_or("?".into(), |n| n.to_string())
            ),
        ),
        (
            "memory",
            format!("{:.1} GiB", env.memory_bytes as f64 / (1u64 << 30) as f64),
        ),
        ("claimbench", env.claimbench_version.clone()),
        (
            "git revision",
            env.git_revision.clone().unwrap_or_else(|| "unknown".into()),
        ),
        ("target", env.target.clone()),
        ("server", env.server.version.clone()),
        ("workload sha256", r.workload.sha256.clone()),
    ];
    let settings = env
        .server
        .settings
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()));
    Table::facts(
        facts
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .chain(settings),
    )
}

const TRIAL_HEADER: [&str; 23] = [
    "backend",
    "strategy",
    "layout",
    "workers",
    "batch",
    "rep",
    "measured s",
    "reset s",
    "claims/s",
    "claimed/s",
    "completed/s",
    "claim p50 ms",
    "claim p99 ms",
    "empty claims",
    "dup claims",
    "dup exec ledger/effects",
    "lost",
    "oldest pending p99 ms",
    "lock wait",
    "row lock waits",
    "lock escalations",
    "deadlocks",
    "dead tuples / undo history",
];

/// One row per trial, every number the summary merges.
fn every_trial(r: &RunResult) -> Table {
    let mut rows = Vec::new();
    for c in &r.cells {
        // As in the summary: no completions or executions in a claim-only cell, and an
        // oldest-pending age that means something only where jobs arrived.
        let (ran, arrivals) = (!c.is_claim_only(), c.has_arrivals());
        let dash = tables::measured_or_dash;
        for t in &c.trials {
            let executions = format!(
                "{}/{}",
                t.duplicates.ledger.duplicate_executions, t.duplicates.effects_duplicate_executions
            );
            rows.push(vec![
                c.backend.to_string(),
                c.strategy.to_string(),
                c.index_layout.clone(),
                c.workers.to_string(),
                c.batch_size.to_string(),
                (t.repetition + 1).to_string(),
                format!("{:.2}", t.measured_s),
                format!("{:.2}", t.reset_s),
                format!("{:.0}", t.claims_per_s),
                format!("{:.0}", t.claimed_per_s),
                dash(ran, format!("{:.0}", t.completed_per_s)),
                format!("{:.2}", t.claim_latency.p50_us as f64 / 1000.0),
                format!("{:.2}", t.claim_latency.p99_us as f64 / 1000.0),
                t.counts.empty_claims.to_string(),
                t.duplicates.ledger.duplicate_claims.to_string(),
                dash(ran, executions),
                t.reconciliation.lost.to_string(),
                dash(arrivals, format!("{:.0}", t.oldest_pending.p99_ms)),
                format!("{:.1}%", t.locks.lock_wait_share * 100.0),
                or_dash(t.locks.row_lock_waits),
                or_dash(t.locks.lock_escalations),
                t.locks.deadlocks.to_string(),
                t.resources.table.dead_tuples.to_string(),
            ]);
        }
    }
    Table::of(&TRIAL_HEADER, &rows)
}

/// Recommendation, gates, sustainable rates, confidence and scalability fits, when the
/// run has them.
fn answers(r: &RunResult) -> Vec<Section> {
    use super::answers;
    let mut out = Vec::new();
    if !r.slos.is_empty() {
        let (recs, notes) = crate::analysis::recommend::meaningful(r, &r.slos);
        let slos: Vec<String> = r.slos.iter().map(ToString::to_string).collect();
        let mut blocks = vec![Block::para(format!("SLOs: {}", slos.join(", ")))];
        for rec in &recs {
            let (header, rows) = answers::recommendation_rows(rec);
            blocks.push(Block::strong(rec.sentence(&r.slos)));
            blocks.push(Block::table(Table::of(&header, &rows)));
        }
        blocks.extend(notes.iter().map(Block::para));
        out.push(Section {
            title: "Recommendation".into(),
            blocks,
            how: Vec::new(),
        });
    }
    let tables = [
        ("Gates", answers::gate_rows(r), answers::GATES_HOW),
        (
            "Sustainable arrival rate",
            answers::search_rows(r),
            answers::SEARCH_HOW,
        ),
        (
            "Confidence",
            answers::confidence_rows(r),
            answers::CONFIDENCE_HOW,
        ),
        ("Scalability fit", answers::usl_rows(r), answers::USL_HOW),
    ];
    for (title, table, how) in tables {
        if let Some((header, rows)) = table {
            out.push(Section::table(title, &header, &rows, how));
        }
    }
    out
}

const SUMMARY_HOW: &str = "claimed/s and completed/s are steady-state means after warm-up (± is the spread across repetitions); latencies merge every repetition's histogram; duplicate claims come from the workers' claim ledger, duplicate executions from the ledger and from the effects table, which must agree; lost must be 0. ";

const SIDE_BY_SIDE_HOW: &str = "The same cells on each backend, run one after the other in this run (cell by cell, so both meet the same machine conditions); ratios are each backend's throughput over the first's. The plots below come once per backend.";

/// The sections between the verdict and the warnings, in the page's order.
fn sections(v: &RunView) -> Vec<Section> {
    let r = v.run;
    let (header, rows) = tables::table(v);
    let mut summary = Section::table("Summary", &header, &rows, SUMMARY_HOW);
    summary.how.push(tables::table_how(r));
    summary.how.extend(tables::reset_line(r));
    let mut out = vec![summary];
    out.extend(answers(r));
    if let Some((header, rows)) = tables::side_by_side(v) {
        let mut s = Section::table("Backends side by side", &header, &rows, SIDE_BY_SIDE_HOW);
        s.how.push(tables::durability(r));
        out.push(s);
    }
    for s in tables::sections(r) {
        out.push(Section::table(s.title, &s.header, &s.rows, s.how));
    }
    out
}

#[derive(Serialize)]
struct Note {
    label: String,
    text: String,
}

/// Everything report.html's template shows.
#[derive(Serialize)]
struct Page<'a> {
    run_id: &'a str,
    workload_name: &'a str,
    workload_path: &'a str,
    targets: String,
    started_at: &'a str,
    finished_at: &'a str,
    notes: Vec<Note>,
    partial: Option<&'a str>,
    /// Markup: the comparison section `compare --report` puts first.
    comparison: Option<&'a str>,
    verdict: Vec<String>,
    sections: Vec<Section>,
    warnings: Vec<String>,
    figures: Vec<Figure>,
    trials: Table,
    durability: String,
    environment: Table,
    workload_text: &'a str,
}

/// The report page from the run's view; `comparison` is a section `compare --report`
/// puts first.
pub fn render(
    v: &RunView,
    plots: &[Rendered],
    plot_problems: &[String],
    comparison: Option<&str>,
) -> String {
    let r = v.run;
    let warnings = v
        .warnings
        .iter()
        .chain(plot_problems)
        .map(|w| w.trim_start_matches("- ").to_string())
        .collect();
    let page = Page {
        run_id: &r.run_id,
        workload_name: &r.workload.name,
        workload_path: &r.workload.path,
        targets: tables::targets(r),
        started_at: &r.started_at,
        finished_at: &r.finished_at,
        notes: tables::server_notes(r)
            .into_iter()
            .map(|(label, text)| Note {
                label: label.to_string(),
                text,
            })
            .collect(),
        partial: r
            .interrupted
            .then(|| r.stop_reason.as_deref().unwrap_or("stopped early")),
        comparison,
        verdict: v.verdict.clone(),
        sections: sections(v),
        warnings,
        figures: plots.iter().map(Figure::of).collect(),
        trials: every_trial(r),
        durability: tables::durability(r),
        environment: environment(r),
        workload_text: &r.workload.text,
    };
    with_contents(&page::render("report.html", &page))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_section_gets_an_id_and_a_link_where_the_contents_stand() {
        let page = format!(
            "<h1>run</h1>{CONTENTS}<h2>Verdict</h2><p>x</p><h2>Cost per job</h2><h2>Verdict</h2>"
        );
        let out = with_contents(&page);
        assert!(
            out.contains("<h2 id=\"verdict\">Verdict</h2><p>x</p>"),
            "{out}"
        );
        assert!(
            out.contains("<h2 id=\"cost-per-job\">Cost per job</h2>"),
            "{out}"
        );
        assert!(out.contains("<h2 id=\"verdict-2\">Verdict</h2>"), "{out}");
        let nav = "<nav class=\"toc\"><a href=\"#verdict\">Verdict</a> · <a href=\"#cost-per-job\">Cost per job</a> · <a href=\"#verdict-2\">Verdict</a></nav>";
        assert!(out.starts_with(&format!("<h1>run</h1>{nav}<h2")), "{out}");
        assert!(!out.contains(CONTENTS));
    }
}
