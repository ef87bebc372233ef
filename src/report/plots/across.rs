//! Every backend of a run on one set of axes. A run that drives several backends draws
//! each one's figures from its own cells (`plots/<backend>/`), where a table's and a
//! broker's lines never meet; this figure puts them side by side — the question a run of
//! `workloads/alternatives.toml` or `workloads/backends.toml` is asked: with as many
//! workers, which system finishes more jobs?

use super::{
    Figure, PlotError, WorkerAxis, claim_only, de, drawn_title, headed, labelled_lines,
    legend_room, note, panel_areas, span, strategy_color, workers_axes,
};
use crate::analysis::figures::CellFigures;
use crate::results::{CellResult, RunResult};
use plotters::coord::Shift;
use plotters::prelude::*;

pub struct AcrossBackends<'a> {
    pub run: &'a RunResult,
}

/// One line: the cells of one phase, backend, strategy and layout.
type LineKey<'a> = (&'a str, crate::backend_kind::BackendKind, &'a str, &'a str);

fn key(c: &CellResult) -> LineKey<'_> {
    (&c.phase, c.backend, c.strategy.as_str(), &c.index_layout)
}

impl AcrossBackends<'_> {
    /// Whether the figure has something to set side by side: cells without arrivals on
    /// more than one backend.
    pub fn applies(run: &RunResult) -> bool {
        let mut kinds = run
            .cells
            .iter()
            .filter(|c| !c.has_arrivals())
            .map(|c| c.backend);
        kinds
            .next()
            .is_some_and(|first| kinds.any(|other| other != first))
    }

    /// The batch sizes of the cells without arrivals, one panel each.
    fn batches(&self) -> Vec<u32> {
        let mut b: Vec<u32> = self
            .run
            .cells
            .iter()
            .filter(|c| !c.has_arrivals())
            .map(|c| c.batch_size)
            .collect();
        b.sort_unstable();
        b.dedup();
        b
    }
}

impl Figure for AcrossBackends<'_> {
    fn name(&self) -> &'static str {
        "throughput_by_backend"
    }

    fn title(&self) -> String {
        match claim_only(self.run) {
            true => "Claimed jobs/s by worker count, every backend (claim-only)".into(),
            false => "Completed jobs/s by worker count, every backend".into(),
        }
    }

    fn look_at(&self) -> &'static str {
        "The same pool on each system: the higher line finished more jobs with as many workers."
    }

    fn how_to_read(&self) -> &'static str {
        "Steady-state throughput (mean over repetitions) against the number of workers, every backend of the run on one set of axes, a panel per batch size, for phases without arrivals: a line per phase, backend, strategy and index layout, named by strategy and backend (the phase too where a strategy ran in several on one backend). The per-backend figures below keep each backend's own detail; this one is for comparing systems with the same pool."
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), PlotError> {
        let root = headed(root, &drawn_title(self.run, self.title()), self.look_at())?;
        let batches = self.batches();
        if batches.is_empty() {
            return note(&root, "no phase without arrivals in this run");
        }
        let areas = panel_areas(&root, batches.len());
        // Lines in the run's order; a strategy's second line (another backend, layout or
        // phase) is named by what tells it apart.
        let mut keys: Vec<LineKey<'_>> = Vec::new();
        for c in self.run.cells.iter().filter(|c| !c.has_arrivals()) {
            if !keys.contains(&key(c)) {
                keys.push(key(c));
            }
        }
        let label = |k: &LineKey<'_>| {
            let same = keys.iter().filter(|o| (o.1, o.2) == (k.1, k.2)).count();
            match (same > 1, k.0.is_empty()) {
                (true, false) => format!("{} on {} ({})", k.2, k.1, k.0),
                (true, true) => format!("{} on {}, {}", k.2, k.1, k.3),
                _ => format!("{} on {}", k.2, k.1),
            }
        };
        for (batch, area) in batches.iter().zip(areas.iter()) {
            let cells: Vec<&CellResult> = self
                .run
                .cells
                .iter()
                .filter(|c| !c.has_arrivals() && c.batch_size == *batch)
                .collect();
            let axis = WorkerAxis::of(&cells);
            let values: Vec<f64> = cells
                .iter()
                .map(|c| CellFigures::of(c).throughput)
                .collect();
            let here: Vec<&LineKey<'_>> = keys
                .iter()
                .filter(|k| cells.iter().any(|c| key(c) == **k))
                .collect();
            let (_, y1) = span(values.iter().copied(), true);
            let y1 = legend_room(y1, here.len());
            let panel = (String::new(), *batch, "every backend".to_string());
            let mut chart = workers_axes(area, &panel, axis, y1, "jobs/s")?;
            let mut lines = Vec::new();
            for k in here {
                let mut pts: Vec<(f64, f64)> = cells
                    .iter()
                    .zip(&values)
                    .filter(|(c, _)| key(c) == *k)
                    .map(|(c, &v)| (axis.x(f64::from(c.workers)), v))
                    .collect();
                pts.sort_by(|a, b| a.0.total_cmp(&b.0));
                let strategy = &cells
                    .iter()
                    .find(|c| key(c) == *k)
                    .expect("a line has a cell")
                    .strategy;
                let color = strategy_color(strategy);
                chart
                    .draw_series(pts.iter().map(|&p| Circle::new(p, 4, color.filled())))
                    .map_err(de)?;
                lines.push((label(k), color, pts));
            }
            labelled_lines(&mut chart, lines, SeriesLabelPosition::UpperLeft)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend_kind::BackendKind;
    use crate::strategy::Strategy;

    fn cell(s: Strategy, kind: BackendKind, workers: u32, per_s: f64) -> CellResult {
        let t = crate::results::TrialResult {
            measured_s: 1.0,
            completed_per_s: per_s,
            ..Default::default()
        };
        CellResult {
            backend: kind,
            ..CellResult::fetch_order(s, workers, 10, vec![t])
        }
    }

    /// Drawn only where cells without arrivals ran on two backends or more, and then
    /// with every line in it.
    #[test]
    fn it_sets_the_backends_side_by_side_only_when_there_are_several() {
        let streams = Strategy::builtin_named("redis-streams").unwrap();
        let one = RunResult {
            cells: vec![
                cell(Strategy::PRODUCTION, BackendKind::Postgres, 4, 1000.0),
                cell(Strategy::NAIVE, BackendKind::Postgres, 4, 900.0),
            ],
            ..RunResult::default()
        };
        assert!(!AcrossBackends::applies(&one));
        let two = RunResult {
            cells: vec![
                cell(Strategy::PRODUCTION, BackendKind::Postgres, 4, 1000.0),
                cell(Strategy::PRODUCTION, BackendKind::Postgres, 16, 3000.0),
                cell(streams.clone(), BackendKind::Redis, 4, 1500.0),
                cell(streams, BackendKind::Redis, 16, 6000.0),
            ],
            ..RunResult::default()
        };
        assert!(AcrossBackends::applies(&two));
        super::super::register_font();
        let mut svg = String::new();
        {
            let root = SVGBackend::with_string(&mut svg, (960, 560)).into_drawing_area();
            AcrossBackends { run: &two }.draw(&root).unwrap();
        }
        for line in ["production on postgres", "redis-streams on redis"] {
            assert!(svg.contains(line), "{line} is not in the legend");
        }
    }
}
