//! `report.html`: one self-contained file (styles inline, plots inline as SVG, no
//! network) with the summary table, the plots and how to read each, the warnings, every
//! trial, the environment fingerprint and the workload text.

use super::document::{Document, Renderer, Section, Table};
use super::page::{self, Figure};
use super::plots::Rendered;
use serde::Serialize;
use std::fmt::Write;

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
    targets: &'a str,
    started_at: &'a str,
    finished_at: &'a str,
    notes: Vec<Note>,
    partial: Option<&'a str>,
    /// Markup: the comparison section `compare --report` puts first.
    comparison: Option<&'a str>,
    verdict: &'a [String],
    sections: &'a [Section],
    warnings: Vec<&'a String>,
    figures: Vec<Figure>,
    trials: &'a Table,
    durability: &'a str,
    environment: &'a Table,
    workload_text: &'a str,
}

/// report.html: the document with the run's plots drawn inline, what could not be
/// drawn among the warnings, and the comparison `compare --report` puts first (markup).
pub struct Html<'p> {
    pub plots: &'p [Rendered],
    pub plot_problems: &'p [String],
    pub comparison: Option<&'p str>,
}

impl Html<'_> {
    /// The page, which cannot fail.
    pub fn page(&self, doc: &Document) -> String {
        let lead = &doc.lead;
        let r = doc.run();
        let page = Page {
            run_id: &lead.run_id,
            workload_name: &lead.workload_name,
            workload_path: &lead.workload_path,
            targets: &lead.targets,
            started_at: &lead.started_at,
            finished_at: &lead.finished_at,
            notes: doc
                .notes
                .iter()
                .map(|(label, text)| Note {
                    label: label.to_string(),
                    text: text.clone(),
                })
                .collect(),
            partial: doc.partial.as_deref(),
            comparison: self.comparison,
            verdict: &doc.verdict,
            sections: &doc.sections,
            warnings: doc.warnings.iter().chain(self.plot_problems).collect(),
            figures: self.plots.iter().map(Figure::of).collect(),
            trials: &doc.trials,
            durability: &doc.durability,
            environment: &doc.environment,
            workload_text: &r.workload.text,
        };
        with_contents(&page::render("report.html", &page))
    }
}

impl Renderer for Html<'_> {
    type Error = std::convert::Infallible;

    fn render(&self, doc: &Document) -> Result<String, Self::Error> {
        Ok(self.page(doc))
    }
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
