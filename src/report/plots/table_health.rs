//! The row versions a trial leaves for cleanup, as the sampler read them: the hot
//! table's dead tuples (PostgreSQL), what each strategy's claims leave for vacuum and
//! whether it keeps up; InnoDB's history list length (MySQL, MariaDB), the undo purge
//! has yet to remove. A long transaction shows in either as a climb that only ends when
//! it does.

use super::over_time::{draw_fault_marks, time_chart};
use super::*;

/// Dead tuples (or, `innodb`, the history list length) at each sampler reading for each
/// strategy at the focus cell (first repetition).
pub struct DeadTuples<'a> {
    pub run: &'a RunResult,
    pub innodb: bool,
}

impl Figure for DeadTuples<'_> {
    fn name(&self) -> &'static str {
        match self.innodb {
            false => "dead_tuples_over_time",
            true => "history_list_over_time",
        }
    }

    fn title(&self) -> String {
        format!(
            "{} over time ({}, first repetition)",
            match self.innodb {
                false => "Dead tuples in the hot table",
                true => "InnoDB's history list length",
            },
            focus_label(self.run)
        )
    }

    fn look_at(&self) -> &'static str {
        match self.innodb {
            false => "A saw-tooth is autovacuum keeping up; a steady climb is one that cannot.",
            true => "Flat is purge keeping up; a steady climb is a read view holding undo back.",
        }
    }

    fn how_to_read(&self) -> &'static str {
        match self.innodb {
            false => {
                "The hot table's dead tuples at each sampler reading (PostgreSQL's statistics, which each backend flushes about once a second): every claim, start and completion leaves a dead row version until vacuum removes it. A saw-tooth is autovacuum keeping up; a steady climb is one it cannot, or an open transaction holding every version back. Red vertical lines mark injected connection kills, server restarts, and a horizon pin held open (taken, released); grey and white bands are a timeline's phases."
            }
            true => {
                "InnoDB's history list length at each sampler reading (MySQL, MariaDB; the whole server's): the transactions whose undo purge has not yet removed, among them every claim's and completion's old row versions. Purge may remove none a read view still sees, so an open transaction shows as a climb that ends when it does. Red vertical lines mark injected connection kills, server restarts, and a horizon pin held open (taken, released); grey and white bands are a timeline's phases."
            }
        }
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), PlotError> {
        let root = headed(root, &drawn_title(self.run, self.title()), self.look_at())?;
        let cells = focus_cells(self.run);
        let lines: Vec<Line> = cells
            .iter()
            .filter_map(|c| {
                let t = c.trials.first()?;
                let pts: Vec<(f64, f64)> = match self.innodb {
                    false => t
                        .table_series
                        .iter()
                        .map(|s| (s.at_s, s.dead_tuples as f64))
                        .collect(),
                    true => t
                        .purge_series
                        .iter()
                        .map(|s| (s.at_s, s.history_length as f64))
                        .collect(),
                };
                (!pts.is_empty())
                    .then(|| (c.strategy.to_string(), strategy_color(&c.strategy), pts))
            })
            .collect();
        if lines.is_empty() {
            return note(
                &root,
                match self.innodb {
                    false => "no table samples (PostgreSQL with the sampler on)",
                    true => "no history list samples (MySQL or MariaDB with the sampler on)",
                },
            );
        }
        let (x0, x1) = span(
            lines.iter().flat_map(|(_, _, p)| p.iter().map(|q| q.0)),
            true,
        );
        let (_, y1) = span(
            lines.iter().flat_map(|(_, _, p)| p.iter().map(|q| q.1)),
            true,
        );
        let y_desc = match self.innodb {
            false => "dead tuples",
            true => "history list length",
        };
        let mut chart = time_chart(&root, (x0, x1), y1, y_desc)?;
        draw_fault_marks(&mut chart, &cells, y1)?;
        labelled_lines(&mut chart, lines, SeriesLabelPosition::UpperLeft)
    }
}
