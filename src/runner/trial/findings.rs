//! Figures a trial's result reads off what was collected: reconciliation, rescues,
//! capped queues, duplicates, lock evidence, oldest pending, per-queue results and
//! resources.

use super::*;

/// Where every job went: the database's counts against the jobs created, with what
/// the workload's faults and mode may leave held.
/// `in_doubt`: (claims, produced jobs) whose calls died with their connection.
pub(super) fn reconciliation(
    w: &Workload,
    spec: &TrialSpec<'_>,
    created: u64,
    db: crate::backend::DbReconciliation,
    analysis: &LedgerAnalysis,
    (claims_in_doubt, produced_in_doubt): (u64, u64),
    failover: Option<&mut crate::results::FailoverLosses>,
) -> crate::results::Reconciliation {
    verdict::reconcile(
        created as i64,
        db,
        w.handler.mode == HandlerMode::ClaimOnly || w.faults.strands_jobs(),
        // Rows a claim may have taken when its reply was lost with the connection count
        // with the ones the ledger holds: the rescuer has them, or will.
        analysis.held_at_end + claims_in_doubt * u64::from(spec.batch),
        produced_in_doubt,
        failover,
    )
}

/// Whether the trial's ledger keeps every event: for the findings that look back
/// over the whole trial (a failover's lost work, capped queues' exact holds, shard
/// moves' windows), and always in builds with debug assertions (the test suite's), which
/// check the streaming tally against them. A long run of any other workload holds only
/// what is in flight.
pub(super) fn keeps_every_event(w: &Workload, spec: &TrialSpec<'_>, harness: &Harness<'_>) -> bool {
    cfg!(debug_assertions)
        || (harness.failover.is_some() && !w.faults.failover_at.is_empty())
        || w.population.queues.iter().any(|q| q.max_workers.is_some())
        || (w.shard_moves().is_some() && spec.strategy.def().sharded)
}

/// The tally's counts against the whole trial's events read at once: they must agree,
/// or the streaming reading lost or misplaced an event (a harness defect, reported as
/// the trial's failure rather than a wrong figure).
pub(super) fn check_tally(
    tally: &ledger::TallyFindings,
    merged: &ledger::MergedLedger,
) -> Result<(), RunError> {
    let rescues = merged.rescue_times();
    let mut h = new_histogram();
    for ns in &rescues {
        h.saturating_record((ns / 1000).max(1));
    }
    let whole = (
        merged.analyse(),
        merged.passed_over(),
        (!rescues.is_empty()).then(|| HistogramSummary::from_histogram(&h)),
    );
    let streamed = (
        tally.analysis,
        tally.passed_over,
        tally.time_to_rescue.clone(),
    );
    if whole == streamed {
        return Ok(());
    }
    Err(RunError::Accounting(format!(
        "the ledger's streaming tally disagrees with the whole trial's events: \
         {streamed:?} against {whole:?}"
    )))
}

/// What a trial showed over time ([`over_time`]).
pub(super) struct OverTime {
    pub snapshot_held: Option<crate::results::SnapshotHold>,
    pub soak: Option<crate::results::SoakDrift>,
    pub timeline: Vec<crate::results::TimelineReading>,
}

