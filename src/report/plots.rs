//! The plots, drawn with plotters from a `RunResult` alone, each as SVG (inlined into
//! report.html) and PNG. Text uses the DejaVu Sans font shipped in `assets/`, so plots
//! render on machines without system fonts. A strategy has the same colour in every plot
//! (Okabe-Ito, colour-blind safe). Degenerate input (no trials, one point, empty
//! histograms) draws a note instead of failing; a drawing error becomes a warning.

use crate::analysis::figures::CellFigures;
use crate::metrics::{HistogramSummary, merge_summaries};
use crate::results::{CellResult, RunResult, TrialResult};
use crate::strategy::Strategy;
use plotters::coord::Shift;
use plotters::prelude::*;
use std::sync::Once;

mod across;
mod before_after;
mod heatmap;
mod history;
pub use history::OverNights;
mod over_time;
mod spectrum;
mod table_health;
pub use across::AcrossBackends;
pub use before_after::{SpectrumBeforeAfter, ThroughputBeforeAfter};
pub use heatmap::Heatmap;
pub use over_time::OverTime;
pub use spectrum::Spectrum;
pub use table_health::DeadTuples;

const FONT: &str = "sans-serif";
static FONT_BYTES: &[u8] = include_bytes!("../../assets/DejaVuSans.ttf");

#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct PlotError(String);

fn de<E: std::fmt::Debug>(e: E) -> PlotError {
    PlotError(format!("{e:?}"))
}

fn register_font() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // The bytes are a valid TTF shipped with the crate; a failure here would show as
        // a drawing error on the first text, which becomes a warning, not a panic.
        let _ = plotters::style::register_font(FONT, FontStyle::Normal, FONT_BYTES);
    });
}

/// A strategy's own colour (its registry entry's: Okabe-Ito and a few more, one per
/// built-in; declared strategies take two others), the same in every plot.
pub fn strategy_color(s: &Strategy) -> RGBColor {
    let c = s.def().colour;
    RGBColor(c.0, c.1, c.2)
}

const ORANGE: RGBColor = RGBColor(0xE6, 0x9F, 0x00);
const SKY: RGBColor = RGBColor(0x56, 0xB4, 0xE9);
const GREY: RGBColor = RGBColor(0x59, 0x59, 0x59);

/// A figure: drawn once on an SVG backend and once on a PNG backend.
pub trait Figure {
    /// File stem under `plots/`.
    fn name(&self) -> &'static str;
    fn title(&self) -> String;
    /// One short paragraph for report.html.
    fn how_to_read(&self) -> &'static str;
    /// One line drawn under the title: what to look at first.
    fn look_at(&self) -> &'static str;
    fn size(&self) -> (u32, u32) {
        (960, 560)
    }
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), PlotError>;
}

/// A rendered figure: its SVG text (for inlining) and where the files went.
pub struct Rendered {
    pub name: &'static str,
    /// Path under `plots/` without extension: the name, or `<backend>/<name>` when a
    /// run drove several backends.
    pub stem: String,
    pub title: String,
    pub how_to_read: &'static str,
    pub svg: String,
}

/// Draws `fig` to `dir/<name>.svg` and `dir/<name>.png`, each written whole into the
/// folder (never through a link there).
pub fn render(fig: &impl Figure, dir: &crate::results::Folder) -> Result<Rendered, PlotError> {
    register_font();
    let size = fig.size();
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, size).into_drawing_area();
        root.fill(&WHITE).map_err(de)?;
        fig.draw(&root)?;
        root.present().map_err(de)?;
    }
    let written = |e: crate::results::ResultsError| PlotError(e.to_string());
    dir.write(&format!("{}.svg", fig.name()), svg.as_bytes())
        .map_err(written)?;
    let mut rgb = vec![0u8; size.0 as usize * size.1 as usize * 3];
    {
        let root = BitMapBackend::with_buffer(&mut rgb, size).into_drawing_area();
        root.fill(&WHITE).map_err(de)?;
        fig.draw(&root)?;
        root.present().map_err(de)?;
    }
    let mut png = Vec::new();
    {
        // The settings `image`'s PNG encoder chose when it wrote these files.
        let mut e = png::Encoder::new(&mut png, size.0, size.1);
        e.set_color(png::ColorType::Rgb);
        e.set_depth(png::BitDepth::Eight);
        e.set_filter(png::FilterType::Sub);
        e.set_adaptive_filter(png::AdaptiveFilterType::Adaptive);
        let mut w = e.write_header().map_err(de)?;
        w.write_image_data(&rgb).map_err(de)?;
        w.finish().map_err(de)?;
    }
    dir.write(&format!("{}.png", fig.name()), &png)
        .map_err(written)?;
    Ok(Rendered {
        name: fig.name(),
        stem: fig.name().to_string(),
        title: fig.title(),
        how_to_read: fig.how_to_read(),
        svg,
    })
}

