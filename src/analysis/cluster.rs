//! What a multi-primary cluster (Galera) did to a queue, from cells whose trials ran on
//! one: the share of claim attempts the cluster aborted across nodes when workers were
//! spread over them (each retried), what the nodes' own counters say those aborts were
//! (certification failures at commit, brute-force aborts of open transactions, the
//! nodes' own InnoDB deadlocks), that duplicates stayed where the strategy puts them,
//! and spread against all workers on one node, side by side in the same run.

use super::figures::{CellFigures, fmt_ms};
use crate::results::{CellResult, NodeTrial, RunResult};

/// The placement a cell's trials ran with; `None` off a cluster.
pub fn placement(c: &CellResult) -> Option<&str> {
    c.trials
        .iter()
        .find_map(|t| Some(t.cluster.as_ref()?.placement.as_str()))
}

/// Claim attempts that failed with a retryable error and were made again, and all
/// attempts, over every repetition.
pub fn claim_aborts(c: &CellResult) -> (u64, u64) {
    let retried: u64 = c.trials.iter().map(|t| t.counts.claim_retries).sum();
    let calls: u64 = c.trials.iter().map(|t| t.counts.claim_calls).sum();
    (retried, calls + retried)
}

/// The nodes' counters summed over a cell's repetitions, per node.
pub fn nodes(c: &CellResult) -> Vec<NodeTrial> {
    let mut out: Vec<NodeTrial> = Vec::new();
    for n in c
        .trials
        .iter()
        .filter_map(|t| t.cluster.as_ref())
        .flat_map(|cl| &cl.nodes)
    {
        match out.iter_mut().find(|o| o.node == n.node) {
            Some(o) => o.add(n),
            None => out.push(n.clone()),
        }
    }
    out
}

fn share(n: u64, of: u64) -> String {
    match of {
        0 => "0%".into(),
        _ => format!("{:.0}%", 100.0 * n as f64 / of as f64),
    }
}

/// The same cell in the other placement: same phase name apart from the placement's
/// label, backend, strategy, layout, workers and batch.
fn partner<'a>(r: &'a RunResult, c: &CellResult, other: &str) -> Option<&'a CellResult> {
    let own = placement(c)?;
    let base = c.phase.strip_suffix(own)?;
    r.cells.iter().find(|o| {
        placement(o) == Some(other)
            && o.phase.strip_suffix(other) == Some(base)
            && o.backend == c.backend
            && o.strategy == c.strategy
            && o.index_layout == c.index_layout
            && o.workers == c.workers
            && o.batch_size == c.batch_size
    })
}

/// The verdict's sentences for a run on a cluster; none off one. One per strategy at
/// its smallest batch with workers spread: aborted claim attempts, what the nodes
/// counted, duplicates, and the single-writer cell beside it when the run has one.
pub fn sentences(r: &RunResult) -> Vec<String> {
    let mut out = Vec::new();
    let mut told: Vec<&crate::strategy::Strategy> = Vec::new();
    let mut spread: Vec<&CellResult> = r
        .cells
        .iter()
        .filter(|c| placement(c) == Some("spread"))
        .collect();
    spread.sort_by_key(|c| (c.batch_size, std::cmp::Reverse(c.workers)));
    for c in spread {
        if told.contains(&&c.strategy) {
            continue;
        }
        told.push(&c.strategy);
        let nodes = nodes(c);
        let (aborted, attempts) = claim_aborts(c);
        let f = CellFigures::of(c);
        let sum = |g: fn(&NodeTrial) -> i64| nodes.iter().map(g).sum::<i64>();
        let dups = match (f.duplicate_claims, c.strategy.prevents_duplicate_claims()) {
            (0, true) => " and 0 duplicate claims: certification let one claim of each row commit"
                .to_string(),
            (0, false) => "; 0 duplicate claims in this run".to_string(),
            (n, _) => format!("; {n} duplicate claims, as on one server"),
        };
        let mut s = format!(
            "{}: with {} workers spread over {} Galera nodes at batch {}, {} of its claim attempts ({aborted} of {attempts}) were aborted across nodes and retried (the nodes counted {} certification failures, {} brute-force aborts and {} InnoDB deadlocks of their own){dups}",
            c.strategy,
            c.workers,
            nodes.len(),
            c.batch_size,
            share(aborted, attempts),
            sum(|n| n.cert_failures),
            sum(|n| n.bf_aborts),
            sum(|n| n.innodb_deadlocks),
        );
        if let Some(one) = partner(r, c, "single-writer") {
            let g = CellFigures::of(one);
            let p99 = |x: Option<f64>| x.map(fmt_ms).unwrap_or_else(|| "–".into());
            s.push_str(&format!(
                "; all workers on one node: {:.0} jobs/s against {:.0} spread ({:.2}x), claim p99 {} against {}, {} of claim attempts aborted",
                g.throughput,
                f.throughput,
                if f.throughput > 0.0 { g.throughput / f.throughput } else { 0.0 },
                p99(g.claim_p99_ms),
                p99(f.claim_p99_ms),
                share(claim_aborts(one).0, claim_aborts(one).1),
            ));
        }
        if let Some(alone) = partner(r, c, "standalone") {
            let g = CellFigures::of(alone);
            s.push_str(&format!(
                "; one MariaDB server without Galera (same settings): {:.0} jobs/s, claim p99 {}",
                g.throughput,
                g.claim_p99_ms.map(fmt_ms).unwrap_or_else(|| "–".into()),
            ));
        }
        s.push('.');
        out.push(s);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::ClusterTrial;

    fn cell(phase: &str, placement: &str, calls: u64, retries: u64, per_s: f64) -> CellResult {
        let t = crate::results::TrialResult {
            completed_per_s: per_s,
            ..Default::default()
        };
        let mut c = CellResult::fetch_order(crate::strategy::Strategy::PRODUCTION, 6, 1, vec![t]);
        c.phase = phase.into();
        for t in &mut c.trials {
            t.counts.claim_calls = calls;
            t.counts.claim_retries = retries;
            t.cluster = Some(ClusterTrial {
                placement: placement.into(),
                service_node: 1,
                nodes: (1..=3)
                    .map(|node| NodeTrial {
                        node,
                        cert_failures: 10,
                        bf_aborts: 20,
                        ..NodeTrial::default()
                    })
                    .collect(),
            });
        }
        c
    }

    #[test]
    fn the_verdict_gives_aborts_spread_and_both_placements_side_by_side() {
        let mut r = RunResult {
            cells: vec![
                cell("spread", "spread", 600, 400, 300.0),
                cell("single-writer", "single-writer", 1000, 0, 420.0),
            ],
            ..RunResult::default()
        };
        r.cells
            .push(cell("standalone", "standalone", 1500, 0, 610.0));
        let s = sentences(&r);
        assert_eq!(s.len(), 1, "{s:?}");
        let s = &s[0];
        assert!(s.contains("40% of its claim attempts (400 of 1000)"), "{s}");
        assert!(
            s.contains("30 certification failures, 60 brute-force aborts"),
            "{s}"
        );
        assert!(s.contains("0 duplicate claims: certification"), "{s}");
        assert!(s.contains("420 jobs/s against 300 spread (1.40x)"), "{s}");
        assert!(
            s.contains("one MariaDB server without Galera (same settings): 610 jobs/s"),
            "{s}"
        );
        // Off a cluster: nothing.
        r.cells
            .iter_mut()
            .for_each(|c| c.trials.iter_mut().for_each(|t| t.cluster = None));
        assert!(sentences(&r).is_empty());
    }
}