/// The trial over time: with a snapshot held open (`held`, from and to), when the
/// queue's oldest-pending age came back and the trial read as clean, held and after;
/// with a timeline, each of its phases; with neither, a trial long enough read as a
/// soak (first quarter against last). All over `window`, the measured seconds.
pub(super) fn over_time(
    w: &Workload,
    held: Option<background::HeldSnapshot>,
    window: (f64, f64),
    (m, sampled, table, purge): (
        &WorkerMetrics,
        &background::SamplerReport,
        &[crate::results::TableSample],
        &[crate::results::PurgeSample],
    ),
) -> OverTime {
    use crate::runner::phases;
    let claim_only = w.handler.mode == HandlerMode::ClaimOnly;
    let series = phases::Series {
        done_per_s: if claim_only {
            &m.claimed_per_s
        } else {
            &m.completed_per_s
        },
        claim_seconds: &m.claim_seconds,
        table,
        purge,
        oldest_pending: &sampled.oldest_pending,
    };
    let timeline = phases::timeline(&series, (&w.timeline, w.producer_rate_per_s), window);
    // A timeline's pin is read against the phase just before it and the one just after
    // (a surge earlier in the trial is not its clean phase).
    let pin = w.timeline.iter().position(|t| t.pin.is_some());
    let clean_from = pin
        .and_then(|j| j.checked_sub(1))
        .map_or(window.0, |j| w.timeline[j].from.as_secs_f64().max(window.0));
    let after_to = pin
        .and_then(|j| w.timeline.get(j + 1))
        .map_or(window.1, |t| t.to.as_secs_f64().min(window.1));
    let pinned = held.is_some();
    let snapshot_held = held.map(|h| {
        let (from_s, to_s) = h.window;
        crate::results::SnapshotHold {
            from_s,
            to_s,
            recovery_s: verdict::recovery_after(&sampled.oldest_pending, from_s, to_s),
            phases: phases::phases(&series, clean_from, (from_s, to_s), after_to),
            scans: h.scans,
        }
    });
    let soak = (!pinned && w.timeline.is_empty())
        .then(|| phases::soak(&series, window.0, window.1))
        .flatten();
    OverTime {
        snapshot_held,
        soak,
        timeline,
    }
}

/// Each capped queue's limit with its sampled and exact (ledger) figures.
pub(super) fn max_workers_checks(
    w: &Workload,
    sampled: &background::SamplerReport,
    holds: Vec<ledger::QueueHold>,
) -> Vec<MaxWorkersCheck> {
    w.population
        .queues
        .iter()
        .zip(&sampled.max_queue_active)
        .filter_map(|(q, seen)| Some((q.name.clone(), q.max_workers?, seen.unwrap_or(0))))
        .zip(holds)
        .map(|((queue, max_workers, sampled), hold)| MaxWorkersCheck {
            queue,
            max_workers,
            max_observed_active: sampled,
            max_held_exact: hold.max_held,
            ms_above_limit: hold.ns_above_limit as f64 / 1e6,
        })
        .collect()
}

pub(super) fn duplicates(
    analysis: LedgerAnalysis,
    effects_dups: i64,
    effect_rows: i64,
) -> Duplicates {
    Duplicates {
        ledger: analysis,
        effects_duplicate_executions: effects_dups,
        effects_rows: effect_rows,
        claim_rate: ratio(analysis.duplicate_claims, analysis.distinct_claimed),
        execution_rate: ratio(analysis.duplicate_executions, analysis.distinct_executed),
    }
}

pub(super) fn lock_evidence(
    sampled: &background::SamplerReport,
    workers: u32,
    (before, after): (ServerCounters, ServerCounters),
    pool_peaks: Option<(i64, i64)>,
) -> LockEvidence {
    LockEvidence {
        lock_wait_samples: sampled.lock_wait_samples,
        active_samples: sampled.active_samples,
        lock_wait_share: if sampled.samples > 0 {
            sampled.lock_wait_samples as f64 / (sampled.samples as f64 * f64::from(workers))
        } else {
            0.0
        },
        samples: sampled.samples,
        server_before: before,
        server_after: after,
        deadlocks: after.deadlocks - before.deadlocks,
        row_lock_waits: delta(before.row_lock_waits, after.row_lock_waits),
        row_lock_time_ms: delta(before.row_lock_time_ms, after.row_lock_time_ms),
        lock_escalations: delta(before.lock_escalations, after.lock_escalations),
        pool_transactions: delta(before.pool_transactions, after.pool_transactions),
        pool_wait_us: delta(before.pool_wait_us, after.pool_wait_us),
        pool_peak_server: pool_peaks.map(|p| p.0),
        pool_peak_waiting: pool_peaks.map(|p| p.1),
    }
}

/// The sampler's oldest-pending series, with percentiles over the samples after warm-up.
pub(super) fn oldest_pending(w: &Workload, sampled: background::SamplerReport) -> OldestPending {
    let steady_from_s = w.trial.warmup.as_secs_f64();
    let mut h = new_histogram();
    for ms in sampled
        .oldest_pending
        .iter()
        .filter(|(t, _)| *t >= steady_from_s)
        .filter_map(|(_, age)| *age)
    {
        h.saturating_record((ms * 1000.0).max(1.0) as u64);
    }
    let at = |q: f64| h.value_at_quantile(q) as f64 / 1000.0;
    OldestPending {
        sampled: w.trial.sample_interval.is_some(),
        mean_sample_ms: sampled.mean_sample_ms,
        max_interval_ms: sampled.max_interval_ms,
        p50_ms: at(0.5),
        p99_ms: at(0.99),
        max_ms: h.max() as f64 / 1000.0,
        series: sampled.oldest_pending,
    }
}

