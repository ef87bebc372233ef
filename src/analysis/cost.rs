//! What a job costs the database, per strategy: transactions per completed job (claimed,
//! in a claim-only phase) from the server's own counters over the trial, and the rows the
//! sampled claim examined per row it could take. Answers "is our sharded poller with a
//! version column enough?" in the units peer schedulers publish (transactions per
//! execution), side by side with throughput.

use crate::results::{CellResult, TrialResult};

/// One cell's cost, over all its repetitions.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Cost {
    /// The jobs the cost is spread over: completed (claimed in a claim-only phase).
    pub jobs: u64,
    /// Server transactions (commits and rollbacks: PostgreSQL's `xact_commit` and
    /// `xact_rollback` of the database, MySQL's `Handler_commit` and `Handler_rollback`
    /// of the server), read-only ones included, per job. `None` when no job finished.
    pub transactions_per_job: Option<f64>,
    /// Of those, rollbacks per job: claims that found nothing or lost, aborted retries.
    pub rollbacks_per_job: Option<f64>,
    /// Claim calls per job: how many statements' worth of round trips a job's claim took
    /// (a batch shares one; a lost race or an empty poll adds one).
    pub claim_calls_per_job: Option<f64>,
    /// Rows the sampled claim's plan examined per row of its batch (the first sample).
    pub rows_examined_per_row: Option<f64>,
    /// What claiming out of order costs the jobs: the older jobs a claim passed over,
    /// 99th percentile, the largest over the repetitions (`ledger::PassedOver`; only
    /// where ids are the fetch order).
    pub passed_over_p99: Option<u64>,
}

/// One repetition's server transactions per job (completed, or claimed when
/// `claim_only`); `None` when no job finished.
pub fn trial_transactions_per_job(claim_only: bool, t: &TrialResult) -> Option<f64> {
    let jobs = match claim_only {
        true => t.counts.jobs_claimed,
        false => t.counts.jobs_completed,
    };
    let (b, a) = (&t.locks.server_before, &t.locks.server_after);
    let n = (a.commits - b.commits).max(0) + (a.rollbacks - b.rollbacks).max(0);
    (jobs > 0).then(|| n as f64 / jobs as f64)
}

pub fn of(c: &CellResult) -> Cost {
    let claim_only = c.is_claim_only();
    let jobs: u64 = c
        .trials
        .iter()
        .map(|t| match claim_only {
            true => t.counts.jobs_claimed,
            false => t.counts.jobs_completed,
        })
        .sum();
    let delta = |f: fn(&crate::results::ServerCounters) -> i64| -> i64 {
        c.trials
            .iter()
            .map(|t| (f(&t.locks.server_after) - f(&t.locks.server_before)).max(0))
            .sum()
    };
    let commits = delta(|s| s.commits);
    let rollbacks = delta(|s| s.rollbacks);
    let per_job = |n: f64| (jobs > 0).then(|| n / jobs as f64);
    // A broker counts no transactions: its cells have no figure, not 0 per job.
    let per_txn = |n: f64| per_job(n).filter(|_| c.backend.engine().runs_sql);
    let calls: u64 = c.trials.iter().map(|t| t.counts.claim_calls).sum();
    Cost {
        jobs,
        transactions_per_job: per_txn((commits + rollbacks) as f64),
        rollbacks_per_job: per_txn(rollbacks as f64),
        claim_calls_per_job: per_job(calls as f64),
        rows_examined_per_row: c
            .trials
            .iter()
            .find_map(|t| t.plan.as_ref())
            .filter(|p| p.analyzed && c.batch_size > 0)
            .map(|p| p.rows_examined as f64 / f64::from(c.batch_size)),
        passed_over_p99: c
            .trials
            .iter()
            .filter_map(|t| t.passed_over.map(|p| p.p99))
            .max(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::ServerCounters;

    #[test]
    fn transactions_and_calls_are_spread_over_the_jobs_that_finished() {
        let mut t = TrialResult::default();
        t.counts.jobs_completed = 200;
        t.counts.jobs_claimed = 210;
        t.counts.claim_calls = 250;
        t.locks.server_before = ServerCounters {
            commits: 1000,
            rollbacks: 10,
            ..Default::default()
        };
        t.locks.server_after = ServerCounters {
            commits: 1900,
            rollbacks: 60,
            ..Default::default()
        };
        t.duplicates.ledger.distinct_executed = 200;
        let c = CellResult::fetch_order(
            crate::strategy::Strategy::PRODUCTION,
            4,
            1,
            vec![t.clone(), t],
        );
        assert_eq!(trial_transactions_per_job(false, &c.trials[0]), Some(4.75));
        // Claim-only: spread over the jobs claimed.
        let per_claimed = trial_transactions_per_job(true, &c.trials[0]).unwrap();
        assert!((per_claimed - 950.0 / 210.0).abs() < 1e-9);
        let cost = of(&c);
        assert_eq!(cost.jobs, 400);
        assert_eq!(cost.transactions_per_job, Some(4.75));
        assert_eq!(cost.rollbacks_per_job, Some(0.25));
        assert_eq!(cost.claim_calls_per_job, Some(1.25));
        assert_eq!(cost.rows_examined_per_row, None);
        // Nothing finished: no cost to spread.
        let idle = CellResult::fetch_order(
            crate::strategy::Strategy::PRODUCTION,
            4,
            1,
            vec![TrialResult::default()],
        );
        assert_eq!(of(&idle).transactions_per_job, None);
    }
}
