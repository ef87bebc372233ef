//! The claim-latency (and queue-wait) spectrum: each strategy's HDR percentiles on a
//! log axis of 1/(1-q), so the tail reads left to right.

use super::*;

/// A latency distribution in HdrHistogram's percentile-spectrum style: x is
/// log10(1 / (1 - p)), so 90%, 99%, 99.9% and 99.99% are evenly spaced and tails show.
pub struct Spectrum<'a> {
    pub run: &'a RunResult,
    pub queue_wait: bool,
}

/// Percentile positions on the spectrum's x axis.
pub(super) fn spectrum_points(h: &HistogramSummary) -> Option<Vec<(f64, f64)>> {
    let hist = h.histogram().ok()?;
    if hist.is_empty() {
        return None;
    }
    let mut pts = Vec::new();
    let mut x = 2f64.log10();
    while x <= 4.0 + 1e-9 {
        let p = 1.0 - 10f64.powf(-x);
        pts.push((x, hist.value_at_quantile(p) as f64 / 1000.0));
        x += 0.05;
    }
    pts.push((MAX_X, hist.max() as f64 / 1000.0));
    Some(pts)
}

pub(super) const MAX_X: f64 = 4.4;

/// Tick values 1, 2, 5, 10, 20, 50, ... within [lo, hi]: plotters' own log ticks skip
/// everything below the first power of ten.
pub(super) fn one_two_five(lo: f64, hi: f64) -> Vec<f64> {
    let mut ticks = Vec::new();
    let mut decade = 10f64.powf(lo.log10().floor());
    while decade <= hi {
        for m in [1.0, 2.0, 5.0] {
            let v = decade * m;
            if (lo..=hi).contains(&v) {
                ticks.push(v);
            }
        }
        decade *= 10.0;
    }
    ticks
}

pub(super) fn spectrum_label(x: &f64) -> String {
    let labels = [
        (std::f64::consts::LOG10_2, "50%"),
        (1.0, "90%"),
        (2.0, "99%"),
        (3.0, "99.9%"),
        (4.0, "99.99%"),
        (MAX_X, "max"),
    ];
    labels
        .iter()
        .find(|(at, _)| (x - at).abs() < 0.02)
        .map(|(_, l)| l.to_string())
        .unwrap_or_default()
}

impl Figure for Spectrum<'_> {
    fn name(&self) -> &'static str {
        if self.queue_wait {
            "queue_wait_spectrum"
        } else {
            "claim_latency_spectrum"
        }
    }

    fn title(&self) -> String {
        if self.queue_wait {
            format!(
                "Queue wait percentile spectrum ({})",
                arrival_label(self.run)
            )
        } else {
            format!(
                "Claim latency percentile spectrum ({})",
                focus_label(self.run)
            )
        }
    }

    fn look_at(&self) -> &'static str {
        match self.queue_wait {
            true => "The right end is how long the unluckiest jobs waited for a worker.",
            false => {
                "A line flat to 99.9% has no convoy; one that lifts early is waiting on locks."
            }
        }
    }

    fn how_to_read(&self) -> &'static str {
        if self.queue_wait {
            "Per job of the first phase with arrivals, the time from its arrival (its intended arrival time, so a late producer shows here too) to being claimed, at each percentile, all repetitions merged. A pool that keeps up stays low to the tail; one that falls behind lifts the whole curve."
        } else {
            "Wall time of one claim call at each percentile, all repetitions merged, log scale. The x axis stretches the tail: each step right is ten times rarer. Lines that stay flat to 99.9% have no convoy; a line that lifts early is waiting on locks."
        }
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), PlotError> {
        let root = headed(root, &drawn_title(self.run, self.title()), self.look_at())?;
        let mut lines: Vec<Line> = Vec::new();
        if self.queue_wait {
            let cells = arrival_cells(self.run);
            for (c, (label, color)) in cells.iter().zip(arrival_lines(&cells)) {
                if let Some(pts) =
                    spectrum_points(&crate::report::view::merged(c, |t| &t.queue_wait))
                {
                    lines.push((label, color, pts));
                }
            }
        } else {
            for s in strategies(self.run) {
                // The cell's merged claim latency, as the tables read it; the cells of
                // one strategy on several backends together.
                let views: Vec<HistogramSummary> = focus_cells(self.run)
                    .into_iter()
                    .filter(|c| c.strategy == s)
                    .map(|c| crate::report::view::merged(c, |t| &t.claim_latency))
                    .collect();
                if let Some(pts) = merge_summaries(views.iter())
                    .ok()
                    .as_ref()
                    .and_then(spectrum_points)
                {
                    lines.push((s.to_string(), strategy_color(&s), pts));
                }
            }
        }
        if lines.is_empty() {
            return note(
                &root,
                if self.queue_wait {
                    "no phase with arrivals: with a seeded backlog alone, queue wait measures the trial's clock"
                } else {
                    "no claims were recorded after warm-up"
                },
            );
        }
        let lines = lines
            .into_iter()
            .map(|(label, color, pts)| (label, color, false, pts))
            .collect();
        spectrum_chart(&root, lines)
    }
}

/// A spectrum line: label, colour, dashed (a baseline's), points.
pub(super) type SpectrumLine = (String, RGBColor, bool, Vec<(f64, f64)>);

/// The percentile-spectrum axes (log milliseconds against percentile) with `lines`
/// drawn on them and their legend; shared by the run's spectra and `compare --report`'s.
pub(super) fn spectrum_chart<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    lines: Vec<SpectrumLine>,
) -> Result<(), PlotError> {
    let all = || lines.iter().flat_map(|(_, _, _, p)| p.iter().map(|q| q.1));
    let lo = all().fold(f64::INFINITY, f64::min).max(0.001);
    let hi = all().fold(0.0, f64::max).max(lo * 10.0);
    let mut chart = ChartBuilder::on(root)
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
    for (label, color, dashed, pts) in lines {
        let style = color.stroke_width(2);
        let series = if dashed {
            chart.draw_series(DashedLineSeries::new(pts, 6, 5, style))
        } else {
            chart.draw_series(LineSeries::new(pts, style))
        }
        .map_err(de)?;
        series.label(label).legend(move |(x, y)| {
            // A dashed entry is drawn short: a dash, not a line.
            let end = if dashed { x + 6 } else { x + 18 };
            PathElement::new(vec![(x, y), (end, y)], style)
        });
    }
    legend(&mut chart, SeriesLabelPosition::UpperLeft)
}
