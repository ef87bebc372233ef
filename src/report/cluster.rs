//! The report's view of a run on a multi-primary cluster: each node's share of every
//! cell (its workers and its own counters), and one line on the cluster itself.

use crate::analysis::cluster::{claim_aborts, nodes, placement};
use crate::results::{RunResult, cell_key};

/// How to read the cluster table.
pub const CLUSTER_HOW: &str = "Per cell and node of the Galera cluster, summed over repetitions: where the workers were placed (spread: worker i on node i mod N; single-writer: all on node 1), the share of the cell's claim attempts aborted and retried (error 1213, which Galera also returns for its own aborts), and the node's own counters over the trial: certification failures (its commits that lost to another node's write set on the same rows), brute-force aborts (its open transactions a replicated write set took the row locks of), its own InnoDB deadlocks, the time replication was paused by flow control, and the write sets it sent. The sampler, producer, rescuer and control connection use node 1 (its reads wait for causality, wsrep_sync_wait = 1, so counts after a trial include every node's commits); the main table's lock-wait share of a spread cell counts node 1's workers only (the sampler reads node 1's process list).";

/// One row per cell and node; `None` off a cluster.
pub fn table(r: &RunResult) -> Option<(Vec<&'static str>, Vec<Vec<String>>)> {
    let mut header = crate::results::KEY_HEADER.to_vec();
    header.extend([
        "placement",
        "claim attempts aborted",
        "node",
        "node workers",
        "cert failures",
        "BF aborts",
        "InnoDB deadlocks",
        "flow control ms",
        "write sets sent",
    ]);
    let mut rows = Vec::new();
    for c in &r.cells {
        // A standalone cell ran off the cluster: its nodes only idled.
        let Some(p) = placement(c).filter(|p| *p != "standalone") else {
            continue;
        };
        let (aborted, attempts) = claim_aborts(c);
        for n in nodes(c) {
            let mut row = cell_key(c);
            row.extend([
                p.to_string(),
                format!("{aborted}/{attempts}"),
                format!("{} ({})", n.node, n.address),
                n.workers.to_string(),
                n.cert_failures.to_string(),
                n.bf_aborts.to_string(),
                n.innodb_deadlocks.to_string(),
                format!("{:.0}", n.flow_control_paused_ms),
                n.replicated.to_string(),
            ]);
            rows.push(row);
        }
    }
    (!rows.is_empty()).then_some((header, rows))
}

/// The cluster a target was, for the notes at the top of every format.
pub fn note(r: &RunResult) -> Option<String> {
    let lines: Vec<String> = r
        .environment
        .targets
        .iter()
        .filter_map(|t| {
            let c = t.cluster.as_ref()?;
            let settings: Vec<String> = c
                .settings
                .iter()
                .filter(|(k, _)| k != "wsrep_on")
                .map(|(k, v)| format!("{k} = {v}"))
                .collect();
            Some(format!(
                "the {} target was a Galera cluster of {} nodes ({}; provider {}), with {}.",
                t.backend,
                c.size,
                c.nodes.join(", "),
                c.provider_version,
                settings.join(", ")
            ))
        })
        .collect();
    (!lines.is_empty()).then(|| lines.join(" "))
}