/// The caption drawn in the image: with the backend's name in front when the run drove
/// several backends and this figure shows one of them, so a PNG alone says which.
fn drawn_title(run: &RunResult, title: String) -> String {
    let mut kinds = run.cells.iter().map(|c| c.backend);
    match kinds.next() {
        Some(k) if run.environment.targets.len() > 1 && kinds.all(|o| o == k) => {
            format!("{k}: {title}")
        }
        _ => title,
    }
}

/// The area below a figure's title and its look-at line.
fn headed<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    look_at: &str,
) -> Result<DrawingArea<DB, Shift>, PlotError> {
    let area = root.titled(title, caption_font()).map_err(de)?;
    let style = TextStyle::from((FONT, 14).into_font()).color(&GREY);
    area.titled(look_at, style).map_err(de)
}

fn caption_font() -> (&'static str, u32) {
    (FONT, 20)
}

/// Writes `msg` in the middle of `area`: what a plot shows when there is nothing to plot.
fn note<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, msg: &str) -> Result<(), PlotError> {
    let (w, h) = area.dim_in_pixel();
    let style = TextStyle::from((FONT, 16).into_font()).color(&GREY);
    area.draw(&Text::new(
        msg.to_string(),
        (w as i32 / 8, h as i32 / 2),
        style,
    ))
    .map_err(de)
}

