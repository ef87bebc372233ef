//! A trial's arithmetic after the fact, as pure functions of what was measured: where
//! every job went (reconciliation) and which quality warnings the trial earns. The
//! trial module gathers the inputs from the database and the workers; nothing here
//! touches either, so every rule is unit-tested on hand-made inputs.

use crate::backend::DbReconciliation;
use crate::ledger::LedgerAnalysis;
use crate::results::{MaxWorkersCheck, Reconciliation};
use crate::strategy::Strategy;
use crate::warnings::Warning;
use crate::workload::StopRule;
use std::time::Duration;

/// Where every job went. `created` jobs were seeded or produced; the database says
/// where they are now. Jobs still fetched or processing are lost unless the workload
/// explains them (`faults_explain`: claim-only mode or abandoned claims), and then only
/// as many as the ledger says were still held.
///
/// After a failover (`failover`: what the ledger found missing on the new primary),
/// jobs that are nowhere are inserts the failover lost (set into its `inserts`), and
/// rows left fetched or processing are explained up to the acknowledged completions
/// it lost that did not run again; everything else is held to the same rule.
pub fn reconcile(
    created: i64,
    db: DbReconciliation,
    faults_explain: bool,
    held_at_end: u64,
    produced_in_doubt: u64,
    failover: Option<&mut crate::results::FailoverLosses>,
) -> Reconciliation {
    let in_hot = db.pending + db.fetched + db.processing;
    let missing = created - in_hot - db.completed - db.dead_lettered;
    // An insert that died with its connection and was sent again may have committed
    // the first time too: up to that many jobs more than `created` are not a loss.
    let missing = if (-(produced_in_doubt as i64)..0).contains(&missing) {
        0
    } else {
        missing
    };
    let stranded = db.fetched + db.processing;
    let accounted = if faults_explain {
        stranded.min(held_at_end as i64)
    } else {
        0
    };
    let mut unexplained = (missing.abs(), stranded - accounted);
    let mut by_failover = 0;
    if let Some(f) = failover {
        let inserts = missing.max(0);
        f.inserts = inserts as u64;
        let not_rerun = f.completions.saturating_sub(f.rerun) as i64;
        let left = unexplained.1.min(not_rerun);
        by_failover = inserts + left;
        unexplained = (unexplained.0 - inserts, unexplained.1 - left);
    }
    Reconciliation {
        created,
        db,
        accounted_by_faults: accounted,
        accounted_by_failover: by_failover,
        lost: unexplained.0 + unexplained.1,
    }
}

/// How long after `to` the oldest-pending age came back to its level before `from`:
/// the first reading after `to` at most twice the median before `from`, or 20 ms above
/// it, whichever is more. `None` without readings before the hold, or when the age did
/// not come back within the series.
pub fn recovery_after(series: &[(f64, Option<f64>)], from: f64, to: f64) -> Option<f64> {
    let mut before: Vec<f64> = series
        .iter()
        .filter(|(at, _)| *at < from)
        .filter_map(|(_, age)| *age)
        .collect();
    if before.is_empty() {
        return None;
    }
    before.sort_by(f64::total_cmp);
    let median = before[before.len() / 2];
    let level = (2.0 * median).max(median + 20.0);
    series
        .iter()
        .filter(|(at, _)| *at >= to)
        .find(|(_, age)| age.is_none_or(|a| a <= level))
        .map(|(at, _)| at - to)
}

