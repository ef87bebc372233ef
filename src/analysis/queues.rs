//! What the verdict says per queue: where the queues of one cell part ways (some keep up
//! with their arrivals while others fall behind), and which queues a claim that serves
//! one queue per worker (`:queue`) never served because there were fewer workers than
//! queues. Both show in the per-queue table as numbers; the verdict names them.

use super::figures::{fmt_ms, in_phase};
use crate::results::RunResult;

pub(super) fn sentences(r: &RunResult, out: &mut Vec<String>) {
    unserved_sentences(r, out);
    parting_sentences(r, out);
}

/// Where the queues of one cell part ways in its first trial: some keep up with their
/// arrivals while others fall behind (a capped queue at its limit, a low priority under
/// a high one). A queue falls behind when its oldest pending job passed a second and was
/// still within a tenth of its oldest at the trial's last reading.
fn parting_sentences(r: &RunResult, out: &mut Vec<String>) {
    for c in r.cells.iter().filter(|c| c.has_arrivals()) {
        let Some(t) = c.trials.first() else { continue };
        if t.queues.len() < 2 {
            continue;
        }
        let mut behind = Vec::new();
        let mut kept = Vec::new();
        for q in &t.queues {
            let last = q.oldest_pending_series.iter().rev().find_map(|(_, a)| *a);
            let max = q.oldest_pending_max_ms.unwrap_or(0.0);
            if max >= 1000.0 && last.is_some_and(|l| l >= 0.9 * max) {
                behind.push((q.queue.as_str(), max));
            } else {
                kept.push((q.queue.as_str(), max));
            }
        }
        if behind.is_empty() || kept.is_empty() {
            continue;
        }
        let names = |v: &[(&str, f64)]| {
            v.iter()
                .map(|(n, _)| crate::markdown::code(n))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let worst = |v: &[(&str, f64)]| v.iter().map(|(_, m)| *m).fold(0.0, f64::max);
        out.push(format!(
            "per queue, {} at {} workers{}: {} falls behind (oldest pending {} and still climbing at the end) while {} keep{} up (oldest pending at most {}).",
            c.strategy,
            c.workers,
            in_phase(c),
            names(&behind),
            fmt_ms(worst(&behind)),
            names(&kept),
            if kept.len() == 1 { "s" } else { "" },
            fmt_ms(worst(&kept))
        ));
    }
}

/// Per cell whose claim reads `:queue` with fewer workers than queues: worker `i`
/// serves queue `i mod n`, so the last queues had no worker at all, and what they
/// completed (nothing, unless another strategy's claim took them) is said.
fn unserved_sentences(r: &RunResult, out: &mut Vec<String>) {
    for c in r.cells.iter().filter(|c| c.strategy.reads_queue()) {
        let Some(t) = c.trials.first() else { continue };
        let n = t.queues.len();
        let workers = c.workers as usize;
        if n < 2 || workers >= n {
            continue;
        }
        let unserved = &t.queues[workers..];
        let names: Vec<String> = unserved
            .iter()
            .map(|q| crate::markdown::code(&q.queue))
            .collect();
        let completed: i64 = unserved.iter().map(|q| q.completed).sum();
        out.push(format!(
            "per queue, {} at {} workers{}: {} had no worker ({completed} completed): its claim reads :queue, and worker i serves queue i mod {n}, so with fewer workers than the {n} queues the last ones get none; run at least {n} workers, or claim across queues.",
            c.strategy,
            c.workers,
            in_phase(c),
            names.join(", "),
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::{CellResult, QueueResult, TrialResult};
    use crate::strategy::Strategy;

    /// Regression: a `:queue` claim at 2 workers over 3 queues left the third at 0
    /// claims/s in the per-queue table, and the verdict said nothing of it.
    #[test]
    fn queues_a_queue_claim_gave_no_worker_are_named() {
        let queue = |name: &str, completed: i64| QueueResult {
            queue: name.into(),
            completed,
            completed_per_s: completed as f64,
            oldest_pending_p99_ms: None,
            oldest_pending_max_ms: None,
            oldest_pending_series: Vec::new(),
        };
        let trial = TrialResult {
            queues: vec![queue("a", 90), queue("b", 80), queue("c", 0)],
            ..Default::default()
        };
        let by_queue = crate::strategy::custom::declare(&crate::strategy::custom::Declared::postgres("by-queue", "by-queue.sql", "UPDATE jobs_hot SET status = 1, worker_id = :worker_id WHERE id IN (SELECT id FROM jobs_hot WHERE status = 0 AND queue = :queue LIMIT :batch FOR UPDATE SKIP LOCKED) RETURNING id"))
        .unwrap();
        assert!(by_queue.reads_queue());
        let r = RunResult {
            cells: vec![
                CellResult::fetch_order(by_queue.clone(), 2, 1, vec![trial.clone()]),
                CellResult::fetch_order(by_queue.clone(), 3, 1, vec![trial.clone()]),
                CellResult::fetch_order(Strategy::PRODUCTION, 2, 1, vec![trial]),
            ],
            ..RunResult::default()
        };
        let mut out = Vec::new();
        unserved_sentences(&r, &mut out);
        assert_eq!(
            out,
            [format!(
                "per queue, {by_queue} at 2 workers: `c` had no worker (0 completed): its claim reads :queue, and worker i serves queue i mod 3, so with fewer workers than the 3 queues the last ones get none; run at least 3 workers, or claim across queues."
            )]
        );
    }
}
