//! `report.html`: one self-contained file (styles inline, plots inline as SVG, no
//! network) with the summary table, the plots and how to read each, the warnings, every
//! trial, the environment fingerprint and the workload text.

use super::plots::Rendered;
use super::summary;
use crate::results::RunResult;
use std::fmt::Write;

pub(super) fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// A sentence written for both Markdown and HTML: escaped, with its `code` spans as
/// `<code>` (a browser would show the backticks).
fn prose(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 16);
    for (i, part) in esc(s).split('`').enumerate() {
        match i % 2 {
            1 => {
                let _ = write!(out, "<code>{part}</code>");
            }
            _ => out.push_str(part),
        }
    }
    out
}

const STYLE: &str = "body{font-family:system-ui,sans-serif;margin:2em auto;max-width:1200px;color:#222;padding:0 1em}\
table{border-collapse:collapse;font-size:13px;margin:1em 0;display:block;max-width:100%;overflow-x:auto}\
th,td{border:1px solid #ccc;padding:3px 6px;text-align:right}td{max-width:40em;overflow-wrap:break-word;white-space:nowrap}td.l{white-space:normal}\
th{background:#f2f2f2}td.l,th.l{text-align:left}figure{margin:2em 0}figure svg{max-width:100%;height:auto}\
p.how{color:#444;max-width:60em}pre{background:#f7f7f7;padding:1em;overflow:auto;font-size:12px}\
.warn{color:#8a4b00}.partial{background:#fff3cd;padding:.5em 1em;border:1px solid #e0c068}\
nav.toc{background:#f7f7f7;padding:.5em 1em;line-height:1.8}nav.toc a{margin-right:.3em}";

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

/// One table row; the first three columns (names) align left, numbers right.
/// A count a backend may not have: "–" where it has none.
fn or_dash(n: Option<i64>) -> String {
    n.map_or_else(|| "–".to_string(), |n| n.to_string())
}

/// The facts that decide whether two runs may be compared, and the server's settings.
fn environment(h: &mut String, r: &RunResult) {
    let env = &r.environment;
    // The settings that decide whether these figures are production's come first.
    let _ = writeln!(
        h,
        "<h2>Environment and server settings</h2>\n<p class=\"how\">{}</p>\n<table>",
        esc(&summary::durability(r))
    );
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
    for (k, v) in facts.iter().chain(
        env.server
            .settings
            .iter()
            .map(|(k, v)| (k.as_str(), v.clone()))
            .collect::<Vec<_>>()
            .iter(),
    ) {
        let _ = writeln!(
            h,
            "<tr><th class=\"l\">{}</th><td class=\"l\">{}</td></tr>",
            esc(k),
            esc(v)
        );
    }
}

/// One row per trial, every number the summary merges.
fn every_trial(h: &mut String, r: &RunResult) {
    h.push_str("<h2>Every trial</h2>\n<table><tr><th class=\"l\">backend</th><th class=\"l\">strategy</th><th class=\"l\">layout</th><th>workers</th><th>batch</th><th>rep</th><th>measured s</th><th>reset s</th><th>claims/s</th><th>claimed/s</th><th>completed/s</th><th>claim p50 ms</th><th>claim p99 ms</th><th>empty claims</th><th>dup claims</th><th>dup exec ledger/effects</th><th>lost</th><th>oldest pending p99 ms</th><th>lock wait</th><th>row lock waits</th><th>lock escalations</th><th>deadlocks</th><th>dead tuples / undo history</th></tr>\n");
    for c in &r.cells {
        // As in the summary: no completions or executions in a claim-only cell, and an
        // oldest-pending age that means something only where jobs arrived.
        let (ran, arrivals) = (!c.is_claim_only(), c.has_arrivals());
        let dash = summary::measured_or_dash;
        for t in &c.trials {
            let _ = writeln!(
                h,
                "<tr><td class=\"l\">{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.2}</td><td>{:.2}</td><td>{:.0}</td><td>{:.0}</td><td>{}</td><td>{:.2}</td><td>{:.2}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.1}%</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                c.backend,
                c.strategy,
                esc(&c.index_layout),
                c.workers,
                c.batch_size,
                t.repetition + 1,
                t.measured_s,
                t.reset_s,
                t.claims_per_s,
                t.claimed_per_s,
                dash(ran, format!("{:.0}", t.completed_per_s)),
                t.claim_latency.p50_us as f64 / 1000.0,
                t.claim_latency.p99_us as f64 / 1000.0,
                t.counts.empty_claims,
                t.duplicates.ledger.duplicate_claims,
                dash(
                    ran,
                    format!(
                        "{}/{}",
                        t.duplicates.ledger.duplicate_executions,
                        t.duplicates.effects_duplicate_executions
                    )
                ),
                t.reconciliation.lost,
                dash(arrivals, format!("{:.0}", t.oldest_pending.p99_ms)),
                t.locks.lock_wait_share * 100.0,
                or_dash(t.locks.row_lock_waits),
                or_dash(t.locks.lock_escalations),
                t.locks.deadlocks,
                t.resources.table.dead_tuples,
            );
        }
    }
    h.push_str("</table>\n");
}

