//! Series over a trial's time: throughput and the oldest pending age as the sampler
//! read them, with the faults marked where they struck.

use super::*;

/// A per-trial time series for each strategy at the focus cell (first repetition).
pub struct OverTime<'a> {
    pub run: &'a RunResult,
    /// true: oldest-pending age samples; false: jobs per second.
    pub oldest_pending: bool,
}

impl Figure for OverTime<'_> {
    fn name(&self) -> &'static str {
        if self.oldest_pending {
            "oldest_pending_over_time"
        } else {
            "throughput_over_time"
        }
    }

    fn title(&self) -> String {
        if self.oldest_pending {
            return format!(
                "Oldest eligible pending job's age over time ({}, first repetition)",
                arrival_label(self.run)
            );
        }
        format!(
            "{} ({}, first repetition)",
            if claim_only(self.run) {
                "Claimed jobs per second over time"
            } else {
                "Completed jobs per second over time"
            },
            focus_label(self.run)
        )
    }

    fn look_at(&self) -> &'static str {
        match self.oldest_pending {
            true => "Flat near zero keeps up; a line that keeps rising is a pool falling behind.",
            false => {
                "Dips are stalls; a line that sags through a trial is the table or server slowing."
            }
        }
    }

    fn how_to_read(&self) -> &'static str {
        if self.oldest_pending {
            "In the first phase with arrivals, the sampler's reading of how long the oldest due job has been waiting. A flat line near zero is a pool that keeps up with the arrival rate; a line that keeps rising is one that falls behind (or keeps skipping some rows). Red vertical lines mark injected connection kills, server restarts, and a horizon pin held open (taken, released)."
        } else {
            "Jobs per second in each whole second of the trial, warm-up included: look for a slow start, stalls (dips to zero) and collapse. The steady-state numbers in the table count only the time after warm-up. Red vertical lines mark injected connection kills, server restarts, and a horizon pin held open (taken, released)."
        }
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), PlotError> {
        let root = headed(root, &drawn_title(self.run, self.title()), self.look_at())?;
        let claimed = claim_only(self.run);
        let mut lines: Vec<Line> = Vec::new();
        let cells = if self.oldest_pending {
            arrival_cells(self.run)
        } else {
            focus_cells(self.run)
        };
        let labels: Vec<(String, RGBColor)> = if self.oldest_pending {
            arrival_lines(&cells)
        } else {
            cells
                .iter()
                .map(|c| (c.strategy.to_string(), strategy_color(&c.strategy)))
                .collect()
        };
        for (c, (label, color)) in cells.iter().zip(labels) {
            let Some(t) = c.trials.first() else { continue };
            let pts: Vec<(f64, f64)> = if self.oldest_pending {
                t.oldest_pending
                    .series
                    .iter()
                    .filter_map(|&(at, age)| Some((at, age?)))
                    .collect()
            } else {
                let s = if claimed {
                    &t.claimed_series
                } else {
                    &t.completed_series
                };
                // Whole seconds only: the last, cut short by the stop, is not a rate.
                let whole = (t.warmup_s + t.measured_s + 0.05).floor() as usize;
                s.iter()
                    .take(whole)
                    .enumerate()
                    .map(|(i, &n)| (i as f64 + 0.5, f64::from(n)))
                    .collect()
            };
            if !pts.is_empty() {
                lines.push((label, color, pts));
            }
        }
        if lines.is_empty() {
            return note(
                &root,
                if self.oldest_pending {
                    "no oldest-pending samples in a phase with arrivals (no arrivals, sampler off, or nothing pending)"
                } else {
                    "no per-second counts recorded"
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
        let y_desc = if self.oldest_pending {
            "age, ms"
        } else {
            "jobs/s"
        };
        // Headroom above the highest point for the legend in the upper right.
        let y1 = y1 / (1.0 - (0.06 + 0.05 * lines.len() as f64).min(0.4));
        let mut chart = time_chart(&root, (x0, x1), y1, y_desc)?;
        draw_fault_marks(&mut chart, &cells, y1)?;
        labelled_lines(&mut chart, lines, SeriesLabelPosition::UpperRight)
    }
}

/// A chart of seconds since the trial's start against `y_desc` from 0 to `y1`, its mesh
/// drawn.
pub(super) fn time_chart<'a, DB: DrawingBackend>(
    root: &'a DrawingArea<DB, Shift>,
    (x0, x1): (f64, f64),
    y1: f64,
    y_desc: &str,
) -> Result<TimeChart<'a, DB>, PlotError> {
    let mut chart = ChartBuilder::on(root)
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(70)
        .build_cartesian_2d(x0..x1, 0.0..y1)
        .map_err(de)?;
    chart
        .configure_mesh()
        .light_line_style(RGBColor(0xF0, 0xF0, 0xF0))
        .x_desc("seconds since trial start")
        .y_desc(y_desc)
        .y_label_formatter(&axis_number(y1))
        .label_style((FONT, 12))
        .draw()
        .map_err(de)?;
    Ok(chart)
}

