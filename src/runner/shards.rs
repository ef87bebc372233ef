//! The `sharded` strategies' shard map over a trial. A shard is a queue; shard `q` of
//! `n` workers starts with worker `q mod n`, and each of the phase's `shard_moves` hands
//! every shard to the next worker, as a rebalance after a deploy or a scale-out does.
//! A move gives the new owner its shard first and takes it from the old owner only when
//! the overlap has passed: until then both claim from it, the stale map a real poller
//! lives with until it notices.
//!
//! The map is the table `shard_owners`, written on the control connection; the workers'
//! claims read it. Which claims fell in a move's window is counted from the ledger.

use super::{Shared, TrialClock, background::reached};
use crate::backend::Backend;
use crate::backend::BackendError;
use crate::backend::recipe::ShardChange;
use crate::results::ShardMoveWindow;
use crate::workload::ShardMoves;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The worker that owns shard `shard` after `moves` moves, of `workers`.
pub fn owner(shard: usize, moves: usize, workers: usize) -> usize {
    (shard + moves) % workers.max(1)
}

/// The name a worker's session claims under (its shard map key).
pub fn worker_id(i: usize) -> String {
    format!("w{i}")
}

/// One change to the map: `queues[i]` given to or taken from `workers[i]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    pub at: Duration,
    pub change: ShardChange,
    pub queues: Vec<String>,
    pub workers: Vec<String>,
}

/// The map a trial starts with: every shard to its first owner.
pub fn first_map(queues: &[String], workers: u32) -> Change {
    let n = workers as usize;
    Change {
        at: Duration::ZERO,
        change: ShardChange::Give,
        queues: queues.to_vec(),
        workers: (0..queues.len())
            .map(|q| worker_id(owner(q, 0, n)))
            .collect(),
    }
}

/// The worker id the plan sampler claims under (its role, `claimbench-planner`, less the
/// prefix): it samples worker 0's claim, so it owns worker 0's first shards too.
pub const PLANNER: &str = "planner";

/// Gives the plan sampler worker 0's first shards (see [`PLANNER`]); the moves leave
/// its map alone, so its sample is worker 0's claim before any move.
pub fn planner_map(queues: &[String], workers: u32) -> Change {
    let mine: Vec<String> = (0..queues.len())
        .filter(|&q| owner(q, 0, workers as usize) == 0)
        .map(|q| queues[q].clone())
        .collect();
    Change {
        at: Duration::ZERO,
        change: ShardChange::Give,
        workers: vec![PLANNER.to_string(); mine.len()],
        queues: mine,
    }
}

/// Every change `moves` makes, in time order: per move, the gives at its instant and
/// the takes when its overlap ends. With one worker a move changes nothing.
pub fn changes(queues: &[String], workers: u32, moves: &ShardMoves) -> Vec<Change> {
    let n = workers as usize;
    let mut out = Vec::new();
    for (k, &at) in moves.at.iter().enumerate() {
        let moved: Vec<usize> = (0..queues.len())
            .filter(|&q| owner(q, k, n) != owner(q, k + 1, n))
            .collect();
        if moved.is_empty() {
            continue;
        }
        let pairs = |after: usize, change, at| Change {
            at,
            change,
            queues: moved.iter().map(|&q| queues[q].clone()).collect(),
            workers: moved
                .iter()
                .map(|&q| worker_id(owner(q, after, n)))
                .collect(),
        };
        out.push(pairs(k + 1, ShardChange::Give, at));
        out.push(pairs(k, ShardChange::Take, at + moves.overlap));
    }
    out
}

/// Applies `changes` at their instants; returns each move's window as it happened
/// (from its give's sending to its take's return, seconds since the trial's start). A stop ends it early:
/// a window whose take did not happen ends at the stop.
pub async fn mover<B: Backend>(
    backend: Arc<B>,
    changes: Vec<Change>,
    clock: TrialClock,
    shared: Arc<Shared>,
) -> Result<Vec<(f64, f64)>, BackendError> {
    let mut windows: Vec<(f64, f64)> = Vec::new();
    for c in changes {
        if !reached(c.at, clock, &shared).await {
            break;
        }
        // A give is visible from the moment its commit lands, which may come before
        // its call returns: the window opens when it is sent, and closes when the take
        // has returned (the old owner may see its shard until then).
        let sent = clock.secs_f64(Instant::now());
        backend
            .change_shards(c.change, &c.queues, &c.workers)
            .await?;
        let returned = clock.secs_f64(Instant::now());
        match c.change {
            ShardChange::Give => windows.push((sent, f64::INFINITY)),
            ShardChange::Take => {
                if let Some(w) = windows.last_mut() {
                    w.1 = returned;
                }
            }
        }
    }
    let end = clock.secs_f64(Instant::now());
    for w in &mut windows {
        w.1 = w.1.min(end);
    }
    Ok(windows)
}

/// The trial's shard moves as the results keep them: `windows` as they happened, with
/// the ledger's duplicate claims and lost races counted in each and outside them all.
/// The grace is the longest claim call after warm-up, empty ones included (a claim
/// that lost every candidate took no jobs): a claim that returned that long after a
/// window ended may have read while its worker still owned the shard.
pub fn seen(
    windows: &[(f64, f64)],
    m: &crate::metrics::WorkerMetrics,
    ledger: &crate::ledger::MergedLedger,
) -> crate::results::ShardMovesSeen {
    // Every claim call's: one whose candidates were all taken returned nothing (an
    // empty claim, recorded apart) and is stamped with its lost races all the same.
    let longest_us = m.claim_latency.max().max(m.empty_claim_latency.max());
    let grace_s = longest_us as f64 / 1e6;
    let (windows, outside) = per_window(
        windows,
        grace_s,
        &ledger.duplicate_claim_times(),
        ledger.lost_race_times(),
    );
    crate::results::ShardMovesSeen {
        windows,
        outside,
        grace_s,
    }
}

