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

/// Each repetition's (transactions, rollbacks) per job of `c`, where its server counts
/// transactions (a broker counts none: no figure rather than 0 per job). The one rule
/// the report, the verdict and `compare` read.
fn rates_by_trial(c: &CellResult) -> Vec<(f64, f64)> {
    let claim_only = c.is_claim_only();
    c.trials
        .iter()
        .filter(|_| c.backend.engine().runs_sql)
        .filter_map(|t| trial_rates(claim_only, t))
        .collect()
}

/// Each repetition's transactions per job of `c` ([`rates_by_trial`]).
pub fn transactions_per_job_by_trial(c: &CellResult) -> Vec<f64> {
    rates_by_trial(c).into_iter().map(|r| r.0).collect()
}

/// One repetition's server transactions per job (completed, or claimed when
/// `claim_only`); `None` when no job finished or its counters cannot be read over it.
pub fn trial_transactions_per_job(claim_only: bool, t: &TrialResult) -> Option<f64> {
    trial_rates(claim_only, t).map(|r| r.0)
}

/// One repetition's server (transactions, rollbacks) per job; `None` when no job
/// finished, or when the server restarted or failed over during it: its counters started
/// again from zero with it (a crash loses PostgreSQL's statistics, and MariaDB's status
/// counters start at zero), so the difference would count from the restart only.
fn trial_rates(claim_only: bool, t: &TrialResult) -> Option<(f64, f64)> {
    if !t.server_restarts.is_empty() || !t.failovers.is_empty() {
        return None;
    }
    let jobs = match claim_only {
        true => t.counts.jobs_claimed,
        false => t.counts.jobs_completed,
    };
    let (b, a) = (&t.locks.server_before, &t.locks.server_after);
    let rollbacks = (a.rollbacks - b.rollbacks).max(0) as f64;
    let n = (a.commits - b.commits).max(0) as f64 + rollbacks;
    (jobs > 0).then(|| (n / jobs as f64, rollbacks / jobs as f64))
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
    let per_job = |n: f64| (jobs > 0).then(|| n / jobs as f64);
    // Combined over the repetitions as the catalogue combines transactions per job.
    let rates = rates_by_trial(c);
    let combined = |f: fn(&(f64, f64)) -> f64| {
        crate::metric::Metric::TransactionsPerJob.over_repetitions(rates.iter().map(f))
    };
    let calls: u64 = c.trials.iter().map(|t| t.counts.claim_calls).sum();
    Cost {
        jobs,
        transactions_per_job: combined(|r| r.0),
        rollbacks_per_job: combined(|r| r.1),
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
        // A broker counts no transactions: no figure, in the report and in compare alike.
        let mut broker = c.clone();
        broker.backend = crate::backend_kind::BackendKind::Redis;
        assert_eq!(transactions_per_job_by_trial(&c), vec![4.75, 4.75]);
        assert!(transactions_per_job_by_trial(&broker).is_empty());
        assert_eq!(of(&broker).transactions_per_job, None);
        // A restart starts the server's counters again: that repetition has no figure.
        let mut restarted = c.clone();
        restarted.trials[1]
            .server_restarts
            .push(crate::results::RestartEvent {
                at_s: 1.0,
                took_s: 0.1,
            });
        assert_eq!(transactions_per_job_by_trial(&restarted), vec![4.75]);
        let compared = crate::analysis::compare::cell_value(
            crate::metric::Metric::TransactionsPerJob,
            &broker,
        );
        assert_eq!(compared, None);
    }
}