/// (min, max) padded so that a single value still spans a visible range.
fn span(values: impl Iterator<Item = f64>, from_zero: bool) -> (f64, f64) {
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for v in values.filter(|v| v.is_finite()) {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    if !lo.is_finite() {
        return (0.0, 1.0);
    }
    if from_zero {
        lo = lo.min(0.0);
    }
    if hi - lo < 1e-9 {
        hi = lo + lo.abs().max(1.0);
    }
    (lo, hi + (hi - lo) * 0.08)
}

/// A count's tick label: whole values only (no "2.5 workers").
fn whole(v: &f64) -> String {
    match v.fract() == 0.0 {
        true => format!("{v:.0}"),
        false => String::new(),
    }
}

/// An axis's tick labels up to `top`: whole numbers once the axis reaches 10 ("4000",
/// not "4000.0"), two decimals below that.
fn axis_number(top: f64) -> impl Fn(&f64) -> String {
    move |v| match top >= 10.0 {
        true => format!("{v:.0}"),
        false => format!("{v:.2}"),
    }
}

/// Whether the run measured the claim path alone (nothing completes), so throughput
/// plots show claimed rather than completed jobs.
pub fn claim_only(r: &RunResult) -> bool {
    let all = || r.cells.iter().flat_map(|c| &c.trials);
    all().all(|t| t.counts.jobs_completed == 0) && all().any(|t| t.counts.jobs_claimed > 0)
}

fn strategies(r: &RunResult) -> Vec<Strategy> {
    let mut s: Vec<Strategy> = r.cells.iter().map(|c| c.strategy.clone()).collect();
    s.sort();
    s.dedup();
    s
}

/// The cells the single-condition plots look at: highest worker count, then the first
/// batch size and layout of the matrix.
/// Phases with a seeded backlog only come first: they compare strategies head to head.
fn focus(r: &RunResult) -> Option<(u32, u32, String, String)> {
    let closed: Vec<&CellResult> = r.cells.iter().filter(|c| !c.has_arrivals()).collect();
    let pool = if closed.is_empty() {
        r.cells.iter().collect()
    } else {
        closed
    };
    let workers = pool.iter().map(|c| c.workers).max()?;
    let c = pool.iter().find(|c| c.workers == workers)?;
    Some((
        workers,
        c.batch_size,
        c.index_layout.clone(),
        c.phase.clone(),
    ))
}

fn focus_cells(r: &RunResult) -> Vec<&CellResult> {
    match focus(r) {
        Some((w, b, l, p)) => r
            .cells
            .iter()
            .filter(|c| c.workers == w && c.batch_size == b && c.index_layout == l && c.phase == p)
            .collect(),
        None => Vec::new(),
    }
}

/// The cells of the first phase with arrivals (not a rate search): where queue wait and
/// oldest-pending age say whether a pool keeps up.
pub fn arrival_cells(r: &RunResult) -> Vec<&CellResult> {
    let searched = |c: &CellResult| r.rate_searches.iter().any(|s| s.phase == c.phase);
    let Some(first) = r.cells.iter().find(|c| c.has_arrivals() && !searched(c)) else {
        return Vec::new();
    };
    r.cells
        .iter()
        .filter(|c| c.phase == first.phase && c.has_arrivals() && !searched(c))
        .collect()
}

/// A label and colour per arrival cell: the strategy, and the workers when a strategy
/// appears at several worker counts. A strategy keeps its colour in every plot; its
/// worker counts are shades of it, the smallest pool darkest.
fn arrival_lines(cells: &[&CellResult]) -> Vec<(String, RGBColor)> {
    cells
        .iter()
        .map(|c| {
            let same: Vec<&&CellResult> =
                cells.iter().filter(|o| o.strategy == c.strategy).collect();
            let color = strategy_color(&c.strategy);
            if same.len() > 1 {
                let k = same.iter().filter(|o| o.workers < c.workers).count();
                (
                    format!("{} w={}", c.strategy, c.workers),
                    shade(color, k, same.len()),
                )
            } else {
                (c.strategy.to_string(), color)
            }
        })
        .collect()
}

/// The `k`-th of `n` shades of `c`: `c` itself first, then mixed with up to 60% white.
fn shade(c: RGBColor, k: usize, n: usize) -> RGBColor {
    let t = 0.6 * k as f64 / (n.max(2) - 1) as f64;
    let mix = |v: u8| (f64::from(v) + (255.0 - f64::from(v)) * t).round() as u8;
    RGBColor(mix(c.0), mix(c.1), mix(c.2))
}

fn focus_label(r: &RunResult) -> String {
    focus(r)
        .map(|(w, b, l, _)| format!("{w} workers, batch {b}, {l}"))
        .unwrap_or_else(|| "no trials".into())
}

fn arrival_label(r: &RunResult) -> String {
    match arrival_cells(r).first() {
        Some(c) => format!(
            "{} arrivals/s, batch {}, {}",
            c.arrival_rate_per_s.unwrap_or(0.0).round(),
            c.batch_size,
            c.index_layout
        ),
        None => "no phase with arrivals".into(),
    }
}

fn line_style(s: &Strategy) -> ShapeStyle {
    strategy_color(s).stroke_width(2)
}

fn legend_entry(s: &Strategy) -> impl Fn((i32, i32)) -> PathElement<(i32, i32)> + use<> {
    let style = line_style(s);
    move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], style)
}

/// A labelled line in its colour.
type Line = (String, RGBColor, Vec<(f64, f64)>);

/// Draws labelled lines, each in its own colour, and the legend.
fn labelled_lines<'a, DB, CT>(
    chart: &mut ChartContext<'a, DB, CT>,
    lines: Vec<(String, RGBColor, Vec<CT::From>)>,
    position: SeriesLabelPosition,
) -> Result<(), PlotError>
where
    DB: DrawingBackend + 'a,
    CT: CoordTranslate,
    CT::From: Clone + 'static,
{
    for (label, color, pts) in lines {
        let style = color.stroke_width(2);
        chart
            .draw_series(LineSeries::new(pts, style))
            .map_err(de)?
            .label(label)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], style));
    }
    legend(chart, position)
}

fn legend<'a, DB, CT>(
    chart: &mut ChartContext<'a, DB, CT>,
    position: SeriesLabelPosition,
) -> Result<(), PlotError>
where
    DB: DrawingBackend + 'a,
    CT: CoordTranslate,
{
    chart
        .configure_series_labels()
        .label_font((FONT, 13))
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .position(position)
        .draw()
        .map_err(de)
}

