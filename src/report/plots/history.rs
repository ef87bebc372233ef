//! One metric over the nights of a history: each cell's series, with a red mark where
//! a lasting shift began.

use super::*;
use crate::analysis::history::History;
use crate::metric::Metric;

/// `metric` over the nights of `history`, one line per cell (at most the eight with
/// shifts first, then the rest in key order: a nightly run has a handful of cells).
pub struct OverNights<'a> {
    pub history: &'a History,
    pub metric: Metric,
}

const PALETTE: [RGBColor; 8] = [
    RGBColor(0x1F, 0x77, 0xB4),
    RGBColor(0xFF, 0x7F, 0x0E),
    RGBColor(0x2C, 0xA0, 0x2C),
    RGBColor(0x94, 0x67, 0xBD),
    RGBColor(0x8C, 0x56, 0x4B),
    RGBColor(0xE3, 0x77, 0xC2),
    RGBColor(0x7F, 0x7F, 0x7F),
    RGBColor(0x17, 0xBE, 0xCF),
];

impl Figure for OverNights<'_> {
    fn name(&self) -> &'static str {
        self.metric.name()
    }

    fn title(&self) -> String {
        format!(
            "{} over {} nights",
            self.metric.name(),
            self.history.nights.len()
        )
    }

    fn look_at(&self) -> &'static str {
        "A red mark is where a lasting shift began; a line that only wobbles is the host's drift."
    }

    fn how_to_read(&self) -> &'static str {
        "Each night's figure for each cell, in the order the runs started. Red vertical marks are the nights where change-point detection found a lasting shift of at least the history's minimum change; the table beside it gives the level before and after."
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), PlotError> {
        let root = headed(root, &self.title(), self.look_at())?;
        let mut series: Vec<&crate::analysis::history::Series> = self
            .history
            .series
            .iter()
            .filter(|s| s.metric == self.metric)
            .collect();
        series.sort_by_key(|s| s.shifts.is_empty());
        series.truncate(PALETTE.len());
        if series.is_empty() {
            return note(&root, "no cell measured this metric on enough nights");
        }
        let lines: Vec<Line> = series
            .iter()
            .zip(PALETTE)
            .map(|(s, colour)| {
                let pts = s.points.iter().map(|&(n, v)| (n as f64, v)).collect();
                (s.label(), colour, pts)
            })
            .collect();
        let x1 = (self.history.nights.len().max(2) - 1) as f64;
        let (_, y1) = span(
            lines.iter().flat_map(|(_, _, p)| p.iter().map(|q| q.1)),
            true,
        );
        let y1 = y1 / (1.0 - (0.06 + 0.05 * lines.len() as f64).min(0.4));
        let mut chart = ChartBuilder::on(&root)
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(70)
            .build_cartesian_2d(0.0..x1, 0.0..y1)
            .map_err(de)?;
        chart
            .configure_mesh()
            .light_line_style(RGBColor(0xF0, 0xF0, 0xF0))
            .x_desc("night (runs in the order they started, from 1)")
            .x_label_formatter(&|x| format!("{:.0}", x + 1.0))
            .y_desc(match self.metric.entry().unit {
                crate::metric::Unit::Ms => "ms",
                crate::metric::Unit::PerSecond => "jobs/s",
                crate::metric::Unit::Ratio => "per job",
                crate::metric::Unit::Count => "count",
            })
            .y_label_formatter(&axis_number(y1))
            .label_style((FONT, 12))
            .draw()
            .map_err(de)?;
        let mark = RGBColor(0xB0, 0x3A, 0x2E);
        for s in &series {
            for shift in &s.shifts {
                let at = shift.night as f64 - 0.5;
                chart
                    .draw_series([PathElement::new(
                        vec![(at, 0.0), (at, y1)],
                        mark.mix(0.6).stroke_width(2),
                    )])
                    .map_err(de)?;
            }
        }
        labelled_lines(&mut chart, lines, SeriesLabelPosition::UpperRight)
    }
}
