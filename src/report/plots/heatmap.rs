//! Production's heatmap: completed jobs/s over workers and batch size.

use super::*;

/// Throughput of the production strategy over batch size × worker count.
pub struct Heatmap<'a> {
    pub run: &'a RunResult,
}

/// A viridis-like ramp (perceptually uniform, colour-blind safe), t in [0, 1].
pub(super) fn ramp(t: f64) -> RGBColor {
    const STOPS: [(u8, u8, u8); 5] = [
        (0x44, 0x01, 0x54),
        (0x3B, 0x52, 0x8B),
        (0x21, 0x90, 0x8C),
        (0x5D, 0xC8, 0x63),
        (0xFD, 0xE7, 0x25),
    ];
    let t = t.clamp(0.0, 1.0) * (STOPS.len() - 1) as f64;
    let i = (t.floor() as usize).min(STOPS.len() - 2);
    let f = t - i as f64;
    let mix = |a: u8, b: u8| (f64::from(a) + (f64::from(b) - f64::from(a)) * f).round() as u8;
    let (a, b) = (STOPS[i], STOPS[i + 1]);
    RGBColor(mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2))
}

impl Figure for Heatmap<'_> {
    fn name(&self) -> &'static str {
        "production_heatmap"
    }

    fn title(&self) -> String {
        let phase = crate::analysis::story::batch_sweep_phase(self.run);
        let claim_only = self
            .run
            .cells
            .iter()
            .filter(|c| Some(&c.phase) == phase.as_ref())
            .flat_map(|c| &c.trials)
            .all(|t| t.counts.jobs_completed == 0);
        format!(
            "production: {} by batch size and worker count{}",
            if claim_only {
                "claimed jobs/s (claim-only)"
            } else {
                "completed jobs/s"
            },
            match phase.as_deref() {
                None | Some("") => String::new(),
                Some(p) => format!(", phase {p}"),
            }
        )
    }

    fn look_at(&self) -> &'static str {
        "The brightest cell with the fewest workers is the cheapest pool that reaches that rate."
    }

    fn how_to_read(&self) -> &'static str {
        "Each cell is the production strategy's steady-state throughput (mean over repetitions and index layouts) at one batch size and worker count; brighter is faster. The brightest cell with the fewest workers is the cheapest pool that reaches that rate."
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), PlotError> {
        let root = headed(root, &drawn_title(self.run, self.title()), self.look_at())?;
        let phase = crate::analysis::story::batch_sweep_phase(self.run);
        let cells: Vec<&CellResult> = self
            .run
            .cells
            .iter()
            .filter(|c| c.strategy == Strategy::PRODUCTION && !c.has_arrivals())
            .filter(|c| Some(&c.phase) == phase.as_ref())
            .collect();
        if cells.is_empty() {
            return note(&root, "no production cells without arrivals in this run");
        }
        let mut workers: Vec<u32> = cells.iter().map(|c| c.workers).collect();
        let mut batches: Vec<u32> = cells.iter().map(|c| c.batch_size).collect();
        workers.sort();
        workers.dedup();
        batches.sort();
        batches.dedup();
        let claimed = cells
            .iter()
            .flat_map(|c| &c.trials)
            .all(|t| t.counts.jobs_completed == 0);
        let value = |w: u32, b: u32| {
            let ts: Vec<f64> = cells
                .iter()
                .filter(|c| c.workers == w && c.batch_size == b)
                .flat_map(|c| &c.trials)
                .map(|t| {
                    if claimed {
                        t.claimed_per_s
                    } else {
                        t.completed_per_s
                    }
                })
                .collect();
            (!ts.is_empty()).then(|| ts.iter().sum::<f64>() / ts.len() as f64)
        };
        let max = workers
            .iter()
            .flat_map(|&w| batches.iter().filter_map(move |&b| value(w, b)))
            .fold(0.0, f64::max);
        let mut chart = ChartBuilder::on(&root)
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(70)
            .build_cartesian_2d(0.0..workers.len() as f64, 0.0..batches.len() as f64)
            .map_err(de)?;
        let (wl, bl) = (workers.clone(), batches.clone());
        let xl = move |x: &f64| index_label(x, &wl);
        let yl = move |y: &f64| index_label(y, &bl);
        chart
            .configure_mesh()
            .light_line_style(RGBColor(0xF0, 0xF0, 0xF0))
            .disable_mesh()
            .x_labels(workers.len() * 2 + 1)
            .y_labels(batches.len() * 2 + 1)
            .x_label_formatter(&xl)
            .y_label_formatter(&yl)
            .x_desc("workers")
            .y_desc("batch size")
            .label_style((FONT, 12))
            .draw()
            .map_err(de)?;
        for (xi, &w) in workers.iter().enumerate() {
            for (yi, &b) in batches.iter().enumerate() {
                let (x, y) = (xi as f64, yi as f64);
                let Some(v) = value(w, b) else {
                    chart
                        .draw_series(std::iter::once(Rectangle::new(
                            [(x, y), (x + 1.0, y + 1.0)],
                            GREY.mix(0.15).filled(),
                        )))
                        .map_err(de)?;
                    continue;
                };
                let t = if max > 0.0 { v / max } else { 0.0 };
                chart
                    .draw_series(std::iter::once(Rectangle::new(
                        [(x, y), (x + 1.0, y + 1.0)],
                        ramp(t).filled(),
                    )))
                    .map_err(de)?;
                let ink = if t > 0.6 { BLACK } else { WHITE };
                chart
                    .draw_series(std::iter::once(Text::new(
                        format!("{v:.0}"),
                        (x + 0.4, y + 0.5),
                        TextStyle::from((FONT, 14).into_font()).color(&ink),
                    )))
                    .map_err(de)?;
            }
        }
        Ok(())
    }
}

/// Labels the centre of the i-th unit interval with `values[i]`.
fn index_label(x: &f64, values: &[u32]) -> String {
    let i = (x - 0.5).round();
    if ((x - 0.5) - i).abs() < 1e-6 && i >= 0.0 && (i as usize) < values.len() {
        values[i as usize].to_string()
    } else {
        String::new()
    }
}
