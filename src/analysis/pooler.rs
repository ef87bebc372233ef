//! What the pooler did to a run whose workers went through one: how long they waited
//! for a server connection as the worker count grew past the pool, and how the
//! techniques that keep state in the session fared through transaction pooling.

use super::figures::{CellFigures, fmt_ms};
use crate::pooler::{PoolMode, Pooler};
use crate::results::{CellResult, RunResult};

/// The pooler the workers of `backend` went through, from the run's targets.
fn pooler_of(r: &RunResult, c: &CellResult) -> Option<Pooler> {
    r.environment
        .targets
        .iter()
        .find(|t| t.backend == c.backend)
        .and_then(|t| t.pooler)
}

/// The pooler's wait per transaction over a cell's trials, ms; `None` when no trial
/// read its counters.
pub fn wait_per_transaction_ms(c: &CellResult) -> Option<f64> {
    let (mut x, mut us, mut read) = (0i64, 0i64, false);
    for t in &c.trials {
        if let (Some(n), Some(w)) = (t.locks.pool_transactions, t.locks.pool_wait_us) {
            (x, us, read) = (x + n, us + w, true);
        }
    }
    (read && x > 0).then(|| us as f64 / 1e3 / x as f64)
}

/// The verdict's sentences about the pooler.
pub fn sentences(r: &RunResult) -> Vec<String> {
    let mut out = Vec::new();
    sizing(r, &mut out);
    session_state(r, &mut out);
    out
}

/// Per phase, strategy and batch with two or more worker counts through a pool: the
/// wait per transaction at each, and the largest pool of workers whose wait stayed
/// under a tenth of its own claim p50 (a bound from the same run, not from this host's
/// speed).
fn sizing(r: &RunResult, out: &mut Vec<String>) {
    let mut seen: Vec<(&str, &str, u32)> = Vec::new();
    for c in &r.cells {
        let key = (c.phase.as_str(), c.strategy.as_str(), c.batch_size);
        if seen.contains(&key) {
            continue;
        }
        seen.push(key);
        let Some(pool) = pooler_of(r, c) else {
            continue;
        };
        let mut sweep: Vec<(&CellResult, f64)> = r
            .cells
            .iter()
            .filter(|o| (o.phase.as_str(), o.strategy.as_str(), o.batch_size) == key)
            .filter(|o| o.index_layout == c.index_layout && o.backend == c.backend)
            .filter_map(|o| Some((o, wait_per_transaction_ms(o)?)))
            .collect();
        if sweep.len() < 2 {
            continue;
        }
        sweep.sort_by_key(|(o, _)| o.workers);
        let each: Vec<String> = sweep
            .iter()
            .map(|(o, w)| format!("{} at {} workers", fmt_ms(*w), o.workers))
            .collect();
        let served = sweep
            .iter()
            .filter(|(o, w)| {
                CellFigures::of(o)
                    .claim_p50_ms
                    .is_some_and(|p50| *w <= p50 / 10.0)
            })
            .map(|(o, _)| o.workers)
            .max();
        let first = sweep[0].0;
        let last = sweep[sweep.len() - 1].0;
        let (f, l) = (CellFigures::of(first), CellFigures::of(last));
        let answer = match served {
            Some(w) => format!(
                "{} server connections served up to {w} workers with a wait under a tenth of their claim p50",
                pool.pool_size
            ),
            None => format!(
                "even {} workers waited more than a tenth of their claim p50 for one of {} server connections",
                first.workers, pool.pool_size
            ),
        };
        out.push(format!(
            "through PgBouncer ({} mode, {} server connections), {}{} waited per transaction {}; {answer} (jobs/s {:.0} at {} workers, {:.0} at {}; claim p99 {} and {}).",
            pool.mode,
            pool.pool_size,
            c.strategy,
            super::figures::in_phase(c),
            each.join(", "),
            f.throughput,
            first.workers,
            l.throughput,
            last.workers,
            f.claim_p99_ms.map_or("–".into(), fmt_ms),
            l.claim_p99_ms.map_or("–".into(), fmt_ms),
        ));
    }
}

/// The techniques whose state lives in the session (a session-level advisory lock per
/// job; LISTEN), run through transaction pooling: what the ledger and the effects table
/// counted, beside production's in the same phase.
fn session_state(r: &RunResult, out: &mut Vec<String>) {
    for c in &r.cells {
        let def = c.strategy.def();
        if !(def.advisory || def.listens) {
            continue;
        }
        let Some(pool) = pooler_of(r, c).filter(|p| p.mode == PoolMode::Transaction) else {
            continue;
        };
        let f = CellFigures::of(c);
        let state = if def.advisory {
            "its session-level advisory lock per job is taken and released on whichever server connection each statement lands on"
        } else {
            "its LISTEN stays on whichever server connection ran it, so wake-ups reach whichever client next holds that connection"
        };
        let held = match (f.duplicate_claims, f.lost) {
            (0, 0) => "0 duplicate claims and 0 lost jobs: the claim's own row update kept the promise here".to_string(),
            (d, l) => format!("{d} duplicate claims and {l} lost jobs"),
        };
        out.push(format!(
            "{}{} through transaction pooling ({} server connections, {} workers): {state}; {held}, {:.0} jobs/s.",
            c.strategy,
            super::figures::in_phase(c),
            pool.pool_size,
            c.workers,
            f.throughput
        ));
    }
}
