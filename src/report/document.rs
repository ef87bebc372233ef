//! The report as one typed document, built once per report from the run's view: its
//! lead facts, notes, verdict, sections of tables and how-to-read notes, warnings and
//! appendix. Every format is a [`Renderer`] of this document (Markdown, HTML, terminal,
//! CSV), so a section, a row or a dash exists once and no renderer imports another, the
//! way hyperfine's exporters each take the same results.

pub use super::blocks::{Block, Cell, Part, Section, Table};
use super::view::{CellView, RunView};
use super::{answers, appendix, tables};
use crate::results::RunResult;

/// What the report says first about where its figures come from.
#[derive(Debug, Clone, PartialEq)]
pub struct Lead {
    pub run_id: String,
    pub workload_name: String,
    pub workload_path: String,
    /// The first 12 hex digits of the workload's sha256.
    pub workload_sha: String,
    /// "target (server version)" for each database the run drove.
    pub targets: String,
    pub cores: usize,
    /// claimbench's version, with its git revision when known.
    pub version: String,
    pub started_at: String,
    pub finished_at: String,
}

/// The report of one run, every part built once.
pub struct Document<'a> {
    pub view: &'a RunView<'a>,
    pub lead: Lead,
    /// (label, text): the servers' topology and durability shortcuts.
    pub notes: Vec<(&'static str, String)>,
    /// Why the run stopped early, for a partial run.
    pub partial: Option<String>,
    pub verdict: Vec<String>,
    /// In the order every format shows them.
    pub sections: Vec<Section>,
    /// One line per cell with its key, throughput, claim p99, duplicates, lost and a `!`
    /// for a missed SLO or a warning: the screen's table.
    pub glance: Table,
    /// Warnings, one per cell and kind, without a list mark.
    pub warnings: Vec<String>,
    /// Every trial, unmerged.
    pub trials: Table,
    /// The machine and the server's settings.
    pub environment: Table,
    /// The durability settings each backend ran with.
    pub durability: String,
}

/// How every format reads the per-cell table.
pub const CELLS_HOW: &str = "claimed/s and completed/s are steady-state means after warm-up (± is the spread across repetitions); latencies merge every repetition's histogram; duplicate claims come from the workers' claim ledger, duplicate executions from the ledger and from the effects table, which must agree; lost must be 0.";

const SIDE_BY_SIDE_HOW: &str = "The same cells on each backend, run one after the other in this run (cell by cell, so both meet the same machine conditions); ratios are each backend's throughput over the first's. The plots come once per backend.";

impl<'a> Document<'a> {
    pub fn of(view: &'a RunView<'a>) -> Document<'a> {
        let r = view.run;
        let env = &r.environment;
        let lead = Lead {
            run_id: r.run_id.clone(),
            workload_name: r.workload.name.clone(),
            workload_path: r.workload.path.clone(),
            workload_sha: r.workload.sha256.chars().take(12).collect(),
            targets: tables::targets(r),
            cores: env.logical_cores,
            version: match &env.git_revision {
                Some(g) => format!("{} ({g})", env.claimbench_version),
                None => env.claimbench_version.clone(),
            },
            started_at: r.started_at.clone(),
            finished_at: r.finished_at.clone(),
        };
        let (header, rows) = tables::table(view);
        Document {
            view,
            lead,
            notes: tables::server_notes(r),
            partial: r
                .interrupted
                .then(|| r.stop_reason.clone().unwrap_or("stopped early".into())),
            verdict: view.analysis.verdict.clone(),
            sections: sections(view, Table::of(&header, &rows, 4)),
            glance: tables::glance(view),
            warnings: view.warnings.clone(),
            trials: appendix::every_trial(r),
            environment: appendix::environment(r),
            durability: tables::durability(r),
        }
    }

    pub fn run(&self) -> &'a RunResult {
        self.view.run
    }

    pub fn cells(&self) -> &'a [CellView<'a>] {
        &self.view.cells
    }

    pub fn section(&self, part: Part) -> Option<&Section> {
        self.sections.iter().find(|s| s.part == part)
    }
}

/// The sections between the verdict and the warnings, in the order every format shows
/// them.
fn sections(v: &RunView, cells: Table) -> Vec<Section> {
    let r = v.run;
    let mut how = vec![CELLS_HOW.to_string(), tables::table_how(r)];
    how.extend(tables::reset_line(r));
    let mut out = vec![Section {
        part: Part::Cells,
        title: "Summary".into(),
        blocks: vec![Block::table(cells)],
        how,
    }];
    if !r.slos.is_empty() {
        let (recs, notes) = crate::analysis::recommend::meaningful(r, &r.slos);
        let slos: Vec<String> = r.slos.iter().map(ToString::to_string).collect();
        let mut blocks = vec![Block::para(format!("SLOs: {}", slos.join(", ")))];
        for rec in &recs {
            let (header, rows) = answers::recommendation_rows(rec);
            blocks.push(Block::strong(rec.sentence(&r.slos)));
            blocks.push(Block::table(Table::of(&header, &rows, 0)));
        }
        blocks.extend(notes.iter().map(Block::para));
        let pools = crate::analysis::pooler::pool_sizing(r, &r.slos);
        blocks.extend(pools.iter().map(|p| Block::strong(p.sentence())));
        out.push(Section {
            part: Part::Recommendation,
            title: "Recommendation".into(),
            blocks,
            how: Vec::new(),
        });
    }
    let answered = [
        (
            Part::Gates,
            "Gates",
            answers::gate_rows(&v.analysis),
            2,
            answers::GATES_HOW,
        ),
        (
            Part::Paired,
            "Paired A/B",
            answers::paired_rows(&v.analysis.paired),
            2,
            answers::PAIRED_HOW,
        ),
        (
            Part::RateSearch,
            "Sustainable arrival rate",
            answers::search_rows(r),
            4,
            answers::SEARCH_HOW,
        ),
        (
            Part::Confidence,
            "Confidence",
            answers::confidence_rows(r),
            4,
            answers::CONFIDENCE_HOW,
        ),
        (
            Part::Scalability,
            "Scalability fit",
            answers::usl_rows(r),
            1,
            answers::USL_HOW,
        ),
    ];
    for (part, title, table, left, how) in answered {
        if let Some((header, rows)) = table {
            out.push(Section::table(title, &header, &rows, left, how).part(part));
        }
    }
    if let Some((header, rows)) = tables::side_by_side(v) {
        let mut s = Section::table("Backends side by side", &header, &rows, 2, SIDE_BY_SIDE_HOW)
            .part(Part::SideBySide);
        s.how.push(tables::durability(r));
        out.push(s);
    }
    for s in tables::sections(r) {
        out.push(Section::table(s.title, &s.header, &s.rows, s.left, s.how));
    }
    out
}

/// One output format of a report. Each reads only the [`Document`]; CSV can fail (its
/// writer's errors), the text formats cannot (`Infallible`).
pub trait Renderer {
    type Error;
    fn render(&self, doc: &Document) -> Result<String, Self::Error>;
}
