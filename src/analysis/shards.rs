//! What sharded pollers did, from cells of the `sharded` strategies: where their
//! duplicate claims and lost races fell against the phase's shard moves (inside the
//! windows in which a moved shard had two owners, or outside them), and, under
//! arrivals, what shard ownership cost against production's one claim over all rows in
//! the same phase: the oldest pending job's age and the throughput against the
//! arrivals.

use super::figures::{CellFigures, fmt_ms};
use crate::results::{CellResult, RunResult, ShardMoveWindow};
use crate::strategy::Strategy;

/// The verdict's sentences about sharded cells.
pub fn sentences(r: &RunResult) -> Vec<String> {
    let mut out = Vec::new();
    for c in r.cells.iter().filter(|c| c.strategy.def().sharded) {
        if let Some(s) = moves_sentence(c) {
            out.push(s);
        }
        if let Some(s) = against_production(r, c) {
            out.push(s);
        }
    }
    out
}

fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// Duplicates and lost races inside the moves' windows and outside, over every trial.
fn moves_sentence(c: &CellResult) -> Option<String> {
    let seen: Vec<_> = c
        .trials
        .iter()
        .filter_map(|t| t.shard_moves.as_ref())
        .collect();
    if seen.is_empty() {
        return None;
    }
    let windows: Vec<&ShardMoveWindow> = seen.iter().flat_map(|m| &m.windows).collect();
    let total = |ws: &mut dyn Iterator<Item = &ShardMoveWindow>| {
        ws.fold((0, 0), |(d, l), w| {
            (d + w.duplicate_claims, l + w.lost_races)
        })
    };
    let (dup_in, lost_in) = total(&mut windows.iter().copied());
    let (dup_out, lost_out) = total(&mut seen.iter().map(|m| &m.outside));
    let per_window: Vec<String> = windows
        .iter()
        .map(|w| w.duplicate_claims.to_string())
        .collect();
    let duplicates = match (dup_in, dup_out) {
        (0, 0) => "0 duplicate claims".to_string(),
        (_, 0) => format!(
            "{}, all inside the windows in which a moved shard had two owners (per window {})",
            plural(dup_in, "duplicate claim", "duplicate claims"),
            per_window.join(", ")
        ),
        _ => format!(
            "{} inside the windows (per window {}) and {} outside them",
            plural(dup_in, "duplicate claim", "duplicate claims"),
            per_window.join(", "),
            dup_out
        ),
    };
    let races = match (lost_in + lost_out, lost_out) {
        (0, _) => String::new(),
        (_, 0) => format!(
            "; {}, all inside the windows",
            plural(lost_in, "lost race", "lost races")
        ),
        _ => format!("; {lost_in} lost races inside the windows and {lost_out} outside"),
    };
    Some(format!(
        "shard moves, {} at {} workers{}, {}: {}{}.",
        c.strategy,
        c.workers,
        super::figures::in_phase(c),
        plural(windows.len() as u64, "move", "moves"),
        duplicates,
        races
    ))
}

/// Under arrivals over several queues: the sharded cell's oldest pending age and
/// throughput beside production's cell of the same phase, backend, workers and batch.
fn against_production(r: &RunResult, c: &CellResult) -> Option<String> {
    if !c.has_arrivals() || c.trials.first()?.queues.len() < 2 {
        return None;
    }
    let p = r.cells.iter().find(|p| {
        p.strategy == Strategy::PRODUCTION
            && (
                &p.phase,
                p.backend,
                p.workers,
                p.batch_size,
                &p.index_layout,
            ) == (
                &c.phase,
                c.backend,
                c.workers,
                c.batch_size,
                &c.index_layout,
            )
    })?;
    let (fs, fp) = (CellFigures::of(c), CellFigures::of(p));
    let age = |f: &CellFigures| f.oldest_pending_p99_ms.map_or("–".to_string(), fmt_ms);
    let rate = |c: &CellResult| {
        c.arrival_rate_per_s
            .map_or("–".to_string(), |r| format!("{r:.0}"))
    };
    Some(format!(
        "shard ownership, {} against production at {} workers{}: oldest pending p99 {} against {}, {:.0} jobs/s of {} arrivals/s against {:.0} of {}: each worker serves its own shards only, so a hot shard gets one worker however idle the others are, where production's claim over all rows gives it every worker.",
        c.strategy,
        c.workers,
        super::figures::in_phase(c),
        age(&fs),
        age(&fp),
        fs.throughput,
        rate(c),
        fp.throughput,
        rate(p)
    ))
}