/// Counts the claims `duplicate_ns` and the lost races `lost_ns` (ns since the start,
/// one entry per race) per window. A claim is stamped when its call returned, so one
/// that read its candidates while its worker still owned the shard can return after the
/// take: a window counts what returned within `grace_s` (the trial's longest claim
/// call) after it ended, unless the next window had begun. What falls in no window is
/// returned apart (its `from_s` and `to_s` are 0).
pub fn per_window(
    windows: &[(f64, f64)],
    grace_s: f64,
    duplicate_ns: &[u64],
    lost_ns: &[u64],
) -> (Vec<ShardMoveWindow>, ShardMoveWindow) {
    let mut out: Vec<ShardMoveWindow> = windows
        .iter()
        .map(|&(from_s, to_s)| ShardMoveWindow {
            from_s,
            to_s,
            ..ShardMoveWindow::default()
        })
        .collect();
    let mut outside = ShardMoveWindow::default();
    let slot = |t_ns: u64| {
        let t = t_ns as f64 / 1e9;
        let i = windows.partition_point(|&(from, _)| from <= t);
        (i > 0 && t < windows[i - 1].1 + grace_s).then(|| i - 1)
    };
    for &t in duplicate_ns {
        match slot(t) {
            Some(i) => out[i].duplicate_claims += 1,
            None => outside.duplicate_claims += 1,
        }
    }
    for &t in lost_ns {
        match slot(t) {
            Some(i) => out[i].lost_races += 1,
            None => outside.lost_races += 1,
        }
    }
    (out, outside)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(n: usize) -> Vec<String> {
        (0..n).map(|q| format!("q{q}")).collect()
    }

    fn moves(at: &[u64], overlap_ms: u64) -> ShardMoves {
        ShardMoves {
            at: at.iter().map(|&s| Duration::from_secs(s)).collect(),
            overlap: Duration::from_millis(overlap_ms),
        }
    }

    /// Replays the changes over the first map: the owners of every shard at `t`.
    fn map_at(queues: usize, workers: u32, m: &ShardMoves, t: Duration) -> Vec<Vec<String>> {
        let mut map: Vec<Vec<String>> = vec![Vec::new(); queues];
        let q = names(queues);
        let mut all = vec![first_map(&q, workers)];
        all.extend(changes(&q, workers, m));
        for c in all.iter().filter(|c| c.at <= t) {
            for (queue, worker) in c.queues.iter().zip(&c.workers) {
                let owners = &mut map[q.iter().position(|x| x == queue).unwrap()];
                match c.change {
                    ShardChange::Give if !owners.contains(worker) => owners.push(worker.clone()),
                    ShardChange::Give => {}
                    ShardChange::Take => owners.retain(|w| w != worker),
                }
            }
        }
        map
    }

    #[test]
    fn every_shard_has_one_owner_except_inside_a_moves_overlap() {
        let m = moves(&[2, 5], 500);
        let at = |ms: u64| map_at(4, 3, &m, Duration::from_millis(ms));
        // Before any move: q -> w(q mod 3).
        assert_eq!(at(1000), [["w0"], ["w1"], ["w2"], ["w0"]]);
        // Inside the first overlap: the new owner and the old.
        assert_eq!(
            at(2200),
            [["w0", "w1"], ["w1", "w2"], ["w2", "w0"], ["w0", "w1"]]
        );
        // After it: the next worker alone.
        assert_eq!(at(3000), [["w1"], ["w2"], ["w0"], ["w1"]]);
        assert_eq!(at(6000), [["w2"], ["w0"], ["w1"], ["w2"]]);
    }

    #[test]
    fn with_one_worker_a_move_changes_nothing_and_never_takes_the_only_owner() {
        let m = moves(&[2], 500);
        assert!(changes(&names(3), 1, &m).is_empty());
        assert_eq!(
            map_at(3, 1, &m, Duration::from_secs(9)),
            [["w0"], ["w0"], ["w0"]]
        );
    }

    #[test]
    fn two_workers_hand_the_shards_back_and_forth() {
        let m = moves(&[2, 4], 500);
        assert_eq!(map_at(2, 2, &m, Duration::from_secs(3)), [["w1"], ["w0"]]);
        assert_eq!(map_at(2, 2, &m, Duration::from_secs(5)), [["w0"], ["w1"]]);
    }

    #[test]
    fn a_claim_counts_in_the_window_it_returned_in_or_its_grace() {
        let windows = [(2.0, 2.5), (5.0, 5.5)];
        let s = |x: f64| (x * 1e9) as u64;
        let (w, outside) = per_window(
            &windows,
            0.1,
            &[s(1.0), s(2.1), s(2.55), s(2.7), s(5.2)],
            &[s(2.4), s(5.59), s(5.61)],
        );
        assert_eq!(
            (
                w[0].duplicate_claims,
                w[1].duplicate_claims,
                outside.duplicate_claims
            ),
            (2, 1, 2)
        );
        assert_eq!(
            (w[0].lost_races, w[1].lost_races, outside.lost_races),
            (1, 1, 1)
        );
    }
}
