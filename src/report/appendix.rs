//! The tables only report.html shows, after the plots: every trial unmerged, and the
//! machine with the server's settings (what decides whether two runs may be compared).

use super::blocks::Table;
use super::tables;
use crate::results::RunResult;

/// A count a backend may not have: "–" where it has none.
fn or_dash(n: Option<i64>) -> String {
    n.map_or_else(|| "–".to_string(), |n| n.to_string())
}

/// The facts that decide whether two runs may be compared, and the server's settings.
pub fn environment(r: &RunResult) -> Table {
    let env = &r.environment;
    let facts = [
        ("host", env.host.clone()),
        ("os", env.os.clone()),
        ("cpu", env.cpu.clone()),
        (
            "cores",
            format!(
                "{} logical, {} physical",
                env.logical_cores,
                env.physical_cores.map_or("?".into(), |n| n.to_string())
            ),
        ),
        (
            "memory",
            format!("{:.1} GiB", env.memory_bytes as f64 / (1u64 << 30) as f64),
        ),
        ("claimbench", env.claimbench_version.clone()),
        (
            "git revision",
            env.git_revision.clone().unwrap_or_else(|| "unknown".into()),
        ),
        ("target", env.target.clone()),
        ("server", env.server.version.clone()),
        ("workload sha256", r.workload.sha256.clone()),
    ];
    let settings = env
        .server
        .settings
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()));
    Table::facts(
        facts
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .chain(settings),
    )
}

const TRIAL_HEADER: [&str; 23] = [
    "backend",
    "strategy",
    "layout",
    "workers",
    "batch",
    "rep",
    "measured s",
    "reset s",
    "claims/s",
    "claimed/s",
    "completed/s",
    "claim p50 ms",
    "claim p99 ms",
    "empty claims",
    "dup claims",
    "dup exec ledger/effects",
    "lost",
    "oldest pending p99 ms",
    "lock wait",
    "row lock waits",
    "lock escalations",
    "deadlocks",
    "dead tuples / undo history",
];

/// One row per trial, every number the summary merges.
pub fn every_trial(r: &RunResult) -> Table {
    let mut rows = Vec::new();
    for c in &r.cells {
        // As in the summary: no completions or executions in a claim-only cell, and an
        // oldest-pending age that means something only where jobs arrived.
        let (ran, arrivals) = (!c.is_claim_only(), c.has_arrivals());
        let dash = tables::measured_or_dash;
        for t in &c.trials {
            let executions = format!(
                "{}/{}",
                t.duplicates.ledger.duplicate_executions, t.duplicates.effects_duplicate_executions
            );
            rows.push(vec![
                c.backend_label(),
                c.strategy.to_string(),
                c.index_layout.clone(),
                c.workers.to_string(),
                c.batch_size.to_string(),
                (t.repetition + 1).to_string(),
                format!("{:.2}", t.measured_s),
                format!("{:.2}", t.reset_s),
                format!("{:.0}", t.claims_per_s),
                format!("{:.0}", t.claimed_per_s),
                dash(ran, format!("{:.0}", t.completed_per_s)),
                format!("{:.2}", t.claim_latency.p50_us as f64 / 1000.0),
                format!("{:.2}", t.claim_latency.p99_us as f64 / 1000.0),
                t.counts.empty_claims.to_string(),
                t.duplicates.ledger.duplicate_claims.to_string(),
                dash(ran, executions),
                t.reconciliation.lost.to_string(),
                dash(arrivals, format!("{:.0}", t.oldest_pending.p99_ms)),
                dash(
                    c.backend.engine().runs_sql,
                    format!("{:.1}%", t.locks.lock_wait_share * 100.0),
                ),
                or_dash(t.locks.row_lock_waits),
                or_dash(t.locks.lock_escalations),
                dash(c.backend.engine().runs_sql, t.locks.deadlocks.to_string()),
                t.resources.table.dead_tuples.to_string(),
            ]);
        }
    }
    Table::of(&TRIAL_HEADER, &rows, 3)
}