/// A titled table with its how-to-read note.
pub(super) fn section_table(
    h: &mut String,
    title: &str,
    header: &[&str],
    rows: &[Vec<String>],
    how: &str,
) {
    let _ = write!(h, "<h2>{}</h2>\n<table>", esc(title));
    table_row(h, "th", header.iter().copied());
    for row in rows {
        table_row(h, "td", row.iter().map(String::as_str));
    }
    let _ = writeln!(h, "</table>\n<p class=\"how\">{}</p>", esc(how));
}

fn table_row<'a>(h: &mut String, tag: &str, cells: impl Iterator<Item = &'a str>) {
    h.push_str("<tr>");
    for (i, v) in cells.enumerate() {
        let class = if i < 3 { " class=\"l\"" } else { "" };
        // The tables are shared with the Markdown renderer, whose whole-cell bold
        // (`**FAIL**`) is bold here too, not asterisks.
        match v.strip_prefix("**").and_then(|x| x.strip_suffix("**")) {
            Some(inner) if !inner.is_empty() => {
                let _ = write!(h, "<{tag}{class}><b>{}</b></{tag}>", esc(inner));
            }
            _ => {
                let _ = write!(h, "<{tag}{class}>{}</{tag}>", esc(v));
            }
        }
    }
    h.push_str("</tr>\n");
}

/// Recommendation, sustainable rates and scalability fits, when the run has them.
fn answers(h: &mut String, r: &RunResult) {
    use super::answers;
    if !r.slos.is_empty() {
        let (recs, notes) = crate::analysis::recommend::meaningful(r, &r.slos);
        let slos: Vec<String> = r.slos.iter().map(ToString::to_string).collect();
        let _ = writeln!(
            h,
            "<h2>Recommendation</h2>\n<p>SLOs: {}</p>",
            esc(&slos.join(", "))
        );
        for rec in &recs {
            let (header, rows) = answers::recommendation_rows(rec);
            let _ = write!(h, "<p><b>{}</b></p>\n<table>", esc(&rec.sentence(&r.slos)));
            table_row(h, "th", header.iter().copied());
            for row in &rows {
                table_row(h, "td", row.iter().map(String::as_str));
            }
            h.push_str("</table>\n");
        }
        for n in &notes {
            let _ = writeln!(h, "<p>{}</p>", esc(n));
        }
    }
    if let Some((header, rows)) = answers::gate_rows(r) {
        section_table(h, "Gates", &header, &rows, answers::GATES_HOW);
    }
    if let Some((header, rows)) = answers::search_rows(r) {
        section_table(
            h,
            "Sustainable arrival rate",
            &header,
            &rows,
            answers::SEARCH_HOW,
        );
    }
    if let Some((header, rows)) = answers::confidence_rows(r) {
        section_table(h, "Confidence", &header, &rows, answers::CONFIDENCE_HOW);
    }
    if let Some((header, rows)) = answers::usl_rows(r) {
        section_table(h, "Scalability fit", &header, &rows, answers::USL_HOW);
    }
}