/// A panel of a figure drawn against the worker count: phase, batch size, layout.
type Panel = (String, u32, String);

/// One panel per phase without arrivals, batch size and index layout, sorted.
fn closed_panels(r: &RunResult) -> Vec<Panel> {
    let mut panels: Vec<Panel> = r
        .cells
        .iter()
        .filter(|c| !c.has_arrivals())
        .map(|c| (c.phase.clone(), c.batch_size, c.index_layout.clone()))
        .collect();
    panels.sort();
    panels.dedup();
    panels
}

/// Up to three panels a row.
fn panel_areas<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    n: usize,
) -> Vec<DrawingArea<DB, Shift>> {
    let cols = n.clamp(1, 3);
    root.split_evenly((n.div_ceil(cols), cols))
}

/// The cells a panel draws.
fn panel_cells<'a>(r: &'a RunResult, (phase, batch, layout): &Panel) -> Vec<&'a CellResult> {
    r.cells
        .iter()
        .filter(|c| !c.has_arrivals())
        .filter(|c| &c.phase == phase && c.batch_size == *batch && &c.index_layout == layout)
        .collect()
}

/// Where a panel puts a worker count across: at its value, or at its log2 when the
/// counts span 8x or more, so that 1, 2 and 4 workers are not crowded into the left edge
/// by 64.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct WorkerAxis {
    log2: bool,
    lo: f64,
    hi: f64,
}

impl WorkerAxis {
    pub(super) fn of(cells: &[&CellResult]) -> WorkerAxis {
        WorkerAxis::spanning(cells.iter().map(|c| c.workers))
    }

    fn spanning(counts: impl Iterator<Item = u32> + Clone) -> WorkerAxis {
        let workers = || counts.clone().map(f64::from);
        let lo = workers().fold(f64::INFINITY, f64::min);
        let hi = workers().fold(0.0, f64::max);
        let (lo, hi) = if lo.is_finite() { (lo, hi) } else { (1.0, 1.0) };
        WorkerAxis {
            log2: lo >= 1.0 && hi / lo >= 8.0,
            lo,
            hi,
        }
    }

    /// The drawing coordinate of `workers`.
    pub(super) fn x(self, workers: f64) -> f64 {
        match self.log2 {
            true => workers.log2(),
            false => workers,
        }
    }

    fn range(self) -> std::ops::Range<f64> {
        match self.log2 {
            true => self.lo.log2() - 0.3..self.hi.log2() + 0.3,
            false => (self.lo - 0.5).max(0.0)..self.hi + (self.hi - self.lo).max(1.0) * 0.08,
        }
    }

    /// A tick's label: whole worker counts only (no "2.5"); on the log2 axis, the powers
    /// of two.
    fn label(self, v: f64) -> String {
        let w = match self.log2 {
            true => 2f64.powf(v),
            false => v,
        };
        match v.fract() == 0.0 && w >= 1.0 - 1e-9 {
            true => format!("{:.0}", w.round()),
            false => String::new(),
        }
    }

    fn desc(self) -> &'static str {
        match self.log2 {
            true => "workers (log2 scale)",
            false => "workers",
        }
    }
}

/// The top of a panel's value axis that leaves room above `y1`, the highest point, for
/// a legend of `entries` lines in the upper left: about a tenth of the panel's height
/// and a tenth per line, at most 60%.
fn legend_room(y1: f64, entries: usize) -> f64 {
    y1 / (1.0 - (0.1 + 0.09 * entries as f64).min(0.6))
}

/// A panel's axes: workers across, `y_desc` from 0 to `y1`, captioned by the panel.
fn workers_axes<'a, DB: DrawingBackend>(
    area: &'a DrawingArea<DB, Shift>,
    (phase, batch, layout): &Panel,
    axis: WorkerAxis,
    y1: f64,
    y_desc: &str,
) -> Result<
    ChartContext<
        'a,
        DB,
        Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>,
    >,
    PlotError,
