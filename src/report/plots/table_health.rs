//! The hot table's dead tuples over a trial, as the sampler read them (PostgreSQL): what
//! each strategy's claims leave for vacuum, and whether it keeps up. A long transaction
//! shows here as a climb that only ends when it does.

use super::over_time::{draw_fault_marks, time_chart};
use super::*;

/// Dead tuples per second for each strategy at the focus cell (first repetition).
pub struct DeadTuples<'a> {
    pub run: &'a RunResult,
}

impl Figure for DeadTuples<'_> {
    fn name(&self) -> &'static str {
        "dead_tuples_over_time"
    }

    fn title(&self) -> String {
        format!(
            "Dead tuples in the hot table over time ({}, first repetition)",
            focus_label(self.run)
        )
    }

    fn look_at(&self) -> &'static str {
        "A saw-tooth is autovacuum keeping up; a steady climb is one that cannot."
    }

    fn how_to_read(&self) -> &'static str {
        "The hot table's dead tuples at each sampler reading (PostgreSQL's statistics, which each backend flushes about once a second): every claim, start and completion leaves a dead row version until vacuum removes it. A saw-tooth is autovacuum keeping up; a steady climb is one it cannot, or an open transaction holding every version back. Red vertical lines mark injected connection kills, server restarts, and a snapshot held open (taken, released)."
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), PlotError> {
        let root = headed(root, &drawn_title(self.run, self.title()), self.look_at())?;
        let cells = focus_cells(self.run);
        let lines: Vec<Line> = cells
            .iter()
            .filter_map(|c| {
                let t = c.trials.first()?;
                let pts: Vec<(f64, f64)> = t
                    .table_series
                    .iter()
                    .map(|s| (s.at_s, s.dead_tuples as f64))
                    .collect();
                (!pts.is_empty())
                    .then(|| (c.strategy.to_string(), strategy_color(&c.strategy), pts))
            })
            .collect();
        if lines.is_empty() {
            return note(&root, "no table samples (PostgreSQL with the sampler on)");
        }
        let (x0, x1) = span(
            lines.iter().flat_map(|(_, _, p)| p.iter().map(|q| q.0)),
            true,
        );
        let (_, y1) = span(
            lines.iter().flat_map(|(_, _, p)| p.iter().map(|q| q.1)),
            true,
        );
        let mut chart = time_chart(&root, (x0, x1), y1, "dead tuples")?;
        draw_fault_marks(&mut chart, &cells, y1)?;
        labelled_lines(&mut chart, lines, SeriesLabelPosition::UpperLeft)
    }
}
