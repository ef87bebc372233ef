//! Storage models side by side (`storage`): cells that differ only in where finished
//! rows go, each read through its own timeline's pin against its own steady phase, so
//! which model degraded least is a ratio measured on the same host in the same run.

use crate::metric::fmt_ms;
use crate::results::{CellResult, HoldPhase, RunResult, TimelineReading};

/// The archive move, the default a cell records no name for.
const DEFAULT: &str = "archive-move";

fn model(c: &CellResult) -> &str {
    c.storage.as_deref().unwrap_or(DEFAULT)
}

/// A cell's pinned phase against its steady one: (jobs/s ratio, claim p99 ratio, the
/// pin's figures).
type ThroughThePin<'a> = (f64, Option<f64>, &'a HoldPhase);

/// A cell's first trial's pinned phase against its first phase.
fn through_the_pin(c: &CellResult) -> Option<ThroughThePin<'_>> {
    let phases: &[TimelineReading] = &c.trials.first()?.timeline;
    let steady = &phases.first()?.figures;
    let pinned = &phases.iter().find(|p| p.pin.is_some())?.figures;
    if steady.jobs_per_s <= 0.0 {
        return None;
    }
    let p99 = match (pinned.claim_p99_us, steady.claim_p99_us) {
        (Some(p), Some(s)) if s > 0 => Some(p as f64 / s as f64),
        _ => None,
    };
    Some((pinned.jobs_per_s / steady.jobs_per_s, p99, pinned))
}

/// One sentence per group of cells (backend, strategy, layout, workers, batch) that ran
/// more than one storage model through a pin.
pub fn sentences(r: &RunResult) -> Vec<String> {
    let mut out = Vec::new();
    let key = |c: &CellResult| {
        (
            c.backend,
            c.strategy.clone(),
            c.index_layout.clone(),
            c.workers,
            c.batch_size,
        )
    };
    let mut told = Vec::new();
    for c in &r.cells {
        if told.contains(&key(c)) {
            continue;
        }
        let group: Vec<(&CellResult, ThroughThePin<'_>)> = r
            .cells
            .iter()
            .filter(|o| key(o) == key(c))
            .filter_map(|o| Some((o, through_the_pin(o)?)))
            .collect();
        let mut models: Vec<&str> = group.iter().map(|(o, _)| model(o)).collect();
        models.dedup();
        if models.len() < 2 {
            continue;
        }
        told.push(key(c));
        // The hot table with its indexes at the pin's end, each against the first model's.
        let bytes = |pin: &HoldPhase| Some(pin.table_bytes? + pin.index_bytes?);
        let (first, first_bytes) = (model(group[0].0), bytes(group[0].1.2));
        let each: Vec<String> = group
            .iter()
            .map(|(o, (jobs, p99, pin))| {
                let mb = |b: Option<i64>| b.map_or("–".into(), |b| format!("{:.0}", b as f64 / 1_048_576.0));
                let against = match (bytes(pin), first_bytes) {
                    (Some(b), Some(f)) if model(o) != first && f > 0 => {
                        format!(" (×{:.2} {first}'s)", b as f64 / f as f64)
                    }
                    _ => String::new(),
                };
                format!(
                    "{} jobs/s ×{jobs:.2}, claim p99 {}{}, dead tuples up to {}, hot table {} MB and its indexes {} MB{against}",
                    model(o),
                    pin.claim_p99_us.map_or("–".into(), |us| fmt_ms(us as f64 / 1000.0)),
                    p99.map_or(String::new(), |x| format!(" (×{x:.2})")),
                    pin.dead_tuples_max.map_or("–".into(), |d| d.to_string()),
                    mb(pin.table_bytes),
                    mb(pin.index_bytes),
                )
            })
            .collect();
        // Least degraded: the smallest claim p99 ratio, jobs/s breaking ties.
        let best = group
            .iter()
            .filter_map(|(o, (jobs, p99, _))| Some((model(o), (*p99)?, *jobs)))
            .min_by(|a, b| a.1.total_cmp(&b.1).then(b.2.total_cmp(&a.2)));
        let verdict = match best {
            Some((m, x, _)) => {
                format!("; {m} degraded least (claim p99 ×{x:.2} its steady phase's)")
            }
            None => String::new(),
        };
        out.push(format!(
            "storage models, {} at {} workers, batch {} on {} ({}), through the pin against each one's steady phase: {}{}.",
            c.strategy,
            c.workers,
            c.batch_size,
            c.index_layout,
            c.backend,
            each.join("; "),
            verdict
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::TrialResult;
    use crate::strategy::Strategy;

    fn phase(jobs_per_s: f64, p99: u64, dead: i64) -> HoldPhase {
        HoldPhase {
            jobs_per_s,
            claim_p99_us: Some(p99),
            dead_tuples_max: Some(dead),
            table_bytes: Some(64 << 20),
            index_bytes: Some((dead / 10_000) << 20),
            ..Default::default()
        }
    }

    fn cell(storage: Option<&str>, layout: &str, pinned: HoldPhase) -> CellResult {
        let reading = |name: &str, pin: Option<&str>, figures| TimelineReading {
            name: name.into(),
            offered_per_s: 500.0,
            pin: pin.map(String::from),
            figures,
        };
        let t = TrialResult {
            timeline: vec![
                reading("steady", None, phase(500.0, 2000, 100)),
                reading("pinned", Some("idle-in-transaction"), pinned),
            ],
            ..Default::default()
        };
        CellResult {
            index_layout: layout.into(),
            storage: storage.map(String::from),
            ..CellResult::fetch_order(Strategy::PRODUCTION, 8, 10, vec![t])
        }
    }

    #[test]
    fn each_model_is_read_against_its_own_steady_phase_and_the_least_degraded_named() {
        let r = RunResult {
            cells: vec![
                cell(None, "fetch-order", phase(450.0, 6000, 90_000)),
                cell(
                    Some("update-in-place"),
                    "fetch-order",
                    phase(400.0, 3000, 60_000),
                ),
                // Alone on its layout: no comparison.
                cell(None, "pending-partial", phase(500.0, 2000, 100)),
            ],
            ..Default::default()
        };
        let s = sentences(&r);
        assert_eq!(s.len(), 1, "{s:?}");
        assert_eq!(
            s[0],
            "storage models, production at 8 workers, batch 10 on fetch-order (postgres), through the pin against each one's steady phase: archive-move jobs/s ×0.90, claim p99 6.0 ms (×3.00), dead tuples up to 90000, hot table 64 MB and its indexes 9 MB; update-in-place jobs/s ×0.80, claim p99 3.0 ms (×1.50), dead tuples up to 60000, hot table 64 MB and its indexes 6 MB (×0.96 archive-move's); update-in-place degraded least (claim p99 ×1.50 its steady phase's)."
        );
    }
}
