//! The two figures `compare --report` adds to the current run's report.html: throughput
//! by workers and the claim-latency spectrum, the current run solid and the baseline
//! dashed in the same colour, so a regression is the gap between a line and its ghost.

use super::*;
use crate::analysis::figures::CellFigures;

/// The baseline's cell at the same phase, backend, strategy, layout, workers and batch.
fn twin<'a>(base: &'a RunResult, c: &CellResult) -> Option<&'a CellResult> {
    let key = crate::report::summary::cell_key(c);
    base.cells
        .iter()
        .find(|b| crate::report::summary::cell_key(b) == key)
}

/// Throughput against workers for the phases without arrivals, baseline dashed.
pub struct ThroughputBeforeAfter<'a> {
    pub base: &'a RunResult,
    pub cur: &'a RunResult,
}

impl Figure for ThroughputBeforeAfter<'_> {
    fn name(&self) -> &'static str {
        "compare_throughput_vs_workers"
    }

    fn title(&self) -> String {
        format!(
            "Throughput by worker count: this run against {}",
            self.base.run_id
        )
    }

    fn how_to_read(&self) -> &'static str {
        "Steady-state throughput (mean over repetitions) of each cell with a seeded backlog, this run solid, the baseline dashed in the same colour. A solid line below its dashed twin lost throughput; whether that counts as a regression (beyond the threshold and outside the noise) is in the comparison above."
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), PlotError> {
        let root = root.titled(&self.title(), caption_font()).map_err(de)?;
        let closed = |c: &&CellResult| !c.has_arrivals();
        let mut panels: Vec<(String, u32, String)> = self
            .cur
            .cells
            .iter()
            .filter(closed)
            .map(|c| (c.phase.clone(), c.batch_size, c.index_layout.clone()))
            .collect();
        panels.sort();
        panels.dedup();
        if panels.is_empty() {
            return note(&root, "no phase with a seeded backlog in this run");
        }
        let cols = panels.len().min(3);
        let areas = root.split_evenly((panels.len().div_ceil(cols), cols));
        let throughput = |c: &CellResult| CellFigures::of(c).throughput;
        for (i, ((phase, batch, layout), area)) in panels.iter().zip(areas.iter()).enumerate() {
            let cells: Vec<&CellResult> = self
                .cur
                .cells
                .iter()
                .filter(closed)
                .filter(|c| {
                    &c.phase == phase && c.batch_size == *batch && &c.index_layout == layout
                })
                .collect();
            let twins: Vec<&CellResult> = cells.iter().filter_map(|c| twin(self.base, c)).collect();
            let (x0, x1) = span(cells.iter().map(|c| f64::from(c.workers)), false);
            let (_, y1) = span(cells.iter().chain(&twins).map(|c| throughput(c)), true);
            let caption = match phase.as_str() {
                "" => format!("batch {batch}, {layout}"),
                p => format!("{p}: batch {batch}, {layout}"),
            };
            let mut chart = ChartBuilder::on(area)
                .caption(caption, (FONT, 15))
                .margin(8)
                .x_label_area_size(36)
                .y_label_area_size(60)
                .build_cartesian_2d((x0 - 0.5).max(0.0)..x1, 0.0..y1)
                .map_err(de)?;
            chart
                .configure_mesh()
                .light_line_style(RGBColor(0xF0, 0xF0, 0xF0))
                .x_desc("workers")
                .y_desc("jobs/s")
                .label_style((FONT, 12))
                .draw()
                .map_err(de)?;
            for s in strategies(self.cur) {
                let points = |of: &[&CellResult]| {
                    let mut pts: Vec<(f64, f64)> = of
                        .iter()
                        .filter(|c| c.strategy == s)
                        .map(|c| (f64::from(c.workers), throughput(c)))
                        .collect();
                    pts.sort_by(|a, b| a.0.total_cmp(&b.0));
                    pts
                };
                let (now, before) = (points(&cells), points(&twins));
                let color = strategy_color(s);
                let series = chart
                    .draw_series(LineSeries::new(now.clone(), line_style(s)))
                    .map_err(de)?;
                if i == 0 {
                    series.label(s.as_str()).legend(legend_entry(s));
                }
                chart
                    .draw_series(now.iter().map(|&p| Circle::new(p, 4, color.filled())))
                    .map_err(de)?;
                let ghost = chart
                    .draw_series(DashedLineSeries::new(before, 6, 5, color.stroke_width(2)))
                    .map_err(de)?;
                if i == 0 {
                    ghost
                        .label(format!("{s} (baseline)"))
                        .legend(move |(x, y)| {
                            PathElement::new(vec![(x, y), (x + 6, y)], color.stroke_width(2))
                        });
                }
            }
            if i == 0 {
                legend(&mut chart, SeriesLabelPosition::UpperLeft)?;
            }
        }
        Ok(())
    }
}

