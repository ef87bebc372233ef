//! What the round trip between the workers and the server does to a queue, from the
//! cells of a `network` sweep: the time one worker spends per job at each round trip,
//! the pool an arrival rate needs by Little's law (workers busy = jobs/s × time per
//! job) checked against the pools the run measured, naive's duplicate claims, and what
//! batching buys back. Every rate comes from the same run, so the answer holds on any
//! host.

use super::figures::{CellFigures, fmt_ms};
use crate::results::{CellResult, RunResult};
use crate::strategy::Strategy;

/// A cell's round trip: the label its block was given and the delay measured before its
/// first trial (0 for the `local` block of a sweep); `None` outside a sweep.
pub fn round_trip(r: &RunResult, c: &CellResult) -> Option<(String, f64)> {
    if let Some(p) = c.trials.iter().find_map(|t| t.network.as_ref()) {
        let added: Vec<f64> = c
            .trials
            .iter()
            .filter_map(|t| Some(t.network.as_ref()?.added_ms))
            .collect();
        return Some((
            p.configured.clone(),
            added.iter().sum::<f64>() / added.len() as f64,
        ));
    }
    let swept = r
        .cells
        .iter()
        .any(|c| c.trials.iter().any(|t| t.network.is_some()));
    let local = c.phase == "local" || c.phase.ends_with(" local");
    (swept && local).then(|| ("local".to_string(), 0.0))
}

/// The sweep's levels in order of round trip, each with its cells.
fn levels(r: &RunResult) -> Vec<(String, f64, Vec<&CellResult>)> {
    let mut out: Vec<(String, f64, Vec<&CellResult>)> = Vec::new();
    for c in &r.cells {
        let Some((label, ms)) = round_trip(r, c) else {
            continue;
        };
        match out.iter_mut().find(|(l, _, _)| *l == label) {
            Some(level) => level.2.push(c),
            None => out.push((label, ms, vec![c])),
        }
    }
    out.sort_by(|a, b| a.1.total_cmp(&b.1));
    out
}

/// The verdict's sentences for a `network` sweep; none without one.
pub fn sentences(r: &RunResult) -> Vec<String> {
    let levels = levels(r);
    if levels.len() < 2 {
        return Vec::new();
    }
    let mut out = Vec::new();
    out.extend(little(&levels));
    out.extend(naive(&levels));
    out.extend(batching(&levels));
    out
}

fn per_s(c: &CellResult) -> f64 {
    CellFigures::of(c).throughput
}

/// The one-worker cell of the first strategy that prevents duplicate claims at the smallest batch, per level: time
/// per job W = 1 / its throughput. λ is the most the fastest level completed; the pool
/// it needs is ⌈λ·W⌉; and at the largest pool measured, Little's law's N / W against
/// the run's figure.
fn little(levels: &[(String, f64, Vec<&CellResult>)]) -> Option<String> {
    let all = || levels.iter().flat_map(|l| &l.2);
    let strategy = all()
        .map(|c| &c.strategy)
        .find(|s| s.prevents_duplicate_claims())?;
    let batch = all()
        .filter(|c| &c.strategy == strategy)
        .map(|c| c.batch_size)
        .min()?;
    let of = |cells: &[&CellResult], workers: u32| {
        cells
            .iter()
            .find(|c| &c.strategy == strategy && c.batch_size == batch && c.workers == workers)
            .map(|c| per_s(c))
    };
    let most = all()
        .filter(|c| &c.strategy == strategy)
        .map(|c| c.workers)
        .max()?;
    let lambda = levels[0]
        .2
        .iter()
        .filter(|c| &c.strategy == strategy)
        .map(|c| per_s(c))
        .fold(0.0, f64::max);
    let mut per_job = Vec::new();
    let mut needed = Vec::new();
    let mut checked = Vec::new();
    for (label, _, cells) in levels {
        let one = of(cells, 1).filter(|r| *r > 0.0)?;
        let w_s = 1.0 / one;
        per_job.push(format!("{label} {}", fmt_ms(w_s * 1e3)));
        let n = (lambda * w_s).ceil() as u64;
        needed.push(match needed.is_empty() {
            true => format!("{n} workers at {label}"),
            false => format!("{n} at {label}"),
        });
        if most > 1
            && let Some(measured) = of(cells, most)
        {
            checked.push(format!(
                "{label} {:.0} predicted, {measured:.0} measured",
                f64::from(most) / w_s
            ));
        }
    }
    let check = if checked.is_empty() {
        String::new()
    } else {
        format!(
            "; at {most} workers ({}), below the prediction where the server or the cores rather than the round trip bound the pool",
            checked.join(", ")
        )
    };
    Some(format!(
        "round trip, {strategy} at batch {batch}: one worker spent {} per job; by Little's law {lambda:.0} jobs/s (the most the {} block completed) needs {}{check}.",
        per_job.join(", "),
        levels[0].0,
        needed.join(", "),
    ))
}

