//! `claimbench history`: a folder of nightly runs read in time order, each cell's
//! compared metrics as series over the nights, and where a lasting shift began, found by
//! change-point detection ([`super::changepoint`]) rather than by one pair of nights. A
//! pair of nights drifts as much as the host does; a shift that holds for several nights
//! stands out of that drift.

use super::changepoint::{self, ChangePoint, Settings};
use super::compare::{Verdict, fingerprint};
use super::figures::CellFigures;
use crate::metric::Metric;
use crate::results::{RunResult, cell_key};
use serde::Serialize;

/// One cell's metric over the nights it was measured in.
#[derive(Debug, Clone, Serialize)]
pub struct Series {
    /// The cell's key, as `compare` matches cells: phase, backend, strategy, layout,
    /// workers, batch.
    pub cell: Vec<String>,
    pub metric: Metric,
    /// (night index, value) for each night that measured it.
    pub points: Vec<(usize, f64)>,
    pub shifts: Vec<Shift>,
}

impl Series {
    /// The cell as a person reads it: `postgres production fetch-order w=8 b=10`, then
    /// its phase when it has one.
    pub fn label(&self) -> String {
        match self.cell.as_slice() {
            [phase, backend, strategy, layout, workers, batch] => {
                let cell = format!("{backend} {strategy} {layout} w={workers} b={batch}");
                match phase.as_str() {
                    "" | "–" => cell,
                    p => format!("{cell} ({p})"),
                }
            }
            other => other.join(" "),
        }
    }
}

/// A lasting change in a series: the night it began, the mean level before and after
/// (between its neighbouring change points), and what the change means for the metric.
#[derive(Debug, Clone, Serialize)]
pub struct Shift {
    /// The first night at the new level (an index into [`History::nights`]).
    pub night: usize,
    pub before: f64,
    pub after: f64,
    /// after / before − 1.
    pub change: f64,
    pub p_value: f64,
    pub verdict: Verdict,
    /// The level it moved to is the series' last: the shift is still there.
    pub current: bool,
}

/// The nights read, each series, and what changed around them.
#[derive(Debug, Clone, Serialize)]
pub struct History {
    /// Run ids in time order.
    pub nights: Vec<String>,
    pub series: Vec<Series>,
    /// (night, what differs from the night before): the environment or workload
    /// changing explains a shift that the claim did not cause.
    pub changes: Vec<(usize, Vec<String>)>,
    pub min_change: f64,
}

impl History {
    /// 4 when a series' current level is a regression beyond `min_change` (compare's
    /// contract), 0 otherwise.
    pub fn exit_code(&self) -> u8 {
        let regressed = self
            .series
            .iter()
            .flat_map(|s| &s.shifts)
            .any(|s| s.current && s.verdict == Verdict::Regressed);
        if regressed { 4 } else { 0 }
    }

    pub fn shifts(&self) -> impl Iterator<Item = (&Series, &Shift)> {
        self.series
            .iter()
            .flat_map(|s| s.shifts.iter().map(move |sh| (s, sh)))
    }
}

/// The fewest nights a history needs: two stretches of the detector's minimum.
pub fn min_nights(s: Settings) -> usize {
    2 * s.min_size
}

/// `runs` in time order (by start), every compared metric of every cell as a series,
/// with its shifts of at least `min_change` (relative) that pass the detector.
pub fn history(runs: &[RunResult], settings: Settings, min_change: f64) -> History {
    let mut order: Vec<&RunResult> = runs.iter().collect();
    order.sort_by(|a, b| a.started_at.cmp(&b.started_at));
    let nights = order.iter().map(|r| r.run_id.clone()).collect();
    let changes = order
        .windows(2)
        .enumerate()
        .filter_map(|(i, w)| {
            let (a, b) = (fingerprint(w[0]), fingerprint(w[1]));
            let differ: Vec<String> = b
                .iter()
                .filter(|e| !a.contains(e))
                .map(|(k, v)| format!("{k}: {v}"))
                .collect();
            (!differ.is_empty()).then_some((i + 1, differ))
        })
        .collect();
    // One pass over the nights: each cell's compared figures computed once (the
    // catalogue's value, as every report shows it), by cell key.
    let compared: Vec<Metric> = Metric::compared().map(|e| e.metric).collect();
    let mut by_cell: std::collections::BTreeMap<Vec<String>, Vec<(usize, Figures)>> =
        Default::default();
    let figures = nightly_figures(&order, &compared);
    for (night, cells) in figures.into_iter().enumerate() {
        for (key, values) in cells {
            by_cell.entry(key).or_default().push((night, values));
        }
    }
    let mut todo = Vec::new();
    for (key, nights) in &by_cell {
        for (m, &metric) in compared.iter().enumerate() {
            let points: Vec<(usize, f64)> = nights
                .iter()
                .filter_map(|(i, v)| Some((*i, v[m]?)))
                .filter(|(_, v)| v.is_finite())
                .collect();
            if points.len() >= min_nights(settings) {
                todo.push((key.clone(), metric, points));
            }
        }
    }
    // Each series' search is its own: spread over the host's cores.
    let series = crate::parallel::map(todo, |(cell, metric, points)| {
        let shifts = shifts_of(&points, metric, settings, min_change);
        Series {
            cell,
            metric,
            points,
            shifts,
        }
    });
    History {
        nights,
        series,
        changes,
        min_change,
    }
}

/// A cell's compared metrics' values on one night, in `Metric::compared()`'s order.
type Figures = Vec<Option<f64>>;

/// Each night's cells as (key, the compared metrics' values in `metrics`' order), a
/// night per thread where the host has several cores (decoding a night's histograms is
/// most of reading it).
fn nightly_figures(order: &[&RunResult], metrics: &[Metric]) -> Vec<Vec<(Vec<String>, Figures)>> {
    crate::parallel::map(order.to_vec(), |r| {
        r.cells
            .iter()
            .map(|c| {
                let f = CellFigures::of(c);
                (cell_key(c), metrics.iter().map(|m| f.value(*m)).collect())
            })
            .collect()
    })
}

/// The change points of `points` as shifts between the mean levels around each, kept
/// when they move the metric by at least `min_change`.
fn shifts_of(points: &[(usize, f64)], metric: Metric, s: Settings, min_change: f64) -> Vec<Shift> {
    let values: Vec<f64> = points.iter().map(|p| p.1).collect();
    let found: Vec<ChangePoint> = changepoint::e_divisive(&values, s);
    let mut bounds: Vec<usize> = vec![0];
    bounds.extend(found.iter().map(|c| c.at));
    bounds.push(values.len());
    let mean = |a: usize, b: usize| values[a..b].iter().sum::<f64>() / (b - a) as f64;
    let higher_is_better = metric.entry().higher_is_better;
    found
        .iter()
        .enumerate()
        .filter_map(|(k, c)| {
            let (before, after) = (
                mean(bounds[k], bounds[k + 1]),
                mean(bounds[k + 1], bounds[k + 2]),
            );
            let change = if before == 0.0 {
                0.0
            } else {
                after / before - 1.0
            };
            if change.abs() < min_change {
                return None;
            }
            let worse = (change < 0.0) == higher_is_better;
            Some(Shift {
                night: points[c.at].0,
                before,
                after,
                change,
                p_value: c.p_value,
                verdict: if worse {
                    Verdict::Regressed
                } else {
                    Verdict::Improved
                },
                current: k + 1 == found.len(),
            })
        })
        .collect()
}
