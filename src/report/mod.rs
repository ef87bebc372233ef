//! The report of a run: `view` computes each cell's figures once, `document` builds every
//! table and section once from it, and each format renders that document behind one
//! trait (`document::Renderer`): `summary` (Markdown), `html` (the self-contained page),
//! `terminal` (the screen) and `export` (cells.csv; also HdrHistogram text per cell).
//! `plots` draws the figures (PNG + SVG). `render_all` writes every file next to
//! `run.json`, once per run.

pub mod answers;
pub mod appendix;
pub mod blocks;
pub mod cleanup;
pub mod cluster;
pub mod comparison;
pub mod cost;
pub mod document;
pub mod export;
pub mod history;
pub mod html;
pub mod page;
pub mod plots;
pub mod pooler;
pub mod shards;
pub mod summary;
pub mod tables;
pub mod terminal;
pub mod view;

use crate::results::{Folder, ResultsError, RunResult};
use std::path::{Path, PathBuf};

/// What `render_all` wrote, and what it could not draw (each a one-line note that the
/// report also shows; a plot that fails never fails the run).
pub struct ReportFiles {
    pub html: PathBuf,
    pub plots: Vec<PathBuf>,
    pub problems: Vec<String>,
}

/// Every report file of `r`, analysed here; [`render_view`] when the run's analysis is at
/// hand already.
pub fn render_all(r: &RunResult, dir: &Path) -> Result<ReportFiles, ResultsError> {
    render_with(&view::RunView::of(r), dir, None)
}

pub fn render_view(view: &view::RunView, dir: &Path) -> Result<ReportFiles, ResultsError> {
    render_with(view, dir, None)
}

/// As [`render_all`], with a comparison against `base` at the top of report.html and
/// its before/after plots (`compare --report`).
pub fn render_compared(
    r: &RunResult,
    dir: &Path,
    base: &RunResult,
    c: &crate::analysis::compare::Comparison,
) -> Result<ReportFiles, ResultsError> {
    render_with(&view::RunView::of(r), dir, Some((base, c)))
}

fn render_with(
    view: &view::RunView,
    dir: &Path,
    compared: Option<(&RunResult, &crate::analysis::compare::Comparison)>,
) -> Result<ReportFiles, ResultsError> {
    // The run's folder may be someone else's (an artifact re-rendered): every file goes
    // in whole, never through a link there.
    let dir = Folder::open(dir)?;
    let r = view.run;
    // One document of the run for every format written here.
    let doc = document::Document::of(view);
    dir.write("summary.md", summary::Markdown.text(&doc).as_bytes())?;
    let mut problems = Vec::new();
    match document::Renderer::render(&export::CellsCsv, &doc) {
        Ok(csv) => {
            dir.write("cells.csv", csv.as_bytes())?;
        }
        Err(e) => problems.push(format!("cells.csv not written: {}", chain(&e))),
    }
    let paired = &view.analysis.paired;
    if !paired.cells.is_empty() {
        // The paired judgement for a script (benches/gate_power.sh, a CI step): the
        // summary's table as data.
        match serde_json::to_vec_pretty(paired) {
            Ok(json) => {
                dir.write("paired.json", &json)?;
            }
            Err(e) => problems.push(format!("paired.json not written: {e}")),
        }
    }
    if let Err(e) = dir
        .sub("hgrm")
        .map_err(export::ExportError::from)
        .and_then(|hgrm| export::write_hgrms(view, &hgrm))
    {
        problems.push(format!("hgrm files not written: {}", chain(&e)));
    }
    let plot_dir = dir.sub("plots")?;
    let mut rendered = Vec::new();
    let kinds = tables::backends(r);
    if kinds.len() > 1 {
        // Every backend on one set of axes first, then one set of figures per backend,
        // each drawn from that backend's cells alone.
        if plots::AcrossBackends::applies(r) {
            match plots::render(&plots::AcrossBackends { run: r }, &plot_dir) {
                Ok(p) => rendered.push(p),
                Err(e) => problems.push(format!(
                    "plot throughput_by_backend could not be drawn: {e}"
                )),
            }
        }
        for kind in kinds {
            let sub = plot_dir.sub(kind.as_str())?;
            let mut view = r.clone();
            view.cells.retain(|c| c.backend == kind);
            for mut p in render_figures(&view, &sub, &mut problems) {
                p.stem = format!("{kind}/{}", p.name);
                p.title = format!("{kind}: {}", p.title);
                rendered.push(p);
            }
        }
    } else {
        rendered = render_figures(r, &plot_dir, &mut problems);
    }
    let mut compare_plots = Vec::new();
    let section = compared.map(|(base, c)| {
        // Several backends: the first one's cells (their lines would overlap).
        let mut cur = r.clone();
        if let Some(first) = tables::backends(r).first() {
            cur.cells.retain(|c| c.backend == *first);
        }
        let figures = [
            plots::render(&plots::ThroughputBeforeAfter { base, cur: &cur }, &plot_dir),
            plots::render(&plots::SpectrumBeforeAfter { base, cur: &cur }, &plot_dir),
        ];
        let mut drawn = Vec::new();
        for f in figures {
            match f {
                Ok(p) => drawn.push(p),
                Err(e) => problems.push(format!("comparison plot not drawn: {e}")),
            }
        }
        let section = comparison::html_section(c, &base.run_id, &drawn);
        compare_plots = drawn;
        section
    });
    let page = html::Html {
        plots: &rendered,
        plot_problems: &problems,
        comparison: section.as_deref(),
    }
    .page(&doc);
    let html_path = dir.write("report.html", page.as_bytes())?;
    let plots = rendered
        .iter()
        .chain(&compare_plots)
        .flat_map(|p| ["svg", "png"].map(|ext| plot_dir.join(&format!("{}.{ext}", p.stem))))
        .collect();
    Ok(ReportFiles {
        html: html_path,
        plots,
        problems,
    })
}