/// The report page; `comparison` is a section `compare --report` puts first.
pub fn render(
    r: &RunResult,
    plots: &[Rendered],
    plot_problems: &[String],
    comparison: Option<&str>,
) -> String {
    let mut h = String::new();
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>claimbench {}</title><style>{STYLE}</style></head><body>\n",
        esc(&r.run_id)
    );
    let _ = writeln!(
        h,
        "<h1>claimbench run <code>{}</code></h1><p>Workload <b>{}</b> ({}) on {}, {} to {}.</p>",
        esc(&r.run_id),
        esc(&r.workload.name),
        esc(&r.workload.path),
        esc(&summary::targets(r)),
        esc(&r.started_at),
        esc(&r.finished_at)
    );
    for (label, text) in summary::server_notes(r) {
        let _ = writeln!(h, "<p><b>{label}:</b> {}</p>", esc(&text));
    }
    if r.interrupted {
        let _ = writeln!(
            h,
            "<p class=\"partial\"><b>Partial run:</b> {}</p>",
            esc(r.stop_reason.as_deref().unwrap_or("stopped early"))
        );
    }

    h.push_str(CONTENTS);
    h.push('\n');
    if let Some(section) = comparison {
        h.push_str(section);
    }
    let verdict = crate::analysis::story::sentences(r);
    if !verdict.is_empty() {
        h.push_str("<h2>Verdict</h2>\n<ul class=\"verdict\">\n");
        for v in &verdict {
            let _ = writeln!(h, "<li>{}</li>", esc(v));
        }
        h.push_str("</ul>\n");
    }
    let (header, rows) = summary::table(r);
    section_table(
        &mut h,
        "Summary",
        &header,
        &rows,
        "claimed/s and completed/s are steady-state means after warm-up (± is the spread across repetitions); latencies merge every repetition's histogram; duplicate claims come from the workers' claim ledger, duplicate executions from the ledger and from the effects table, which must agree; lost must be 0. ",
    );
    let _ = writeln!(h, "<p class=\"how\">{}</p>", esc(&summary::table_how(r)));
    if let Some(line) = summary::reset_line(r) {
        let _ = writeln!(h, "<p class=\"how\">{}</p>", esc(&line));
    }
    answers(&mut h, r);
    if let Some((header, rows)) = summary::side_by_side(r) {
        let header: Vec<&str> = header.iter().map(String::as_str).collect();
        section_table(
            &mut h,
            "Backends side by side",
            &header,
            &rows,
            "The same cells on each backend, run one after the other in this run (cell by cell, so both meet the same machine conditions); ratios are each backend's throughput over the first's. The plots below come once per backend.",
        );
        let _ = writeln!(h, "<p class=\"how\">{}</p>", esc(&summary::durability(r)));
    }
    for s in summary::sections(r) {
        section_table(&mut h, s.title, &s.header, &s.rows, s.how);
    }

    let warnings = summary::warning_lines(r);
    if !warnings.is_empty() || !plot_problems.is_empty() {
        h.push_str("<h2>Warnings</h2>\n<ul>\n");
        for w in warnings.iter().chain(plot_problems) {
            let _ = writeln!(
                h,
                "<li class=\"warn\">{}</li>",
                esc(w.trim_start_matches("- "))
            );
        }
        h.push_str("</ul>\n");
    }

    h.push_str("<h2>Plots</h2>\n");
    for p in plots {
        let _ = writeln!(
            h,
            "<figure id=\"{}\"><h3>{}</h3>\n{}\n<p class=\"how\">{}</p></figure>",
            p.stem.replace('/', "-"),
            esc(&p.title),
            p.svg,
            prose(p.how_to_read)
        );
    }

    every_trial(&mut h, r);
    environment(&mut h, r);
    h.push_str("</table>\n");
    let _ = writeln!(
        h,
        "<h2>Workload</h2>\n<pre>{}</pre>\n</body></html>",
        esc(&r.workload.text)
    );
    with_contents(&h)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prose_shows_code_spans_as_code_and_escapes_the_rest() {
        assert_eq!(
            prose("the cell `recommend` picks for a <b> & c"),
            "the cell <code>recommend</code> picks for a &lt;b&gt; &amp; c"
        );
        assert_eq!(prose("an odd ` tick"), "an odd <code> tick</code>");
    }

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
