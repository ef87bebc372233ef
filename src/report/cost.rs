//! The report's cost-per-job table: what each cell's jobs cost the database, beside its
//! throughput (see `analysis::cost`).

use crate::analysis::cost;
use crate::analysis::figures::CellFigures;
use crate::results::{RunResult, cell_key};

/// How to read the cost table.
pub const COST_HOW: &str = "Per cell, the mean over its repetitions: the server's transactions (commits and rollbacks, read-only ones included: PostgreSQL's xact_commit and xact_rollback of the run's database, MySQL's Handler_commit and Handler_rollback of the whole server, which count its internal commits: each statement of a lifecycle procedure, so compare strategies within one backend) per completed job (per claimed job in a claim-only phase), the rollbacks among them, the claim calls per job (a batch shares one call; an empty poll or a lost race adds one), the rows the sampled claim examined per row of its batch, and what claiming out of order costs the jobs: the older jobs a claim passed over (for each job's first claim, the jobs created before it and first claimed after it; 99th percentile, where ids are the fetch order: one priority, nothing scheduled). A head-first claim passes over about the jobs the other claims in flight hold (workers x batch); a random start passes over up to its window. The counts include claimbench's sampler, producer and rescuer (a few read-only transactions per sample, 5 samples a second by default; trial.sample_interval_ms = 0 leaves the workers alone) and, on MySQL, anything else the server ran; – where nothing counted them (a broker; a repetition in which the server restarted or failed over, its counters starting again with it). Peer schedulers publish the same unit: transactions per execution.";

/// One row per cell that finished a job; `None` when none did.
pub fn table(r: &RunResult) -> Option<(Vec<&'static str>, Vec<Vec<String>>)> {
    let mut header = crate::results::KEY_HEADER.to_vec();
    header.extend([
        "jobs/s",
        "transactions/job",
        "rollbacks/job",
        "claim calls/job",
        "rows examined/row",
        "older jobs passed over p99",
    ]);
    let two = |v: Option<f64>| v.map_or_else(|| "–".to_string(), |v| format!("{v:.2}"));
    let rows: Vec<Vec<String>> = r
        .cells
        .iter()
        .filter_map(|c| {
            let k = cost::of(c);
            // Every cell whose jobs finished: one without a transaction count (a broker,
            // a repetition the server restarted in) still has its claim calls.
            if k.jobs == 0 {
                return None;
            }
            let mut row = cell_key(c);
            row.extend([
                format!("{:.0}", CellFigures::of(c).throughput),
                two(k.transactions_per_job),
                two(k.rollbacks_per_job),
                two(k.claim_calls_per_job),
                two(k.rows_examined_per_row),
                k.passed_over_p99
                    .map_or_else(|| "–".to_string(), |n| n.to_string()),
            ]);
            Some(row)
        })
        .collect();
    (!rows.is_empty()).then_some((header, rows))
}