> {
    let caption = if phase.is_empty() {
        format!("batch {batch}, {layout}")
    } else {
        format!("{phase}: batch {batch}, {layout}")
    };
    let mut chart = ChartBuilder::on(area)
        .caption(caption, (FONT, 15))
        .margin(8)
        .x_label_area_size(36)
        .y_label_area_size(60)
        .build_cartesian_2d(axis.range(), 0.0..y1)
        .map_err(de)?;
    let whole = |v: &f64| axis.label(*v);
    let y_fmt = axis_number(y1);
    chart
        .configure_mesh()
        .light_line_style(RGBColor(0xF0, 0xF0, 0xF0))
        .x_desc(axis.desc())
        .y_desc(y_desc)
        .x_label_formatter(&whole)
        .y_label_formatter(&y_fmt)
        .label_style((FONT, 12))
        .draw()
        .map_err(de)?;
    Ok(chart)
}

/// A metric per cell, drawn against the worker count: a line per strategy, a panel per
/// batch size and index layout.
pub struct VsWorkers<'a> {
    pub run: &'a RunResult,
    pub lock_wait: bool,
}

impl Figure for VsWorkers<'_> {
    fn name(&self) -> &'static str {
        if self.lock_wait {
            "lock_wait_vs_workers"
        } else {
            "throughput_vs_workers"
        }
    }

    fn title(&self) -> String {
        if self.lock_wait {
            "Lock-wait share by worker count".into()
        } else if claim_only(self.run) {
            "Claimed jobs/s by worker count (claim-only)".into()
        } else {
            "Completed jobs/s by worker count".into()
        }
    }

    fn look_at(&self) -> &'static str {
        match self.lock_wait {
            true => {
                "A claim that skips locked rows stays near zero; one that waits climbs with the workers."
            }
            false => {
                "Where a line flattens, more workers stop helping; where it falls, they get in each other's way."
            }
        }
    }

    fn how_to_read(&self) -> &'static str {
        if self.lock_wait {
            "Share of worker-connection samples that were waiting on a lock (pg_stat_activity on PostgreSQL, information_schema.INNODB_TRX on MySQL). A strategy that skips locked rows stays near zero; one that waits climbs with the worker count, and so does its claim latency."
        } else {
            "Steady-state throughput (mean over repetitions) against the number of workers, for phases without arrivals. Where a line flattens, more workers stop helping; where it falls, they get in each other's way. A dashed curve is the Universal Scalability Law fitted to a sweep of 4 or more worker counts; a black ring marks the cell `recommend` picks for the run's SLOs where that means something (a phase with arrivals or an SLO on throughput, a strategy whose promises held). Panels split phases, batch sizes and index layouts."
        }
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), PlotError> {
        let root = headed(root, &drawn_title(self.run, self.title()), self.look_at())?;
        let panels = closed_panels(self.run);
        if panels.is_empty() {
            return note(&root, "no trials in this run");
        }
        let areas = panel_areas(&root, panels.len());
        let lock = self.lock_wait;
        // The cell's figures as every table shows them (a claim-only phase's throughput
        // is what it claimed).
        let value = move |c: &CellResult| {
            let f = CellFigures::of(c);
            match lock {
                true => f.lock_wait_share * 100.0,
                false => f.throughput,
            }
        };
        let recommended = recommended_cells(self.run);
        for (panel, area) in panels.iter().zip(areas.iter()) {
            let cells = panel_cells(self.run, panel);
            let axis = WorkerAxis::of(&cells);
            // Each cell's figure once: it merges the cell's histograms.
            let values: Vec<f64> = cells.iter().map(|c| value(c)).collect();
            let of_cell = cells.iter().zip(&values);
            let (_, y1) = span(values.iter().copied(), true);
            let named = strategies(self.run)
                .iter()
                .filter(|s| cells.iter().any(|c| &c.strategy == *s))
                .count();
            let y1 = legend_room(y1, named);
            let y_desc = if lock {
                "lock wait, % of samples"
            } else {
                "jobs/s"
            };
            let mut chart = workers_axes(area, panel, axis, y1, y_desc)?;
            for s in strategies(self.run) {
                let mut pts: Vec<(f64, f64)> = of_cell
                    .clone()
                    .filter(|(c, _)| c.strategy == s)
                    .map(|(c, &v)| (f64::from(c.workers), v))
                    .collect();
                pts.sort_by(|a, b| a.0.total_cmp(&b.0));
                let drawn: Vec<(f64, f64)> = pts.iter().map(|&(w, v)| (axis.x(w), v)).collect();
                if pts.is_empty() {
                    continue;
                }
                let color = strategy_color(&s);
                let series = chart
                    .draw_series(LineSeries::new(drawn.clone(), line_style(&s)))
                    .map_err(de)?;
                // Every panel names its own lines: panels hold different strategies.
                series
                    .label(s.as_str().to_string())
                    .legend(legend_entry(&s));
                chart
                    .draw_series(drawn.iter().map(|&p| Circle::new(p, 4, color.filled())))
                    .map_err(de)?;
                if lock {
                    continue;
                }
                if let Some(fit) = usl_fit(&pts) {
                    let curve = usl_curve(&fit, axis.lo.max(1.0), axis.hi)
                        .into_iter()
                        .map(|(w, v)| (axis.x(w), v));
                    chart
                        .draw_series(DashedLineSeries::new(curve, 4, 4, color.stroke_width(1)))
                        .map_err(de)?;
                }
                // Rings on this strategy's cells of the panel that `recommend` picked.
                let picked = |c: &&CellResult| {
                    c.strategy == s && recommended.iter().any(|r| std::ptr::eq(*r, *c))
                };
                for (c, &v) in of_cell.clone().filter(|(c, _)| picked(c)) {
                    let p = (axis.x(f64::from(c.workers)), v);
                    chart
                        .draw_series([Circle::new(p, 9, BLACK.stroke_width(2))])
                        .map_err(de)?;
                }
            }
            legend(&mut chart, SeriesLabelPosition::UpperLeft)?;
        }
        Ok(())
    }
}