/// Everything the warning rules look at.
pub struct TrialFacts<'a> {
    pub strategy: Strategy,
    pub ledger: &'a LedgerAnalysis,
    pub effects_duplicate_executions: i64,
    /// What a failover in the trial lost: its lost effects are missing from the
    /// effects table's count, and its lost claims are duplicate claims of its making.
    pub failover: crate::results::FailoverLosses,
    pub lost: i64,
    /// Claims that returned more rows than asked for, the most one returned, the batch.
    pub over_claims: (u64, u64, u32),
    pub max_workers: &'a [MaxWorkersCheck],
    /// Claims recorded in the latency histogram (after warm-up).
    pub claims_recorded: u64,
    /// Client CPU over wall time.
    pub cpu_share: f64,
    /// Worker threads the trial ran on.
    pub worker_threads: u32,
    pub client_cpu_s: f64,
    /// The server's CPU, when it runs on this host.
    pub server_cpu_s: Option<f64>,
    pub scheduling_delay_p99_ms: f64,
    pub scheduling_delay_max_ms: f64,
    pub exhausted_at_s: Option<f64>,
    pub stop: StopRule,
    pub sample_interval: Option<Duration>,
    pub mean_sample_ms: f64,
    pub max_interval_ms: f64,
    pub interrupted: bool,
    pub producer_max_lag_ms: f64,
    /// Jobs arrived during the trial: only then is the oldest-pending series read.
    pub arrivals: bool,
    /// Workers cut off because they were still in a statement after the stop's grace,
    /// and the grace, s.
    pub stop_forced: (u32, f64),
    /// Claim attempts refused a lock and sent again, and claim calls.
    pub claim_lock_refusals: (u64, u64),
    /// The most advisory locks one sampler reading saw above the level before the
    /// trial, and the most the trial's claims could hold (2 x workers x batch); `None`
    /// where the server has no advisory locks or they were not read.
    pub advisory_locks: Option<(i64, i64)>,
    /// Jobs the trial's faults kept in a worker's hands past the lease (hangs, crashes
    /// after the start, connections lost holding claims): where the server redelivers
    /// on its own ([`Strategy::redelivers_on_timeout`]), each may be claimed again while
    /// held.
    pub held_past_lease: u64,
    /// Jobs in the hands of a worker whose connection went away (crashes after the
    /// start, connections lost holding claims): where the server redelivers them at
    /// once ([`Strategy::redelivers_on_connection_loss`]), each may be claimed again
    /// while the ledger still has it held.
    pub held_by_lost_connections: u64,
}

/// Tail percentiles from fewer claims than this are noise.
pub const MIN_CLAIMS: u64 = 1000;
/// A client above this share of one core per worker thread may be what limits the run.
pub const BUSY_CPU_SHARE: f64 = 0.8;
/// Worker threads waking later than this (p99) put client time into claim latency. The
/// quickstart, whose server takes both of a 2-core host's cores, reads 1.4 to 9 ms: a
/// host that shares its cores with the server is normal, one that cannot keep its own
/// threads running is not.
pub const LATE_WAKE_P99_MS: f64 = 20.0;
/// A harness costing more than this share of the server's CPU competes with what it
/// measures; below `HEAVY_MIN_SHARE` of a core it is idle, whatever the ratio.
pub const HEAVY_CLIENT_SHARE: f64 = 0.5;
pub const HEAVY_MIN_SHARE: f64 = 0.25;

