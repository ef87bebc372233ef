//! The report's view of a run whose workers went through a pooler: what the pooler
//! passed and how long its clients waited for a server connection, per cell, and one
//! line on the pooler itself.

use crate::results::{RunResult, cell_key};

/// How to read the pooler table.
pub const POOLER_HOW: &str = "Per cell, summed over repetitions, from PgBouncer's own counters (SHOW STATS on its admin console, read before and after each trial): the server pool the cell ran on, the transactions it passed to the server and the time its clients waited for a server connection, in all and per transaction; and the most server connections serving clients at once and the most clients waiting for one (SHOW POOLS every 100 ms, warm-up included, the largest over repetitions). Only the workers go through it; the producer, sampler, rescuer and control connection reach the server directly. A wait per transaction near the claim's own latency means the pool, not the server, sets the pace: more server connections, or fewer workers, would help. Where a block ran once per pool (pool_sizes), the verdict names for each worker count the smallest pool that, like every pool between it and the one with the most jobs/s, met every SLO and kept jobs/s within 5 % of that pool's or inside its 95 % interval over the repetitions.";

/// One row per cell whose trials read the pooler; `None` when none did.
pub fn table(r: &RunResult) -> Option<(Vec<&'static str>, Vec<Vec<String>>)> {
    let mut header = crate::results::KEY_HEADER.to_vec();
    header.extend([
        "server pool",
        "transactions",
        "waited for a server connection s",
        "wait per transaction ms",
        "peak server connections in use",
        "peak clients waiting",
    ]);
    let mut rows = Vec::new();
    for c in &r.cells {
        let mut read = false;
        let (mut xacts, mut wait_us) = (0i64, 0i64);
        for t in &c.trials {
            if let (Some(x), Some(w)) = (t.locks.pool_transactions, t.locks.pool_wait_us) {
                read = true;
                xacts += x;
                wait_us += w;
            }
        }
        if !read {
            continue;
        }
        let mut row = cell_key(c);
        row.extend([
            c.pool_size.map_or("–".to_string(), |n| n.to_string()),
            xacts.to_string(),
            format!("{:.2}", wait_us as f64 / 1e6),
            crate::analysis::pooler::wait_per_transaction_ms(c)
                .map_or("–".to_string(), |ms| format!("{ms:.3}")),
            peak(c, |l| l.pool_peak_server),
            peak(c, |l| l.pool_peak_waiting),
        ]);
        rows.push(row);
    }
    (!rows.is_empty()).then_some((header, rows))
}

/// The largest of a pooler reading over a cell's trials, "–" where none read it.
fn peak(
    c: &crate::results::CellResult,
    of: impl Fn(&crate::results::LockEvidence) -> Option<i64>,
) -> String {
    c.trials
        .iter()
        .filter_map(|t| of(&t.locks))
        .max()
        .map_or("–".to_string(), |n| n.to_string())
}

/// The pooler a target had, for the notes at the top of every format.
pub fn note(r: &RunResult) -> Option<String> {
    let lines: Vec<String> = r
        .environment
        .targets
        .iter()
        .filter_map(|t| {
            let (whose, mode, size) = match (&t.pooler, &t.their_pooler) {
                (Some(p), _) => ("a PgBouncer claimbench started".to_string(), p.mode, Some(p.pool_size)),
                (None, Some(p)) => (format!("your pooler at {}", p.address), p.mode, p.pool_size),
                (None, None) => return None,
            };
            let pool = match size {
                Some(n) => format!("{n} server connections by default (each cell's pool: the Pooler table)"),
                None => "a pool of unknown size (give --pooler-admin to read it)".to_string(),
            };
            Some(format!(
                "the workers reached the {} server through {whose} in {mode} mode with {pool}; the producer, sampler and control connection went directly.",
                t.backend
            ))
        })
        .collect();
    (!lines.is_empty()).then(|| lines.join(" "))
}