fn usl_fit(pts: &[(f64, f64)]) -> Option<crate::analysis::usl::UslFit> {
    crate::analysis::usl::fit(pts)
}

/// The fitted curve at 60 points between `from` and `to` workers.
fn usl_curve(fit: &crate::analysis::usl::UslFit, from: f64, to: f64) -> Vec<(f64, f64)> {
    (0..=60)
        .map(|i| {
            let n = from + (to - from) * f64::from(i) / 60.0;
            (n, fit.throughput(n))
        })
        .collect()
}

/// The cells `recommend` picks for the run's own SLOs where that means something (none
/// without SLOs; see `recommend::meaningful`).
fn recommended_cells(r: &RunResult) -> Vec<&CellResult> {
    if r.slos.is_empty() {
        return Vec::new();
    }
    crate::analysis::recommend::meaningful(r, &r.slos)
        .0
        .into_iter()
        .filter_map(|rec| {
            let (w, b) = rec.recommended?;
            r.cells.iter().find(|c| {
                c.phase == rec.phase
                    && c.backend == rec.backend
                    && c.strategy == rec.strategy
                    && c.index_layout == rec.index_layout
                    && c.workers == w
                    && c.batch_size == b
            })
        })
        .collect()
}

/// Duplicate claims and executions per strategy, summed over every trial.
pub struct Duplicates<'a> {
    pub run: &'a RunResult,
}