type TimeChart<'a, DB> = ChartContext<
    'a,
    DB,
    Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>,
>;

/// The injected faults' instants as red vertical lines up to `y1`, each labelled, so a
/// dip or a climb can be read against its cause.
pub(super) fn draw_fault_marks<DB: DrawingBackend>(
    chart: &mut TimeChart<'_, DB>,
    cells: &[&CellResult],
    y1: f64,
) -> Result<(), PlotError> {
    let mark = RGBColor(0xB0, 0x3A, 0x2E);
    let (x0, x1) = {
        let r = chart.x_range();
        (r.start, r.end)
    };
    // A timeline's phases as alternating bands, each named at its top left.
    let phases = cells
        .first()
        .and_then(|c| c.trials.first())
        .map_or(&[][..], |t| &t.timeline[..]);
    for (i, p) in phases.iter().enumerate() {
        let (a, b) = (p.figures.from_s.max(x0), p.figures.to_s.min(x1));
        if b <= a {
            continue;
        }
        if i % 2 == 1 {
            chart
                .draw_series([Rectangle::new(
                    [(a, 0.0), (b, y1)],
                    RGBColor(0x70, 0x70, 0x70).mix(0.10).filled(),
                )])
                .map_err(de)?;
        }
        chart
            .draw_series([Text::new(
                format!(" {}", p.name),
                (a, y1 * 0.97),
                (FONT, 12).into_font().color(&RGBColor(0x50, 0x50, 0x50)),
            )])
            .map_err(de)?;
    }
    for (at, what) in fault_marks(cells) {
        chart
            .draw_series([PathElement::new(
                vec![(at, 0.0), (at, y1)],
                mark.mix(0.6).stroke_width(2),
            )])
            .map_err(de)?;
        chart
            .draw_series([Text::new(
                what,
                (at, y1),
                (FONT, 12).into_font().color(&mark),
            )])
            .map_err(de)?;
    }
    Ok(())
}

/// When the first trial of the first of `cells` had connections killed or its server
/// restarted (every cell of a workload has the same schedule), and when the lock service
/// restarted (in the lock-service cells only, on one schedule): (seconds, label).
fn fault_marks(cells: &[&CellResult]) -> Vec<(f64, &'static str)> {
    let mut lock: Vec<f64> = cells
        .iter()
        .filter_map(|c| c.trials.first())
        .flat_map(|t| t.lock_service_restarts.iter().map(|r| r.at_s))
        .collect();
    lock.sort_by(f64::total_cmp);
    lock.dedup();
    let lock = lock.into_iter().map(|at| (at, " lock service restart"));
    let Some(t) = cells.first().and_then(|c| c.trials.first()) else {
        return lock.collect();
    };
    let kills = t.connection_kills.iter().map(|k| (k.at_s, " kill"));
    let restarts = t.server_restarts.iter().map(|r| (r.at_s, " restart"));
    let held = t
        .snapshot_held
        .iter()
        .flat_map(|h| [(h.from_s, " pin taken"), (h.to_s, " released")]);
    kills.chain(restarts).chain(held).chain(lock).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::{RestartEvent, TrialResult};
    use crate::strategy::Strategy;

    /// The lock service restarts in the lock-service cells only: the plot marks it
    /// whichever cell comes first, once per instant.
    #[test]
    fn a_lock_service_restart_is_marked_from_the_cells_that_had_it() {
        let trial = |lock_at: &[f64]| TrialResult {
            lock_service_restarts: lock_at
                .iter()
                .map(|&at_s| RestartEvent { at_s, took_s: 0.1 })
                .collect(),
            ..Default::default()
        };
        let lock = Strategy::builtin_named("lock-service").unwrap();
        let cells = [
            CellResult::fetch_order(Strategy::PRODUCTION, 16, 1, vec![trial(&[])]),
            CellResult::fetch_order(lock.clone(), 16, 1, vec![trial(&[2.0])]),
            CellResult::fetch_order(lock, 16, 10, vec![trial(&[2.0])]),
        ];
        let refs: Vec<&CellResult> = cells.iter().collect();
        assert_eq!(fault_marks(&refs), [(2.0, " lock service restart")]);
        assert!(fault_marks(&refs[..1]).is_empty());
    }
}