/// A strategy's line, whether it is the baseline's, and its points.
type Ghosted = (Strategy, bool, Vec<(f64, f64)>);

/// The claim-latency spectrum at the current run's focus cells, baseline dashed.
pub struct SpectrumBeforeAfter<'a> {
    pub base: &'a RunResult,
    pub cur: &'a RunResult,
}

impl Figure for SpectrumBeforeAfter<'_> {
    fn name(&self) -> &'static str {
        "compare_claim_latency_spectrum"
    }

    fn title(&self) -> String {
        format!(
            "Claim latency spectrum ({}): this run against {}",
            focus_label(self.cur),
            self.base.run_id
        )
    }

    fn how_to_read(&self) -> &'static str {
        "Claim latency at each percentile, all repetitions merged, log scale, this run solid and the baseline dashed in the same colour. A solid line above its dashed twin got slower at that percentile; a gap that opens only to the right is a longer tail."
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), PlotError> {
        let root = root.titled(&self.title(), caption_font()).map_err(de)?;
        let mut lines: Vec<Ghosted> = Vec::new();
        for s in strategies(self.cur) {
            let cells: Vec<&CellResult> = focus_cells(self.cur)
                .into_iter()
                .filter(|c| c.strategy == s)
                .collect();
            let spectrum = |of: Vec<&CellResult>| {
                merge_summaries(of.iter().flat_map(|c| &c.trials).map(|t| &t.claim_latency))
                    .ok()
                    .as_ref()
                    .and_then(spectrum_points)
            };
            let twins = cells.iter().filter_map(|c| twin(self.base, c)).collect();
            if let Some(pts) = spectrum(cells) {
                lines.push((s, false, pts));
            }
            if let Some(pts) = spectrum(twins) {
                lines.push((s, true, pts));
            }
        }
        if lines.is_empty() {
            return note(&root, "no claims were recorded after warm-up");
        }
        let all = || lines.iter().flat_map(|(_, _, p)| p.iter().map(|q| q.1));
        let lo = all().fold(f64::INFINITY, f64::min).max(0.001);
        let hi = all().fold(0.0, f64::max).max(lo * 10.0);
        let mut chart = ChartBuilder::on(&root)
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(70)
            .build_cartesian_2d(
                0.2..MAX_X + 0.2,
                (lo * 0.8..hi * 1.5)
                    .log_scale()
                    .with_key_points(one_two_five(lo * 0.8, hi * 1.5)),
            )
            .map_err(de)?;
        chart
            .configure_mesh()
            .light_line_style(RGBColor(0xF0, 0xF0, 0xF0))
            .x_labels(45)
            .x_label_formatter(&spectrum_label)
            .x_desc("percentile")
            .y_label_formatter(&|v: &f64| format!("{v}"))
            .y_desc("milliseconds (log)")
            .label_style((FONT, 12))
            .draw()
            .map_err(de)?;
        for (s, baseline, pts) in lines {
            let color = strategy_color(s);
            let style = color.stroke_width(2);
            if baseline {
                chart
                    .draw_series(DashedLineSeries::new(pts, 6, 5, style))
                    .map_err(de)?
                    .label(format!("{s} (baseline)"))
                    .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 6, y)], style));
            } else {
                chart
                    .draw_series(LineSeries::new(pts, style))
                    .map_err(de)?
                    .label(s.as_str())
                    .legend(legend_entry(s));
            }
        }
        legend(&mut chart, SeriesLabelPosition::UpperLeft)
    }
}