impl Figure for Duplicates<'_> {
    fn name(&self) -> &'static str {
        "duplicates"
    }

    fn title(&self) -> String {
        "Duplicates per strategy (all trials)".into()
    }

    fn look_at(&self) -> &'static str {
        "Only a strategy without a safe claim should have bars; ledger and effects must agree."
    }

    fn how_to_read(&self) -> &'static str {
        "Bars count duplicate claims (a job handed to a worker while another still held it) and duplicate executions (handler runs beyond the first per job and attempt), the latter counted from the workers' ledger and from the effects table in the database: those two bars must be equal. Only naive is expected above zero. Labels: claims / executions (ledger) / executions (effects), and duplicate claims as a share of distinct jobs claimed."
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), PlotError> {
        let root = headed(root, &drawn_title(self.run, self.title()), self.look_at())?;
        let strategies = strategies(self.run);
        if strategies.is_empty() {
            return note(&root, "no trials in this run");
        }
        let bars: Vec<(Strategy, [f64; 3], f64)> = strategies
            .iter()
            .map(|s| {
                let ts: Vec<&TrialResult> = self
                    .run
                    .cells
                    .iter()
                    .filter(|c| c.strategy == *s)
                    .flat_map(|c| &c.trials)
                    .collect();
                let sum = |f: &dyn Fn(&TrialResult) -> f64| ts.iter().map(|t| f(t)).sum::<f64>();
                let claimed = sum(&|t| t.duplicates.ledger.distinct_claimed as f64);
                let dup_claims = sum(&|t| t.duplicates.ledger.duplicate_claims as f64);
                (
                    s.clone(),
                    [
                        dup_claims,
                        sum(&|t| t.duplicates.ledger.duplicate_executions as f64),
                        sum(&|t| t.duplicates.effects_duplicate_executions as f64),
                    ],
                    if claimed > 0.0 {
                        dup_claims / claimed
                    } else {
                        0.0
                    },
                )
            })
            .collect();
        let (_, y1) = span(bars.iter().flat_map(|b| b.1), true);
        let n = bars.len() as f64;
        let mut chart = ChartBuilder::on(&root)
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(70)
            .build_cartesian_2d(-0.5..n - 0.5, 0.0..y1 * 1.3)
            .map_err(de)?;
        let names: Vec<String> = bars.iter().map(|b| b.0.to_string()).collect();
        let label = move |x: &f64| {
            let i = x.round();
            if (x - i).abs() < 1e-6 && i >= 0.0 && (i as usize) < names.len() {
                names[i as usize].clone()
            } else {
                String::new()
            }
        };
        chart
            .configure_mesh()
            .light_line_style(RGBColor(0xF0, 0xF0, 0xF0))
            .x_labels(bars.len() * 2 + 1)
            .x_label_formatter(&label)
            .disable_x_mesh()
            .y_desc("count")
            .y_label_formatter(&whole)
            .label_style((FONT, 12))
            .draw()
            .map_err(de)?;
        const KINDS: [(&str, RGBColor); 3] = [
            ("duplicate claims (ledger)", ORANGE),
            ("duplicate executions (ledger)", SKY),
            ("duplicate executions (effects table)", GREY),
        ];
        for (k, &(name, color)) in KINDS.iter().enumerate() {
            let offset = (k as f64 - 1.0) * 0.26;
            chart
                .draw_series(bars.iter().enumerate().map(|(i, b)| {
                    let x = i as f64 + offset;
                    Rectangle::new([(x - 0.12, 0.0), (x + 0.12, b.1[k])], color.filled())
                }))
                .map_err(de)?
                .label(name)
                .legend(move |(x, y)| {
                    Rectangle::new([(x, y - 5), (x + 14, y + 5)], color.filled())
                });
        }
        chart
            .draw_series(bars.iter().enumerate().map(|(i, b)| {
                let top = b.1.iter().copied().fold(0.0, f64::max);
                Text::new(
                    format!(
                        "{:.0} / {:.0} / {:.0}, {:.1}%",
                        b.1[0],
                        b.1[1],
                        b.1[2],
                        b.2 * 100.0
                    ),
                    (i as f64 - 0.38, top + y1 * 0.06),
                    (FONT, 12),
                )
            }))
            .map_err(de)?;
        legend(&mut chart, SeriesLabelPosition::UpperRight)
    }
}

/// The sustainable arrival rate by worker count, a line per strategy: what each pool
/// size can take before queue wait or oldest-pending age breaks its SLO.
pub struct Sustained<'a> {
    pub run: &'a RunResult,
}