/// Naive's duplicate claims per thousand jobs claimed at each round trip, at its largest
/// pool and smallest batch: the longer the gap between its read and its write, the more
/// workers read the same rows.
fn naive(levels: &[(String, f64, Vec<&CellResult>)]) -> Option<String> {
    let naive: Vec<&&CellResult> = levels
        .iter()
        .flat_map(|l| &l.2)
        .filter(|c| c.strategy == Strategy::NAIVE)
        .collect();
    let workers = naive.iter().map(|c| c.workers).max()?;
    let batch = naive.iter().map(|c| c.batch_size).min()?;
    let mut each = Vec::new();
    for (label, _, cells) in levels {
        let Some(c) = cells.iter().find(|c| {
            c.strategy == Strategy::NAIVE && c.workers == workers && c.batch_size == batch
        }) else {
            continue;
        };
        let claimed: u64 = c.trials.iter().map(|t| t.counts.jobs_claimed).sum();
        let f = CellFigures::of(c);
        let rate = if claimed > 0 {
            f.duplicate_claims as f64 * 1000.0 / claimed as f64
        } else {
            0.0
        };
        each.push(format!("{rate:.1} at {label}"));
    }
    (each.len() > 1).then(|| {
        format!(
            "round trip, naive at {workers} workers, batch {batch}: duplicate claims per 1,000 jobs claimed {}.",
            each.join(", ")
        )
    })
}

/// What the largest batch buys over the smallest at each round trip, for the first
/// strategy that prevents duplicate claims, at its largest pool: a batch pays the
/// claim's round trip once for many jobs, while each job's start, effect and completion
/// still pay one each, so how much it buys back depends on the lifecycle.
fn batching(levels: &[(String, f64, Vec<&CellResult>)]) -> Option<String> {
    let all = || levels.iter().flat_map(|l| &l.2);
    let strategy = all()
        .map(|c| &c.strategy)
        .find(|s| s.prevents_duplicate_claims())?;
    let mine = || all().filter(|c| &c.strategy == strategy);
    let (small, large) = (
        mine().map(|c| c.batch_size).min()?,
        mine().map(|c| c.batch_size).max()?,
    );
    let workers = mine().map(|c| c.workers).max()?;
    if small == large {
        return None;
    }
    let mut each = Vec::new();
    for (label, _, cells) in levels {
        let at = |b: u32| {
            cells
                .iter()
                .find(|c| &c.strategy == strategy && c.workers == workers && c.batch_size == b)
                .map(|c| per_s(c))
        };
        if let (Some(s), Some(l)) = (at(small), at(large))
            && s > 0.0
        {
            each.push(format!("×{:.1} at {label}", l / s));
        }
    }
    (each.len() > 1).then(|| {
        format!(
            "round trip, {strategy} at {workers} workers: batch {large} completed {} what batch {small} did.",
            each.join(", ")
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::{NetworkProbe, TrialResult};

    fn cell(
        phase: &str,
        rtt: Option<f64>,
        s: Strategy,
        workers: u32,
        batch: u32,
        per_s: f64,
    ) -> CellResult {
        let t = TrialResult {
            completed_per_s: per_s,
            network: rtt.map(|ms| NetworkProbe {
                configured: phase.into(),
                configured_ms: ms,
                added_ms: ms + 0.5,
                ..Default::default()
            }),
            ..Default::default()
        };
        let mut c = CellResult::fetch_order(s, workers, batch, vec![t]);
        c.phase = phase.into();
        c
    }

    /// Per level: time per job at one worker, the pool a rate needs, the largest pool's
    /// prediction against its measurement, and batching's gain.
    #[test]
    fn a_sweep_is_told_by_littles_law_and_batching() {
        let p = Strategy::PRODUCTION;
        let r = RunResult {
            cells: vec![
                cell("local", None, p.clone(), 1, 1, 500.0),
                cell("local", None, p.clone(), 4, 1, 1000.0),
                cell("local", None, p.clone(), 4, 10, 1500.0),
                cell("5ms", Some(5.0), p.clone(), 1, 1, 40.0),
                cell("5ms", Some(5.0), p.clone(), 4, 1, 150.0),
                cell("5ms", Some(5.0), p.clone(), 4, 10, 300.0),
            ],
            ..RunResult::default()
        };
        assert_eq!(
            sentences(&r),
            [
                "round trip, production at batch 1: one worker spent local 2.0 ms, 5ms 25 ms per job; by Little's law 1500 jobs/s (the most the local block completed) needs 3 workers at local, 38 at 5ms; at 4 workers (local 2000 predicted, 1000 measured, 5ms 160 predicted, 150 measured), below the prediction where the server or the cores rather than the round trip bound the pool.",
                "round trip, production at 4 workers: batch 10 completed ×1.5 at local, ×2.0 at 5ms what batch 1 did."
            ]
        );
        // Outside a sweep: nothing.
        let r = RunResult {
            cells: vec![cell("local", None, p, 1, 1, 500.0)],
            ..RunResult::default()
        };
        assert!(sentences(&r).is_empty());
    }
}
