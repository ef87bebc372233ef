//! `claimbench history`: a folder of nightly runs read in time order, each cell's
//! compared metrics as series over the nights, and where a lasting shift began, found by
//! change-point detection ([`super::changepoint`]) rather than by one pair of nights. A
//! pair of nights drifts as much as the host does; a shift that holds for several nights
//! stands out of that drift.

use super::changepoint::{self, ChangePoint, Settings};
use super::compare::{Verdict, cell_value, fingerprint};
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
    let mut keys: Vec<Vec<String>> = order
        .iter()
        .flat_map(|r| r.cells.iter().map(cell_key))
        .collect();
    keys.sort();
    keys.dedup();
    let mut series = Vec::new();
    for key in keys {
        for entry in Metric::compared() {
            let points: Vec<(usize, f64)> = order
                .iter()
                .enumerate()
                .filter_map(|(i, r)| {
                    let c = r.cells.iter().find(|c| cell_key(c) == key)?;
                    Some((i, cell_value(entry.metric, c)?))
                })
                .filter(|(_, v)| v.is_finite())
                .collect();
            if points.len() < min_nights(settings) {
                continue;
            }
            let shifts = shifts_of(&points, entry.metric, settings, min_change);
            series.push(Series {
                cell: key.clone(),
                metric: entry.metric,
                points,
                shifts,
            });
        }
    }
    History {
        nights,
        series,
        changes,
        min_change,
    }
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