/// The quality warnings of one trial, correctness first.
pub fn quality_warnings(f: &TrialFacts) -> Vec<Warning> {
    let mut warnings = Vec::new();
    // A run whose effect a failover lost is a run the effects table cannot count (and
    // the later runs of its job may not be duplicates to it); one whose effect is in
    // doubt may be counted, and may make later runs of its job duplicates to it.
    let ledger = &f.ledger;
    let least = f
        .failover
        .duplicate_executions_at_least
        .unwrap_or(ledger.duplicate_executions);
    let most = ledger.duplicate_executions_at_most;
    if !(least as i64..=most as i64).contains(&f.effects_duplicate_executions) {
        warnings.push(Warning::LedgerEffectsMismatch {
            ledger: f.ledger.duplicate_executions,
            effects: f.effects_duplicate_executions,
        });
    }
    if f.lost != 0 {
        warnings.push(Warning::LostJobs { lost: f.lost });
    }
    let (claims, most, batch) = f.over_claims;
    if claims > 0 {
        warnings.push(Warning::OverClaims {
            claims,
            most,
            batch,
        });
    }
    let not_failover = f.ledger.duplicate_claims.saturating_sub(f.failover.claims);
    let by_timeout = f.strategy.redelivers_on_timeout() && f.held_past_lease > 0;
    let by_loss = f.strategy.redelivers_on_connection_loss() && f.held_by_lost_connections > 0;
    let by_server = by_timeout || by_loss;
    if f.strategy.prevents_duplicate_claims() && not_failover > 0 && !by_server {
        warnings.push(Warning::UnexpectedDuplicateClaims {
            count: not_failover,
        });
    }
    for m in f.max_workers {
        if f.strategy.applies_max_workers() && m.max_held_exact > i64::from(m.max_workers) {
            warnings.push(Warning::MaxWorkersExceeded {
                queue: m.queue.clone(),
                limit: m.max_workers,
                observed: m.max_held_exact,
                ms_above: m.ms_above_limit,
            });
        }
    }
    if let (refused @ 1.., claims) = f.claim_lock_refusals {
        warnings.push(Warning::ClaimsRefusedLocks { refused, claims });
    }
    if let Some((most, bound)) = f.advisory_locks
        && most > bound
    {
        warnings.push(Warning::AdvisoryLocksPiled { most, bound });
    }
    if f.claims_recorded < MIN_CLAIMS {
        warnings.push(Warning::FewSamples {
            claims: f.claims_recorded,
        });
    }
    let threads = f.worker_threads.max(1);
    if f.cpu_share / f64::from(threads) > BUSY_CPU_SHARE {
        warnings.push(Warning::HarnessBusy {
            cpu_share: f.cpu_share,
            threads,
        });
    }
    if f.scheduling_delay_p99_ms > LATE_WAKE_P99_MS {
        warnings.push(Warning::SchedulingDelay {
            p99_ms: f.scheduling_delay_p99_ms,
            max_ms: f.scheduling_delay_max_ms,
        });
    }
    if let Some(server_cpu_s) = f.server_cpu_s
        && f.cpu_share > HEAVY_MIN_SHARE
        && f.client_cpu_s > HEAVY_CLIENT_SHARE * server_cpu_s
    {
        warnings.push(Warning::HarnessHeavy {
            client_cpu_s: f.client_cpu_s,
            server_cpu_s,
        });
    }
    if let Some(at_s) = f.exhausted_at_s
        && f.stop == StopRule::Duration
    {
        warnings.push(Warning::BacklogExhausted { at_s });
    }
    // A coarser series matters only where oldest-pending age is read: with arrivals.
    if let Some(asked) = f.sample_interval
        && f.arrivals
        && f.max_interval_ms > 2.0 * asked.as_secs_f64() * 1e3
    {
        warnings.push(Warning::SamplerStretched {
            mean_sample_ms: f.mean_sample_ms,
            max_interval_ms: f.max_interval_ms,
        });
    }
    if f.producer_max_lag_ms > super::background::PRODUCER_LAG_LIMIT_MS {
        warnings.push(Warning::ProducerBehind {
            max_lag_ms: f.producer_max_lag_ms,
        });
    }
    if f.interrupted {
        warnings.push(Warning::Interrupted);
    }
    if f.stop_forced.0 > 0 {
        warnings.push(Warning::StopForced {
            workers: f.stop_forced.0,
            grace_s: f.stop_forced.1,
        });
    }
    warnings
}

#[cfg(test)]
mod tests {
    use super::*;

    fn db(pending: i64, fetched: i64, completed: i64) -> DbReconciliation {
        DbReconciliation {
            pending,
            fetched,
            completed,
            ..DbReconciliation::default()
        }
    }

    #[test]
    fn every_job_accounted_for_is_not_lost() {
        let r = reconcile(100, db(40, 0, 60), false, 0, 0, None);
        assert_eq!((r.lost, r.accounted_by_faults), (0, 0));
    }

    #[test]
    fn a_missing_or_stranded_job_is_lost_unless_a_fault_explains_it() {
        // 2 rows vanished, 3 still fetched.
        assert_eq!(reconcile(100, db(35, 3, 60), false, 3, 0, None).lost, 5);
        // Claim-only or abandon: the ledger's 3 held jobs explain the 3 fetched rows,
        // not the vanished ones.
        let r = reconcile(100, db(35, 3, 60), true, 3, 0, None);
        assert_eq!((r.lost, r.accounted_by_faults), (2, 3));
        // 2 more jobs than created, after an insert of 3 was sent twice: not lost.
        assert_eq!(reconcile(100, db(42, 0, 60), false, 0, 3, None).lost, 0);
        assert_eq!(reconcile(100, db(42, 0, 60), false, 0, 1, None).lost, 2);
        // The ledger held only 1 at the end: 2 fetched rows remain unexplained.
        assert_eq!(reconcile(100, db(37, 3, 60), true, 1, 0, None).lost, 2);
    }