impl Figure for Sustained<'_> {
    fn name(&self) -> &'static str {
        "sustained_rate_vs_workers"
    }

    fn title(&self) -> String {
        "Sustainable arrival rate by worker count".into()
    }

    fn look_at(&self) -> &'static str {
        "Read across for the pool a target arrival rate needs; a hollow point is a lower bound."
    }

    fn how_to_read(&self) -> &'static str {
        "For each strategy and worker count, the highest open-loop Poisson arrival rate at which the SLOs on queue wait and oldest-pending age held (the Sustainable arrival rate table lists every step). A hollow point is a lower bound: no step above it was tried or failed. Read across for the pool size a target rate needs."
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), PlotError> {
        let root = headed(root, &drawn_title(self.run, self.title()), self.look_at())?;
        let searches = &self.run.rate_searches;
        let found = || {
            searches
                .iter()
                .filter_map(|s| Some((s, s.sustained_per_s?)))
        };
        if found().next().is_none() {
            return note(&root, "no rate search found a sustainable rate");
        }
        let (x0, x1) = span(found().map(|(s, _)| f64::from(s.workers)), false);
        let (_, y1) = span(found().map(|(_, x)| x), true);
        let mut chart = ChartBuilder::on(&root)
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(70)
            .build_cartesian_2d((x0 - 0.5).max(0.0)..x1 + 0.5, 0.0..y1)
            .map_err(de)?;
        chart
            .configure_mesh()
            .light_line_style(RGBColor(0xF0, 0xF0, 0xF0))
            .x_desc("workers")
            .y_desc("sustained arrivals/s")
            .x_label_formatter(&whole)
            .y_label_formatter(&axis_number(y1))
            .label_style((FONT, 12))
            .draw()
            .map_err(de)?;
        let mut lines = Vec::new();
        for st in strategies(self.run) {
            let mut pts: Vec<(f64, f64, bool)> = found()
                .filter(|(s, _)| s.strategy == st)
                .map(|(s, x)| (f64::from(s.workers), x, s.bracketed()))
                .collect();
            pts.sort_by(|a, b| a.0.total_cmp(&b.0));
            if pts.is_empty() {
                continue;
            }
            let color = strategy_color(&st);
            chart
                .draw_series(pts.iter().map(|&(x, y, exact)| {
                    let style = if exact {
                        color.filled()
                    } else {
                        color.stroke_width(2)
                    };
                    Circle::new((x, y), 5, style)
                }))
                .map_err(de)?;
            lines.push((
                st.to_string(),
                color,
                pts.iter().map(|&(x, y, _)| (x, y)).collect::<Vec<_>>(),
            ));
        }
        labelled_lines(&mut chart, lines, SeriesLabelPosition::UpperLeft)
    }
}

#[cfg(test)]
mod tests {
    use super::heatmap::ramp;
    use super::spectrum::{MAX_X, one_two_five, spectrum_label};
    use super::*;

    #[test]
    fn spectrum_labels_mark_the_decades_and_max() {
        assert_eq!(spectrum_label(&2.0), "99%");
        assert_eq!(spectrum_label(&0.3), "50%");
        assert_eq!(spectrum_label(&MAX_X), "max");
        assert_eq!(spectrum_label(&2.5), "");
    }

    #[test]
    fn log_ticks_cover_every_decade_in_range() {
        assert_eq!(one_two_five(1.5, 60.0), vec![2.0, 5.0, 10.0, 20.0, 50.0]);
        assert_eq!(one_two_five(0.3, 0.9), vec![0.5]);
    }

    #[test]
    fn worker_counts_spanning_8x_go_on_a_log2_axis_ticked_at_whole_counts() {
        let log = WorkerAxis::spanning([1, 4, 16].into_iter());
        assert!(log.log2);
        assert_eq!(log.x(16.0), 4.0);
        let labels: Vec<String> = [0.0, 0.5, 2.0, 4.0].map(|v| log.label(v)).into();
        assert_eq!(labels, ["1", "", "4", "16"]);
        let linear = WorkerAxis::spanning([2, 4, 8].into_iter());
        assert!(!linear.log2);
        assert_eq!(linear.x(8.0), 8.0);
        assert_eq!([2.5, 3.0].map(|v| linear.label(v)), ["", "3"]);
    }

    #[test]
    fn span_never_collapses() {
        assert_eq!(span([5.0].into_iter(), false), (5.0, 10.4));
        assert_eq!(span(std::iter::empty(), true), (0.0, 1.0));
    }

    #[test]
    fn ramp_ends_are_the_viridis_ends() {
        assert_eq!(ramp(0.0), RGBColor(0x44, 0x01, 0x54));
        assert_eq!(ramp(1.0), RGBColor(0xFD, 0xE7, 0x25));
    }

    #[test]
    fn every_strategy_has_its_own_colour() {
        let mut c: Vec<(u8, u8, u8)> = Strategy::builtin()
            .map(|s| {
                let RGBColor(r, g, b) = strategy_color(&s);
                (r, g, b)
            })
            .collect();
        c.sort();
        c.dedup();
        assert_eq!(c.len(), Strategy::builtin().count());
    }
}
