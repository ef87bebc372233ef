//! The two figures `compare --report` adds to the current run's report.html: throughput
//! by workers and the claim-latency spectrum, the current run solid and the baseline
//! dashed in the same colour, so a regression is the gap between a line and its ghost.

use super::spectrum::{SpectrumLine, spectrum_chart, spectrum_points};
use super::*;
use crate::analysis::figures::CellFigures;

/// The baseline's cell at the same phase, backend, strategy, layout, workers and batch.
fn twin<'a>(base: &'a RunResult, c: &CellResult) -> Option<&'a CellResult> {
    let key = crate::results::cell_key(c);
    base.cells
        .iter()
        .find(|b| crate::results::cell_key(b) == key)
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

    fn look_at(&self) -> &'static str {
        "A solid line below its dashed twin lost throughput."
    }

    fn how_to_read(&self) -> &'static str {
        "Steady-state throughput (mean over repetitions) of each cell with a seeded backlog, this run solid, the baseline dashed in the same colour. A solid line below its dashed twin lost throughput; whether that counts as a regression (beyond the threshold and outside the noise) is in the comparison above."
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), PlotError> {
        let root = headed(root, &self.title(), self.look_at())?;
        let panels = closed_panels(self.cur);
        if panels.is_empty() {
            return note(&root, "no phase with a seeded backlog in this run");
        }
        let areas = panel_areas(&root, panels.len());
        let throughput = |c: &CellResult| CellFigures::of(c).throughput;
        for (panel, area) in panels.iter().zip(areas.iter()) {
            let cells = panel_cells(self.cur, panel);
            let twins: Vec<&CellResult> = cells.iter().filter_map(|c| twin(self.base, c)).collect();
            let axis = WorkerAxis::of(&cells);
            let (_, y1) = span(cells.iter().chain(&twins).map(|c| throughput(c)), true);
            // Headroom for the legend in the upper left: a line per strategy and one that
            // says dashed is the baseline.
            let named = strategies(self.cur)
                .iter()
                .filter(|s| cells.iter().any(|c| &c.strategy == *s))
                .count();
            let y1 = legend_room(y1, named + 1);
            let mut chart = workers_axes(area, panel, axis, y1, "jobs/s")?;
            for s in strategies(self.cur) {
                let points = |of: &[&CellResult]| {
                    let mut pts: Vec<(f64, f64)> = of
                        .iter()
                        .filter(|c| c.strategy == s)
                        .map(|c| (axis.x(f64::from(c.workers)), throughput(c)))
                        .collect();
                    pts.sort_by(|a, b| a.0.total_cmp(&b.0));
                    pts
                };
                let (now, before) = (points(&cells), points(&twins));
                if now.is_empty() {
                    continue;
                }
                let color = strategy_color(&s);
                let series = chart
                    .draw_series(LineSeries::new(now.clone(), line_style(&s)))
                    .map_err(de)?;
                // Every panel names its own lines: panels hold different strategies.
                series
                    .label(s.as_str().to_string())
                    .legend(legend_entry(&s));
                chart
                    .draw_series(now.iter().map(|&p| Circle::new(p, 4, color.filled())))
                    .map_err(de)?;
                chart
                    .draw_series(DashedLineSeries::new(before, 6, 5, color.stroke_width(2)))
                    .map_err(de)?;
            }
            // One entry for every dashed line: each is its strategy's baseline, in its
            // colour.
            chart
                .draw_series(std::iter::empty::<PathElement<(f64, f64)>>())
                .map_err(de)?
                .label("baseline (dashed)")
                .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 6, y)], GREY.stroke_width(2)));
            legend(&mut chart, SeriesLabelPosition::UpperLeft)?;
        }
        Ok(())
    }
}

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

    fn look_at(&self) -> &'static str {
        "A solid line above its dashed twin got slower at that percentile."
    }

    fn how_to_read(&self) -> &'static str {
        "Claim latency at each percentile, all repetitions merged, log scale, this run solid and the baseline dashed in the same colour. A solid line above its dashed twin got slower at that percentile; a gap that opens only to the right is a longer tail."
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), PlotError> {
        let root = headed(root, &self.title(), self.look_at())?;
        let mut lines: Vec<SpectrumLine> = Vec::new();
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
                lines.push((s.to_string(), strategy_color(&s), false, pts));
            }
            if let Some(pts) = spectrum(twins) {
                lines.push((format!("{s} (baseline)"), strategy_color(&s), true, pts));
            }
        }
        if lines.is_empty() {
            return note(&root, "no claims were recorded after warm-up");
        }
        spectrum_chart(&root, lines)
    }
}