    #[test]
    fn a_failover_explains_its_lost_inserts_and_completions_and_nothing_else() {
        use crate::results::FailoverLosses;
        // 4 inserts lost; 3 rows processing, of which the ledger held 1 (a stranded
        // claim, explained by the fault) and 1 is a completion lost and not run again.
        let mut f = FailoverLosses {
            completions: 3,
            rerun: 2,
            ..FailoverLosses::default()
        };
        let r = reconcile(100, db(33, 3, 60), true, 1, 0, Some(&mut f));
        assert_eq!(f.inserts, 4);
        assert_eq!(
            (r.accounted_by_faults, r.accounted_by_failover, r.lost),
            (1, 5, 1)
        );
        // More jobs than created is never a failover's doing.
        let mut f = FailoverLosses::default();
        let r = reconcile(100, db(45, 0, 60), false, 0, 0, Some(&mut f));
        assert_eq!((f.inserts, r.lost), (0, 5));
    }

    fn facts<'a>(ledger: &'a LedgerAnalysis, max_workers: &'a [MaxWorkersCheck]) -> TrialFacts<'a> {
        TrialFacts {
            strategy: Strategy::PRODUCTION,
            ledger,
            effects_duplicate_executions: ledger.duplicate_executions as i64,
            failover: Default::default(),
            lost: 0,
            over_claims: (0, 10, 10),
            max_workers,
            claims_recorded: 5000,
            cpu_share: 0.2,
            worker_threads: 2,
            client_cpu_s: 0.4,
            server_cpu_s: Some(3.0),
            scheduling_delay_p99_ms: 1.1,
            scheduling_delay_max_ms: 4.0,
            exhausted_at_s: None,
            stop: StopRule::Duration,
            sample_interval: Some(Duration::from_millis(100)),
            mean_sample_ms: 1.0,
            max_interval_ms: 100.0,
            interrupted: false,
            producer_max_lag_ms: 0.0,
            arrivals: true,
            stop_forced: (0, 10.0),
            claim_lock_refusals: (0, 5000),
            advisory_locks: Some((12, 40)),
            held_past_lease: 0,
            held_by_lost_connections: 0,
        }
    }

    /// Regression: a session-advisory claim without a release step left 4,460 locks
    /// held by the trial's end, and the run said nothing; up to the bound is a claim's
    /// own.
    #[test]
    fn advisory_locks_past_what_claims_can_hold_are_a_warning_with_their_count() {
        let l = LedgerAnalysis::default();
        let mut f = facts(&l, &[]);
        let piled = |f: &TrialFacts| {
            quality_warnings(f)
                .into_iter()
                .find(|w| matches!(w, Warning::AdvisoryLocksPiled { .. }))
        };
        assert_eq!(piled(&f), None);
        f.advisory_locks = Some((40, 40));
        assert_eq!(piled(&f), None);
        f.advisory_locks = None;
        assert_eq!(piled(&f), None);
        f.advisory_locks = Some((4460, 80));
        let w = piled(&f).unwrap();
        assert!(!w.is_failure() && !w.invalidates());
        assert!(
            w.to_string().starts_with(
                "the server held up to 4460 advisory locks during the trial, more than the 80"
            ),
            "{w}"
        );
    }