/// Per queue of the workload: its completions in the steady window and its sampled
/// oldest-pending age after warm-up.
pub(super) fn queue_results(
    w: &Workload,
    completed: &[(String, i64)],
    measured_s: f64,
    oldest: &[Vec<(f64, Option<f64>)>],
    steady_from_s: f64,
) -> Vec<QueueResult> {
    w.population
        .queues
        .iter()
        .enumerate()
        .map(|(i, q)| {
            let done = completed
                .iter()
                .find(|(name, _)| *name == q.name)
                .map_or(0, |(_, n)| *n);
            let series = oldest.get(i).cloned().unwrap_or_default();
            let mut h = new_histogram();
            for ms in series
                .iter()
                .filter(|(t, _)| *t >= steady_from_s)
                .filter_map(|(_, a)| *a)
            {
                h.saturating_record((ms * 1000.0).max(1.0) as u64);
            }
            let at = |v: u64| (!h.is_empty()).then_some(v as f64 / 1000.0);
            QueueResult {
                queue: q.name.clone(),
                completed: done,
                completed_per_s: if measured_s > 0.0 {
                    done as f64 / measured_s
                } else {
                    0.0
                },
                oldest_pending_p99_ms: at(h.value_at_quantile(0.99)),
                oldest_pending_max_ms: at(h.max()),
                oldest_pending_series: series,
            }
        })
        .collect()
}

/// The exact max-workers figures of each capped queue, in the workload's order: the
/// ledger's claim and release instants, with each job's queue read from the database.
pub(super) async fn exact_holds<B: Backend>(
    backend: &B,
    w: &Workload,
    merged: &ledger::MergedLedger,
) -> Result<Vec<ledger::QueueHold>, RunError> {
    let capped: Vec<(String, i64)> = w
        .population
        .queues
        .iter()
        .filter_map(|q| Some((q.name.clone(), i64::from(q.max_workers?))))
        .collect();
    if capped.is_empty() {
        return Ok(Vec::new());
    }
    let names: Vec<String> = capped.iter().map(|(n, _)| n.clone()).collect();
    let queue_of = backend
        .job_queues(&names)
        .await?
        .into_iter()
        .filter_map(|(id, q)| Some((id, names.iter().position(|n| *n == q)?)))
        .collect();
    let limits: Vec<i64> = capped.iter().map(|(_, l)| *l).collect();
    Ok(merged.holds(&queue_of, &limits))
}

pub(super) fn delta(before: Option<i64>, after: Option<i64>) -> Option<i64> {
    Some(after? - before?)
}

pub(super) fn ratio(n: u64, d: u64) -> f64 {
    if d == 0 { 0.0 } else { n as f64 / d as f64 }
}

pub(super) fn resources(
    before: CpuSnapshot,
    after: CpuSnapshot,
    claim_calls: u64,
    table: crate::backend::TableStats,
    scheduling_delay: &hdrhistogram::Histogram<u64>,
) -> Resources {
    let client_cpu_s = after.client_cpu_ms.saturating_sub(before.client_cpu_ms) as f64 / 1000.0;
    Resources {
        client_cpu_s,
        client_cpu_us_per_claim: if claim_calls > 0 {
            client_cpu_s * 1e6 / claim_calls as f64
        } else {
            0.0
        },
        client_rss_bytes: after.client_rss_bytes,
        server_cpu_s: match (before.server_cpu_ms, after.server_cpu_ms) {
            (Some(b), Some(a)) => Some(a.saturating_sub(b) as f64 / 1000.0),
            _ => None,
        },
        scheduling_delay_p99_ms: scheduling_delay.value_at_quantile(0.99) as f64 / 1e3,
        scheduling_delay_max_ms: scheduling_delay.max() as f64 / 1e3,
        table,
    }
}
