//! Renderers from a `RunResult` alone, one module per output format: `summary` (Markdown),
//! `plots` (PNG + SVG), `html` (the self-contained report), `export` (CSV and HdrHistogram
//! text). `render_all` writes every one of them next to `run.json`.

pub mod export;
pub mod html;
pub mod plots;
pub mod summary;

use crate::results::{ResultsError, RunResult, write_atomic};
use std::path::{Path, PathBuf};

/// What `render_all` wrote, and what it could not draw (each a one-line note that the
/// report also shows; a plot that fails never fails the run).
pub struct ReportFiles {
    pub html: PathBuf,
    pub plots: Vec<PathBuf>,
    pub problems: Vec<String>,
}

pub fn render_all(r: &RunResult, dir: &Path) -> Result<ReportFiles, ResultsError> {
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| ResultsError::Io { path, source }
    };
    write_atomic(&dir.join("summary.md"), summary::render(r).as_bytes())?;
    let mut problems = Vec::new();
    match export::cells_csv(r) {
        Ok(csv) => write_atomic(&dir.join("cells.csv"), csv.as_bytes())?,
        Err(e) => problems.push(format!("cells.csv not written: {e}")),
    }
    if let Err(e) = export::write_hgrms(r, &dir.join("hgrm")) {
        problems.push(format!("hgrm files not written: {e}"));
    }
    let plot_dir = dir.join("plots");
    std::fs::create_dir_all(&plot_dir).map_err(io(&plot_dir))?;
    let mut rendered = Vec::new();
    let mut keep = |result: Result<plots::Rendered, plots::PlotError>, name: &str| match result {
        Ok(p) => rendered.push(p),
        Err(e) => problems.push(format!("plot {name} could not be drawn: {e}")),
    };
    use plots::*;
    keep(
        render(
            &VsWorkers {
                run: r,
                lock_wait: false,
            },
            &plot_dir,
        ),
        "throughput_vs_workers",
    );
    keep(
        render(
            &Spectrum {
                run: r,
                queue_wait: false,
            },
            &plot_dir,
        ),
        "claim_latency_spectrum",
    );
    keep(
        render(
            &Spectrum {
                run: r,
                queue_wait: true,
            },
            &plot_dir,
        ),
        "queue_wait_spectrum",
    );
    keep(
        render(
            &OverTime {
                run: r,
                oldest_pending: true,
            },
            &plot_dir,
        ),
        "oldest_pending_over_time",
    );
    keep(
        render(
            &OverTime {
                run: r,
                oldest_pending: false,
            },
            &plot_dir,
        ),
        "throughput_over_time",
    );
    keep(render(&Duplicates { run: r }, &plot_dir), "duplicates");
    keep(
        render(
            &VsWorkers {
                run: r,
                lock_wait: true,
            },
            &plot_dir,
        ),
        "lock_wait_vs_workers",
    );
    keep(render(&Heatmap { run: r }, &plot_dir), "production_heatmap");
    let html_path = dir.join("report.html");
    write_atomic(&html_path, html::render(r, &rendered, &problems).as_bytes())?;
    let plots = rendered
        .iter()
        .flat_map(|p| ["svg", "png"].map(|ext| plot_dir.join(format!("{}.{ext}", p.name))))
        .collect();
    Ok(ReportFiles {
        html: html_path,
        plots,
        problems,
    })
}
