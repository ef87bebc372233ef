//! What the pooler did to a run whose workers went through one: how long they waited
//! for a server connection as the worker count grew past the pool, and how the
//! techniques that keep state in the session fared through transaction pooling.

use super::figures::{CellFigures, fmt_ms};
use crate::pooler::PoolMode;
use crate::results::{CellResult, RunResult};
use crate::slo::Slo;

/// The mode of the pooler the workers of `c`'s backend went through, from the run's
/// targets.
fn mode_of(r: &RunResult, c: &CellResult) -> Option<PoolMode> {
    r.environment
        .targets
        .iter()
        .find(|t| t.backend == c.backend)
        .and_then(|t| t.pool_mode())
}

/// "4 server connections", or "a pool of unknown size" (a person's pooler whose
/// console was not given).
fn pool_words(size: Option<u32>) -> String {
    match size {
        Some(1) => "1 server connection".to_string(),
        Some(n) => format!("{n} server connections"),
        None => "a pool of unknown size".to_string(),
    }
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
    held(r, &mut out);
    let slos = super::recommend::effective_slos(&r.slos, &[]);
    out.extend(pool_sizing(r, &slos).iter().map(PoolAnswer::sentence));
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
        // A block of a pool sweep is read across its pools instead (pool_sizing).
        let Some(mode) = mode_of(r, c).filter(|_| swept_from(c).is_none()) else {
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
        let pool = pool_words(c.pool_size);
        let answer = match served {
            Some(w) => format!(
                "{pool} served up to {w} workers with a wait under a tenth of their claim p50"
            ),
            None => format!(
                "even {} workers waited more than a tenth of their claim p50 for {pool}",
                first.workers
            ),
        };
        out.push(format!(
            "through PgBouncer ({mode} mode, {pool}), {}{} waited per transaction {}; {answer} (jobs/s {:.0} at {} workers, {:.0} at {}; claim p99 {} and {}).",
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

/// Cells whose pool another client held in part or in full (`faults.hold_pool_s`):
/// what the claimants saw while it did.
fn held(r: &RunResult, out: &mut Vec<String>) {
    for c in &r.cells {
        let Some(h) = c.trials.iter().find_map(|t| t.pool_held) else {
            continue;
        };
        let f = CellFigures::of(c);
        let longest = c
            .trials
            .iter()
            .map(|t| t.claim_latency.max_us)
            .max()
            .unwrap_or(0);
        let waiting = c
            .trials
            .iter()
            .filter_map(|t| t.locks.pool_peak_waiting)
            .max()
            .map_or(String::new(), |n| {
                format!(", up to {n} clients waited for a server connection")
            });
        let share = match c.pool_size {
            Some(p) if h.connections >= p => format!("all {p} of the pool's server connections"),
            Some(p) => format!("{} of the pool's {p} server connections", h.connections),
            None => format!("{} of the pool's server connections", h.connections),
        };
        // The whole seconds of the hold against those before it, per trial, summed.
        let (from, to) = (h.from_s.round() as usize, h.to_s.round() as usize);
        let (mut during, mut before) = ((0u64, 0usize), (0u64, 0usize));
        for t in &c.trials {
            for (k, n) in t.claimed_series.iter().enumerate() {
                let n = u64::from(*n);
                if (from..to).contains(&k) {
                    during = (during.0 + n, during.1 + 1);
                } else if k < from {
                    before = (before.0 + n, before.1 + 1);
                }
            }
        }
        let rate = |(n, s): (u64, usize)| n as f64 / s.max(1) as f64;
        out.push(format!(
            "pool held by another client, {}{} at {} workers: while it held {share} ({:.1} s to {:.1} s), the workers claimed {:.0} jobs/s against {:.0} in the seconds before{waiting}; the longest claim took {} (a worker stalls at whichever statement it sends next, most often one of its jobs'); {:.0} jobs/s over the trial.",
            c.strategy,
            super::figures::in_phase(c),
            c.workers,
            h.from_s,
            h.to_s,
            rate(during),
            rate(before),
            fmt_ms(longest as f64 / 1e3),
            f.throughput
        ));
    }
}

/// Advisory locks a cell's trials left held on the server (a level read after each
/// trial, less the one before it): unlocks that missed their lock.
pub fn advisory_locks_left(c: &CellResult) -> Option<i64> {
    let mut read = false;
    let mut left = 0;
    for t in &c.trials {
        let (before, after) = (&t.locks.server_before, &t.locks.server_after);
        if let Some(a) = after.advisory_locks {
            read = true;
            left += (a - before.advisory_locks.unwrap_or(0)).max(0);
        }
    }
    read.then_some(left)
}

/// The techniques whose state lives in the session (a session-level advisory lock per
/// job; LISTEN), run through transaction pooling: what the ledger, the effects table,
/// the server's lock table and the idle waits counted.
fn session_state(r: &RunResult, out: &mut Vec<String>) {
    for c in &r.cells {
        let def = c.strategy.def();
        if !(def.advisory || def.listens) {
            continue;
        }
        if mode_of(r, c) != Some(PoolMode::Transaction) {
            continue;
        }
        let f = CellFigures::of(c);
        let state = if def.advisory {
            let left = match advisory_locks_left(c) {
                Some(0) => "no lock was left held after the trial".to_string(),
                Some(n) => format!(
                    "{n} advisory locks were still held after the trial, on server connections the pooler kept: their unlocks ran on other connections, which held nothing to unlock"
                ),
                None => "the locks left held were not read".to_string(),
            };
            // The same claim with transaction-scoped locks, where the run has it beside.
            let beside = r
                .cells
                .iter()
                .find(|o| {
                    o.strategy.as_str() == "advisory-xact"
                        && (o.phase.as_str(), o.workers, o.batch_size, o.backend)
                            == (c.phase.as_str(), c.workers, c.batch_size, c.backend)
                })
                .map(|o| {
                    let g = CellFigures::of(o);
                    format!(
                        " (advisory-xact beside it, whose locks end with the claim's transaction: {} locks left, {} duplicate claims, {} lost jobs, {:.0} jobs/s)",
                        advisory_locks_left(o).map_or("–".to_string(), |n| n.to_string()),
                        g.duplicate_claims,
                        g.lost,
                        g.throughput
                    )
                })
                .unwrap_or_default();
            format!(
                "its session-level advisory lock per job is taken and released on whichever server connection each statement lands on; {left}{beside}"
            )
        } else {
            let (idle, woken) = c.trials.iter().fold((0, 0), |(i, w), t| {
                (i + t.counts.empty_claims, w + t.counts.wakeups)
            });
            let waits = match idle {
                0 => "its workers never waited idle (no arrivals to announce)".to_string(),
                n => format!(
                    "{woken} of its {n} idle waits ended with a NOTIFY ({:.0} %), the rest at the longest back-off",
                    woken as f64 * 100.0 / n as f64
                ),
            };
            format!(
                "its LISTEN stays on whichever server connection ran it, so a NOTIFY reaches whichever client next holds that connection, or none; {waits}"
            )
        };
        let held = match (f.duplicate_claims, f.lost) {
            (0, 0) => "0 duplicate claims and 0 lost jobs: the claim's own row update kept the promise here".to_string(),
            (d, l) => format!("{d} duplicate claims and {l} lost jobs"),
        };
        out.push(format!(
            "{}{} through transaction pooling ({}, {} workers): {state}; {held}, {:.0} jobs/s.",
            c.strategy,
            super::figures::in_phase(c),
            pool_words(c.pool_size),
            c.workers,
            f.throughput
        ));
    }
}

/// The block a cell of a `pool_sizes` sweep was copied from: its phase without the
/// ` pool N` the sweep added; `None` for a cell of no sweep.
fn swept_from(c: &CellResult) -> Option<&str> {
    let n = c.pool_size?;
    let label = format!("pool {n}");
    match c.phase.strip_suffix(&label)? {
        "" => Some(""),
        base => base.strip_suffix(' '),
    }
}

/// One pool a worker count ran on.
#[derive(Debug, Clone)]
pub struct PoolTried {
    pub size: u32,
    pub figures: CellFigures,
    /// The pooler's wait per transaction, ms.
    pub wait_ms: Option<f64>,
    /// Jobs/s over the repetitions, with its 95 % interval (two or more).
    pub rate: Option<super::bootstrap::Interval>,
}

/// One worker count of a `pool_sizes` sweep: each pool it ran on, and the smallest
/// that served it.
#[derive(Debug, Clone)]
pub struct PoolAnswer {
    pub label: String,
    pub workers: u32,
    /// Largest pool first.
    pub pools: Vec<PoolTried>,
    /// The smallest pool that, like every pool between it and the best one, met every
    /// SLO and kept the best pool's jobs/s (see [`kept_up`]).
    pub smallest: Option<u32>,
    pub repetitions: usize,
}

/// A pool kept up with the best one tried at its worker count when its jobs/s came
/// within [`super::recommend::KNEE_GAIN`] of the best's, or, with repetitions, its
/// interval reaches the best's: the run cannot tell them apart.
fn kept_up(p: &PoolTried, best: &PoolTried) -> bool {
    let close =
        p.figures.throughput >= best.figures.throughput * (1.0 - super::recommend::KNEE_GAIN);
    let overlaps = matches!((p.rate, best.rate), (Some(a), Some(b)) if a.high >= b.low);
    close || overlaps
}

impl PoolAnswer {
    pub fn sentence(&self) -> String {
        let tried: Vec<String> = self
            .pools
            .iter()
            .rev()
            .map(|p| p.size.to_string())
            .collect();
        let reps = match self.repetitions {
            1 => "one repetition each".to_string(),
            n => format!("{n} repetitions each"),
        };
        let answer = match self.smallest {
            Some(n) => format!(
                "{} workers need {} (tried {}, {reps})",
                self.workers,
                pool_words(Some(n)),
                tried.join(", "),
            ),
            None => format!(
                "{} workers: the pool with the most jobs/s of {} tried missed an SLO",
                self.workers,
                tried.join(", ")
            ),
        };
        let steps: Vec<String> = self
            .pools
            .windows(2)
            .map(|w| {
                let (big, small) = (&w[0], &w[1]);
                let (a, b) = (&big.figures, &small.figures);
                let p99 = match (a.claim_p99_ms, b.claim_p99_ms) {
                    (Some(x), Some(y)) if x > 0.0 => format!("claim p99 ×{:.2}", y / x),
                    _ => "claim p99 –".to_string(),
                };
                let rate = match a.throughput {
                    t if t > 0.0 => match ((b.throughput / t - 1.0) * 100.0).round() {
                        0.0 => "jobs/s unchanged".to_string(),
                        pct => format!("{pct:+} % jobs/s"),
                    },
                    _ => "jobs/s –".to_string(),
                };
                let wait = small.wait_ms.map_or(String::new(), |w| {
                    format!(", {} pool wait per transaction", fmt_ms(w))
                });
                format!("{} → {}: {p99}, {rate}{wait}", big.size, small.size)
            })
            .collect();
        format!(
            "{}: {answer}; each smaller pool cost {}.",
            self.label,
            steps.join("; ")
        )
    }
}

/// Per worker count of every `pool_sizes` sweep (same backend, block, strategy,
/// layout and batch), the smallest server pool that served it under `slos`.
pub fn pool_sizing(r: &RunResult, slos: &[Slo]) -> Vec<PoolAnswer> {
    let mut out: Vec<PoolAnswer> = Vec::new();
    let mut seen: Vec<(&str, &CellResult)> = Vec::new();
    let same = |a: &CellResult, b: &CellResult| {
        (
            a.backend,
            &a.strategy,
            &a.index_layout,
            a.batch_size,
            a.workers,
        ) == (
            b.backend,
            &b.strategy,
            &b.index_layout,
            b.batch_size,
            b.workers,
        )
    };
    for c in &r.cells {
        let Some(base) = swept_from(c) else {
            continue;
        };
        if seen.iter().any(|(b, o)| *b == base && same(o, c)) {
            continue;
        }
        seen.push((base, c));
        let mut pools: Vec<PoolTried> = r
            .cells
            .iter()
            .filter(|o| swept_from(o) == Some(base) && same(o, c))
            .filter_map(|o| {
                let rates: Vec<f64> = o
                    .trials
                    .iter()
                    .map(|t| super::figures::trial_throughput(o.is_claim_only(), t))
                    .collect();
                Some(PoolTried {
                    size: o.pool_size?,
                    figures: CellFigures::of(o),
                    wait_ms: wait_per_transaction_ms(o),
                    rate: super::bootstrap::mean_interval(&rates),
                })
            })
            .collect();
        if pools.len() < 2 {
            continue;
        }
        pools.sort_by_key(|p| std::cmp::Reverse(p.size));
        let (at, best) = pools
            .iter()
            .enumerate()
            .max_by(|a, b| a.1.figures.throughput.total_cmp(&b.1.figures.throughput))
            .expect("two or more pools");
        // Down from the best pool (largest first): the last of the unbroken run of
        // smaller pools that served. A larger pool that did worse is not needed.
        let smallest = pools[at..]
            .iter()
            .take_while(|p| p.figures.misses(slos).is_empty() && kept_up(p, best))
            .last()
            .map(|p| p.size);
        let block = match base {
            "" => String::new(),
            b => format!(" [{b}]"),
        };
        out.push(PoolAnswer {
            label: format!(
                "server pool for {} {}{block} at batch {}",
                c.strategy, c.index_layout, c.batch_size
            ),
            workers: c.workers,
            pools,
            smallest,
            repetitions: c.trials.len(),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::TrialResult;
    use crate::strategy::Strategy;

    /// A cell of block `pool N` at 8 workers, one repetition per rate.
    fn on_pool(size: u32, rates: &[f64]) -> CellResult {
        let trials = rates.iter().map(|&r| TrialResult::completing(r)).collect();
        let mut c = CellResult::fetch_order(Strategy::PRODUCTION, 8, 5, trials);
        c.phase = format!("pool {size}");
        c.pool_size = Some(size);
        c
    }

    fn answer(cells: Vec<CellResult>) -> PoolAnswer {
        let r = RunResult {
            cells,
            ..RunResult::default()
        };
        let mut all = pool_sizing(&r, &super::super::recommend::effective_slos(&[], &[]));
        assert_eq!(all.len(), 1);
        all.remove(0)
    }

    /// The smallest pool whose jobs/s, like every larger pool's, stayed within 5 % of
    /// the best: a small pool that happened to do well below a larger one that did not
    /// is not the answer.
    #[test]
    fn the_answer_is_the_smallest_of_an_unbroken_run_of_pools_that_kept_up() {
        let a = answer(vec![
            on_pool(1, &[500.0]),
            on_pool(2, &[990.0]),
            on_pool(4, &[850.0]),
            on_pool(8, &[1000.0]),
        ]);
        assert_eq!(a.smallest, Some(8));
        let a = answer(vec![
            on_pool(1, &[500.0]),
            on_pool(2, &[960.0]),
            on_pool(4, &[990.0]),
            on_pool(8, &[1000.0]),
        ]);
        assert_eq!(a.smallest, Some(2));
        // A larger pool that did worse than a smaller one is not needed.
        let b = answer(vec![
            on_pool(1, &[500.0]),
            on_pool(2, &[1000.0]),
            on_pool(4, &[980.0]),
            on_pool(8, &[850.0]),
        ]);
        assert_eq!(b.smallest, Some(2), "{}", b.sentence());
        assert!(
            a.sentence().contains(
                "8 workers need 2 server connections (tried 1, 2, 4, 8, one repetition each)"
            ),
            "{}",
            a.sentence()
        );
        assert!(
            a.sentence().contains("2 → 1: claim p99 –, -48 % jobs/s"),
            "{}",
            a.sentence()
        );
    }

    /// With repetitions, a pool whose interval reaches the best's counts as keeping up
    /// even when its mean is more than 5 % lower: the run cannot tell them apart.
    #[test]
    fn repetitions_the_run_cannot_tell_apart_keep_up() {
        let a = answer(vec![
            on_pool(2, &[700.0, 1000.0, 900.0]),
            on_pool(4, &[1000.0, 1010.0, 990.0]),
        ]);
        assert_eq!(a.smallest, Some(2), "{}", a.sentence());
        let a = answer(vec![
            on_pool(2, &[700.0, 710.0, 690.0]),
            on_pool(4, &[1000.0, 1010.0, 990.0]),
        ]);
        assert_eq!(a.smallest, Some(4), "{}", a.sentence());
        assert!(a.sentence().contains("3 repetitions each"));
    }
}