    /// Regression: a NOWAIT claim had 964 of 3,033 claims refused for locks, counted
    /// as retries with no word of it.
    #[test]
    fn claims_refused_a_lock_are_a_warning_with_their_count() {
        let l = LedgerAnalysis::default();
        let mut f = facts(&l, &[]);
        assert!(
            !quality_warnings(&f)
                .iter()
                .any(|w| matches!(w, Warning::ClaimsRefusedLocks { .. }))
        );
        f.claim_lock_refusals = (964, 3033);
        let w = quality_warnings(&f);
        let refused = w
            .iter()
            .find(|w| matches!(w, Warning::ClaimsRefusedLocks { .. }))
            .expect("a warning");
        assert!(
            refused
                .to_string()
                .starts_with("964 claim attempts were refused a lock")
        );
        assert!(!refused.is_failure() && !refused.invalidates());
    }

    /// With the effects' count at 0, 1, 3 and 4: the mismatch warned of outside `ok`.
    fn warned_outside(f: &mut TrialFacts<'_>, ok: std::ops::RangeInclusive<i64>) {
        for effects in [0, 1, 3, 4] {
            f.effects_duplicate_executions = effects;
            let mismatch = quality_warnings(f)
                .iter()
                .any(|w| matches!(w, Warning::LedgerEffectsMismatch { .. }));
            assert_eq!(mismatch, !ok.contains(&effects), "effects {effects}");
        }
    }

    /// After a failover that lost effects, the effects may count as few duplicates as
    /// the ledger does without those runs, and no fewer.
    #[test]
    fn a_failovers_lost_effects_excuse_only_the_duplicates_they_unmade() {
        let l = LedgerAnalysis {
            duplicate_executions: 3,
            duplicate_executions_at_most: 3,
            ..LedgerAnalysis::default()
        };
        let mut f = facts(&l, &[]);
        f.failover.effects = 1;
        f.failover.duplicate_executions_at_least = Some(1);
        warned_outside(&mut f, 1..=3);
    }

    /// The effects may count as many more duplicates as the ledger's runs in doubt could
    /// make: up to its bound, not up to the number of runs in doubt (one run that
    /// succeeded in doubt, then a failed run of its job and its retry, is two).
    #[test]
    fn effects_in_doubt_excuse_only_the_extra_duplicates_they_could_make() {
        let l = LedgerAnalysis {
            duplicate_executions: 1,
            duplicate_executions_at_most: 3,
            ..LedgerAnalysis::default()
        };
        let mut f = facts(&l, &[]);
        warned_outside(&mut f, 1..=3);
    }

    #[test]
    fn recovery_is_the_first_reading_after_the_hold_back_at_the_level_before_it() {
        let s = |v: &[(f64, f64)]| v.iter().map(|&(t, a)| (t, Some(a))).collect::<Vec<_>>();
        // Before: median 10 ms, so back at <= 30 ms; the hold is 2..4 s.
        let series = s(&[
            (0.5, 8.0),
            (1.0, 10.0),
            (1.5, 12.0),
            (2.5, 200.0),
            (4.0, 900.0),
            (4.5, 45.0),
            (5.0, 25.0),
            (5.5, 9.0),
        ]);
        assert_eq!(recovery_after(&series, 2.0, 4.0), Some(1.0));
        // Never back within the series; nothing before the hold.
        assert_eq!(recovery_after(&series[..6], 2.0, 4.0), None);
        assert_eq!(recovery_after(&series[3..], 2.0, 4.0), None);
        // An empty queue (no pending job) is recovered.
        let mut empty = series.clone();
        empty[5].1 = None;
        assert_eq!(recovery_after(&empty, 2.0, 4.0), Some(0.5));
    }

    #[test]
    fn a_clean_trial_earns_no_warning() {
        let l = LedgerAnalysis::default();
        assert!(quality_warnings(&facts(&l, &[])).is_empty());
    }