/// Draws every figure of `r` into `dir`; a figure that fails adds a note to `problems`.
fn render_figures(r: &RunResult, dir: &Folder, problems: &mut Vec<String>) -> Vec<plots::Rendered> {
    use plots::*;
    let arrivals = !arrival_cells(r).is_empty();
    let mut figures: Vec<(&str, Result<Rendered, PlotError>)> = vec![
        (
            "throughput_vs_workers",
            render(
                &VsWorkers {
                    run: r,
                    lock_wait: false,
                },
                dir,
            ),
        ),
        (
            "claim_latency_spectrum",
            render(
                &Spectrum {
                    run: r,
                    queue_wait: false,
                },
                dir,
            ),
        ),
        (
            "throughput_over_time",
            render(
                &OverTime {
                    run: r,
                    oldest_pending: false,
                },
                dir,
            ),
        ),
        ("duplicates", render(&Duplicates { run: r }, dir)),
    ];
    // A broker's queue has no locks to wait on and no production claim: on its own
    // cells those two figures would be a flat zero and an empty frame.
    let broker_only = !r.cells.is_empty() && r.cells.iter().all(|c| !c.backend.engine().runs_sql);
    if !broker_only {
        let lock_wait = VsWorkers {
            run: r,
            lock_wait: true,
        };
        figures.push(("lock_wait_vs_workers", render(&lock_wait, dir)));
        figures.push(("production_heatmap", render(&Heatmap { run: r }, dir)));
    }
    // Without arrivals, queue wait and oldest-pending age measure the trial's clock:
    // those figures would say nothing, so they are not drawn.
    if arrivals {
        let queue_wait = Spectrum {
            run: r,
            queue_wait: true,
        };
        let oldest = OverTime {
            run: r,
            oldest_pending: true,
        };
        figures.insert(2, ("queue_wait_spectrum", render(&queue_wait, dir)));
        figures.insert(3, ("oldest_pending_over_time", render(&oldest, dir)));
    }
    // The table's health is sampled only with the sampler on: dead tuples by
    // PostgreSQL, the history list by MySQL and MariaDB.
    let trials = || r.cells.iter().flat_map(|c| &c.trials);
    for (innodb, name) in [
        (false, "dead_tuples_over_time"),
        (true, "history_list_over_time"),
    ] {
        let sampled = trials().any(|t| match innodb {
            false => !t.table_series.is_empty(),
            true => !t.purge_series.is_empty(),
        });
        if sampled {
            figures.push((name, render(&plots::DeadTuples { run: r, innodb }, dir)));
        }
    }
    if !r.rate_searches.is_empty() {
        figures.push((
            "sustained_rate_vs_workers",
            render(&Sustained { run: r }, dir),
        ));
    }
    let mut rendered = Vec::new();
    for (name, result) in figures {
        match result {
            Ok(p) => rendered.push(p),
            Err(e) => problems.push(format!("plot {name} could not be drawn: {e}")),
        }
    }
    rendered
}

/// An error with its causes, `outer: inner: innermost`, for a one-line problem report.
fn chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}