    #[test]
    fn each_rule_fires_on_its_own_condition() {
        let l = LedgerAnalysis {
            duplicate_claims: 2,
            duplicate_executions: 1,
            ..LedgerAnalysis::default()
        };
        let capped = [MaxWorkersCheck {
            queue: "q".into(),
            max_workers: 2,
            max_observed_active: 2,
            max_held_exact: 3,
            ms_above_limit: 4.5,
        }];
        let mut f = facts(&l, &capped);
        f.effects_duplicate_executions = 0;
        f.lost = 1;
        f.over_claims = (3, 1330, 10);
        f.claims_recorded = 10;
        f.cpu_share = 1.8;
        f.client_cpu_s = 3.6;
        f.scheduling_delay_p99_ms = 25.0;
        f.scheduling_delay_max_ms = 40.0;
        f.exhausted_at_s = Some(1.5);
        f.max_interval_ms = 500.0;
        f.interrupted = true;
        f.producer_max_lag_ms = 300.0;
        let w = quality_warnings(&f);
        assert_eq!(
            w,
            vec![
                Warning::LedgerEffectsMismatch {
                    ledger: 1,
                    effects: 0
                },
                Warning::LostJobs { lost: 1 },
                Warning::OverClaims {
                    claims: 3,
                    most: 1330,
                    batch: 10
                },
                Warning::UnexpectedDuplicateClaims { count: 2 },
                Warning::MaxWorkersExceeded {
                    queue: "q".into(),
                    limit: 2,
                    observed: 3,
                    ms_above: 4.5
                },
                Warning::FewSamples { claims: 10 },
                Warning::HarnessBusy {
                    cpu_share: 1.8,
                    threads: 2
                },
                Warning::SchedulingDelay {
                    p99_ms: 25.0,
                    max_ms: 40.0
                },
                Warning::HarnessHeavy {
                    client_cpu_s: 3.6,
                    server_cpu_s: 3.0
                },
                Warning::BacklogExhausted { at_s: 1.5 },
                Warning::SamplerStretched {
                    mean_sample_ms: 1.0,
                    max_interval_ms: 500.0
                },
                Warning::ProducerBehind { max_lag_ms: 300.0 },
                Warning::Interrupted,
            ]
        );
    }

    #[test]
    fn the_harness_bounds_scale_with_its_threads_and_ignore_an_idle_client() {
        let l = LedgerAnalysis::default();
        let mut f = facts(&l, &[]);
        // 1.5 cores on 2 threads is 75% each: busy on one thread, not on two.
        f.cpu_share = 1.5;
        f.client_cpu_s = 0.3;
        assert!(quality_warnings(&f).is_empty());
        f.worker_threads = 1;
        assert!(matches!(
            quality_warnings(&f)[..],
            [Warning::HarnessBusy { threads: 1, .. }]
        ));
        // Costlier than half the server, but a tenth of a core: an idle trial.
        f.worker_threads = 2;
        f.cpu_share = 0.1;
        f.client_cpu_s = 2.0;
        assert!(quality_warnings(&f).is_empty());
        // Unknown server CPU (a remote server): no ratio to judge.
        f.cpu_share = 0.5;
        f.server_cpu_s = None;
        assert!(quality_warnings(&f).is_empty());
    }

    #[test]
    fn a_stretched_sampler_matters_only_where_jobs_arrive() {
        let l = LedgerAnalysis::default();
        let mut f = facts(&l, &[]);
        f.sample_interval = Some(Duration::from_millis(100));
        f.max_interval_ms = 500.0;
        f.arrivals = false;
        assert!(
            !quality_warnings(&f)
                .iter()
                .any(|w| matches!(w, Warning::SamplerStretched { .. })),
            "no oldest-pending series is read without arrivals"
        );
        f.arrivals = true;
        assert!(
            quality_warnings(&f)
                .iter()
                .any(|w| matches!(w, Warning::SamplerStretched { .. }))
        );
    }

    #[test]
    fn strategies_without_the_promise_are_not_warned_about_it() {
        let l = LedgerAnalysis {
            duplicate_claims: 2,
            ..LedgerAnalysis::default()
        };
        let capped = [MaxWorkersCheck {
            queue: "q".into(),
            max_workers: 2,
            max_observed_active: 9,
            max_held_exact: 9,
            ms_above_limit: 1.0,
        }];
        let mut f = facts(&l, &capped);
        f.strategy = Strategy::NAIVE;
        assert!(quality_warnings(&f).is_empty());
        // A drained trial is meant to run out of work.
        f.exhausted_at_s = Some(1.0);
        f.stop = StopRule::Drain;
        assert!(quality_warnings(&f).is_empty());
    }
}
