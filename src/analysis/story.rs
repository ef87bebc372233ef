//! The verdict: a few sentences computed from a run, each with its number, printed
//! before any table (terminal, summary.md, report.html). A sentence is written only
//! when the run holds the cells it needs, so every one of them is about this run.

use super::figures::{RunFigures, fmt_ms, in_phase};
use super::reruns::fails_over;
use super::{bootstrap, recommend, usl};
use crate::results::{CellResult, RunResult};
use crate::strategy::{Contention, Strategy};

/// Cells with the same backend, phase, layout and batch: one worker sweep per strategy.
fn groups(r: &RunResult) -> Vec<Vec<&CellResult>> {
    let mut out: Vec<Vec<&CellResult>> = Vec::new();
    for c in &r.cells {
        let same = |g: &&mut Vec<&CellResult>| {
            let f = g[0];
            f.backend == c.backend
                && f.server == c.server
                && f.phase == c.phase
                && f.index_layout == c.index_layout
                && f.batch_size == c.batch_size
                && f.arrival_rate_per_s == c.arrival_rate_per_s
        };
        match out.iter_mut().find(|g| same(g)) {
            Some(g) => g.push(c),
            None => out.push(vec![c]),
        }
    }
    out
}

/// A cell's strategy as a sentence names it: with its server when the run drove two of
/// one backend (`--versus-pg-bindir`).
fn named(c: &CellResult, s: &Strategy) -> String {
    match c.server {
        Some(_) => format!("{s} on {}", c.backend_label()),
        None => s.to_string(),
    }
}

/// The strategies of a group: production first, then the mistakes it is compared with.
fn strategies_in(g: &[&CellResult]) -> Vec<Strategy> {
    let mut v: Vec<Strategy> = g.iter().map(|c| c.strategy.clone()).collect();
    v.sort();
    v.dedup();
    v
}

/// The strategy comparison: the group (without arrivals) with the most strategies, at
/// its largest worker count.
fn strategy_sentences(r: &RunResult, figures: RunFigures, out: &mut Vec<String>) {
    let Some(g) = groups(r)
        .into_iter()
        .filter(|g| !g[0].has_arrivals())
        .rev()
        .max_by_key(|g| strategies_in(g).len())
    else {
        return;
    };
    let top = g.iter().map(|c| c.workers).max().unwrap_or(1);
    // Which cells the figures come from, when the run has others they could be from:
    // the verdict quoted the first layout's figures without naming it.
    let layouts: std::collections::BTreeSet<&str> =
        r.cells.iter().map(|c| c.index_layout.as_str()).collect();
    // Likewise the engine, on a run of several (a declared table on PostgreSQL and
    // MySQL) or of two server versions: the figures are one engine's.
    let engines: std::collections::BTreeSet<_> = r.cells.iter().map(|c| c.backend).collect();
    let mut which = Vec::new();
    if g[0].server.is_some() || engines.len() > 1 {
        which.push(g[0].backend_label());
    }
    if layouts.len() > 1 {
        which.push(format!("{}, batch {}", g[0].index_layout, g[0].batch_size));
    }
    let on = match which.is_empty() {
        true => String::new(),
        false => format!(" on {}", which.join(", ")),
    };
    let at = |s: Strategy| g.iter().find(|c| c.strategy == s && c.workers == top);
    let prod = at(Strategy::PRODUCTION).map(|c| figures.of(c));
    for s in strategies_in(&g) {
        let Some(c) = at(s.clone()) else { continue };
        let f = figures.of(c);
        let jobs: u64 = c.trials.iter().map(|t| t.counts.jobs_claimed).sum();
        let lost_races: u64 = c.trials.iter().map(|t| t.counts.lost_races).sum();
        let share = |part: u64, whole: u64| {
            if whole > 0 {
                part as f64 * 100.0 / whole as f64
            } else {
                0.0
            }
        };
        let p99_vs = match (f.claim_p99_ms, prod.and_then(|p| p.claim_p99_ms)) {
            (Some(a), Some(b)) if s != Strategy::PRODUCTION && b > 0.0 => {
                format!(", claim p99 {:.1}x production's", a / b)
            }
            _ => String::new(),
        };
        let line = match s.contention() {
            _ if s == Strategy::PRODUCTION => format!(
                "production{on}: {} duplicates, {} lost; {top} workers at batch {} completed {:.0} jobs/s with claim p99 {}.",
                f.duplicate_claims + f.duplicate_executions,
                f.lost,
                c.batch_size,
                f.throughput,
                f.claim_p99_ms.map_or("–".into(), fmt_ms)
            ),
            Contention::Ignores => format!(
                "{s}{on}: {:.0}% of the jobs it claimed were held by another worker at the time, at {top} workers ({} duplicate claims, {} duplicate executions){p99_vs}.",
                share(f.duplicate_claims, jobs),
                f.duplicate_claims,
                f.duplicate_executions
            ),
            Contention::Waits => format!(
                "{s}{on}: {:.0}% of worker time in lock waits at {top} workers, {:.0} jobs/s{p99_vs}.",
                f.lock_wait_share * 100.0,
                f.throughput
            ),
            Contention::Rechecks if s.needs_lock_service() => format!(
                "{s}{on}: {:.0}% of the leases it asked for were held by another worker at {top} workers, {:.0} jobs/s, {} duplicate claims and {} duplicate executions{p99_vs}.",
                share(lost_races, lost_races + jobs),
                f.throughput,
                f.duplicate_claims,
                f.duplicate_executions
            ),
            Contention::Rechecks => format!(
                "{s}{on}: {:.0}% of its row updates lost the race and changed nothing at {top} workers, {:.0} jobs/s{p99_vs}.",
                share(lost_races, lost_races + jobs),
                f.throughput
            ),
            Contention::Skips => format!(
                "{s}{on}: {} duplicates, {} lost; {:.0} jobs/s at {top} workers{p99_vs}.",
                f.duplicate_claims + f.duplicate_executions,
                f.lost,
                f.throughput
            ),
        };
        out.push(line);
    }
}

/// Scaling of production (else the first strategy) in the richest worker sweep, with
/// the USL fit when there are enough worker counts.
fn scaling_sentence(r: &RunResult, figures: RunFigures, out: &mut Vec<String>) {
    let best = groups(r)
        .into_iter()
        .filter(|g| !g[0].has_arrivals())
        .filter_map(|g| {
            let s = if g.iter().any(|c| c.strategy == Strategy::PRODUCTION) {
                Strategy::PRODUCTION
            } else {
                g[0].strategy.clone()
            };
            let mut pts: Vec<(u32, f64)> = g
                .iter()
                .filter(|c| c.strategy == s)
                .map(|c| (c.workers, figures.of(c).throughput))
                .collect();
            pts.sort_by_key(|p| p.0);
            let who = named(g[0], &s);
            (pts.len() > 1).then_some((who, g[0].batch_size, strategies_in(&g).len(), pts))
        })
        // The richest sweep; among equals, the head-to-head group, then the first.
        .rev()
        .max_by_key(|(_, _, n, pts)| (pts.len(), *n));
    let Some((s, batch, _, pts)) = best else {
        return;
    };
    let (first, last) = (pts[0], pts[pts.len() - 1]);
    let mut line = format!(
        "{s} scales from {:.0} jobs/s at {} worker{} to {:.0} at {} ({:.1}x for {}x the workers, batch {batch})",
        first.1,
        first.0,
        if first.0 == 1 { "" } else { "s" },
        last.1,
        last.0,
        if first.1 > 0.0 { last.1 / first.1 } else { 0.0 },
        last.0 / first.0.max(1)
    );
    if let Some(peak) = past_peak(&pts) {
        line.push_str(&peak);
    }
    let fit_pts: Vec<(f64, f64)> = pts.iter().map(|&(n, x)| (n as f64, x)).collect();
    match usl::fit(&fit_pts) {
        Some(f) => line.push_str(&format!(
            "; USL fit: contention σ = {:.3}, coherency κ = {:.4}, R² = {:.2}{}.",
            f.sigma,
            f.kappa,
            f.r_squared,
            f.peak_workers
                .map(|p| format!(", throughput peaks near {p:.0} workers"))
                .unwrap_or_default()
        )),
        None => line.push('.'),
    }
    out.push(line);
}

/// ", past its peak of 2305 at 4 workers" when a smaller pool of the sweep (`pts`, by
/// worker count) beat the largest one by more than the knee's gain: "scales from 1 to
/// 16" alone would hide that 16 workers do less than 4.
fn past_peak(pts: &[(u32, f64)]) -> Option<String> {
    let last = *pts.last()?;
    let peak = pts.iter().copied().max_by(|a, b| a.1.total_cmp(&b.1))?;
    (peak.0 != last.0 && peak.1 > last.1 * (1.0 + super::recommend::KNEE_GAIN))
        .then(|| format!(", past its peak of {:.0} at {} workers", peak.1, peak.0))
}

/// The phase whose production cells (without arrivals) span the most batch sizes: the
/// one batch sweep the verdict and the heatmap read, so cells of phases with other
/// settings (a claim-only sweep beside a full lifecycle) are never averaged together.
pub fn batch_sweep_phase(r: &RunResult) -> Option<String> {
    let prod = || {
        r.cells
            .iter()
            .filter(|c| c.strategy == Strategy::PRODUCTION && !c.has_arrivals())
    };
    let mut phases: Vec<&str> = prod().map(|c| c.phase.as_str()).collect();
    phases.dedup();
    phases
        .into_iter()
        .rev()
        .max_by_key(|p| {
            let mut b: Vec<u32> = prod()
                .filter(|c| c.phase == *p)
                .map(|c| c.batch_size)
                .collect();
            b.sort_unstable();
            b.dedup();
            b.len()
        })
        .map(str::to_string)
}

/// Batch sizes: production's best batch against its smallest, at the largest workers.
fn batch_sentence(r: &RunResult, figures: RunFigures, out: &mut Vec<String>) {
    let Some(phase) = batch_sweep_phase(r) else {
        return;
    };
    let cells: Vec<&CellResult> = r
        .cells
        .iter()
        .filter(|c| c.strategy == Strategy::PRODUCTION && !c.has_arrivals() && c.phase == phase)
        .collect();
    let top = cells.iter().map(|c| c.workers).max().unwrap_or(0);
    let mut at_top: Vec<(u32, f64)> = cells
        .iter()
        .filter(|c| c.workers == top)
        .map(|c| (c.batch_size, figures.of(c).throughput))
        .collect();
    at_top.sort_by_key(|p| p.0);
    at_top.dedup_by_key(|p| p.0);
    if at_top.len() < 2 {
        return;
    }
    let small = at_top[0];
    let best = at_top
        .iter()
        .copied()
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .expect("two or more");
    out.push(format!(
        "batch size: at {top} workers production takes {:.0} jobs/s with batch {} against {:.0} with batch {} ({:.1}x).",
        best.1,
        best.0,
        small.1,
        small.0,
        if small.1 > 0.0 { best.1 / small.1 } else { 0.0 }
    ));
}

/// Arrival phases: who kept up with the offered rate and who fell behind.
fn arrival_sentences(r: &RunResult, figures: RunFigures, out: &mut Vec<String>) {
    for c in r
        .cells
        .iter()
        .filter(|c| c.has_arrivals() && !r.rate_searches.iter().any(|s| s.phase == c.phase))
        // A timeline's cell is told phase by phase (analysis/drift.rs): its mean rate
        // mixes phases offered more and less than the pool can do by design.
        .filter(|c| c.trials.iter().all(|t| t.timeline.is_empty()))
    {
        let f = figures.of(c);
        let Some(rate) = c.arrival_rate_per_s else {
            continue;
        };
        let oldest = f
            .oldest_pending_max_ms
            .map(|m| format!(", oldest pending at most {}", fmt_ms(m)))
            .unwrap_or_default();
        let wait = f
            .queue_wait_p99_ms
            .map(|m| format!(", queue wait p99 {}", fmt_ms(m)))
            .unwrap_or_default();
        // Kept up: what a rate-search step would call held (the run's queue-wait and
        // oldest-pending SLOs, or the search's default), with the producer on time.
        let kept = super::rate_search::step_holds(c, &r.slos).held;
        // A derived rate says what it was derived from: the host's own measured rate.
        let origin = c
            .arrival_rate_from
            .as_ref()
            .map(|o| format!(" ({}, {:.0}/s)", o.how, o.measured_per_s))
            .unwrap_or_default();
        out.push(format!(
            "{} with {} worker{} {} {rate:.0} arrivals/s{origin}: {:.0} jobs/s{wait}{oldest}.",
            named(c, &c.strategy),
            c.workers,
            if c.workers == 1 { "" } else { "s" },
            if kept {
                "keeps up with"
            } else {
                "falls behind"
            },
            f.throughput
        ));
    }
}

fn search_sentences(r: &RunResult, out: &mut Vec<String>) {
    for s in &r.rate_searches {
        out.push(match s.sustained_per_s {
            Some(x) => format!(
                "{} with {} worker{} sustains {}{x:.0} arrivals/s ({} steps).",
                s.strategy,
                s.workers,
                if s.workers == 1 { "" } else { "s" },
                if s.bracketed() { "" } else { "at least " },
                s.steps.len()
            ),
            None => format!(
                "{} with {} worker{} sustained none of the rates tried (lowest {:.0}/s).",
                s.strategy,
                s.workers,
                if s.workers == 1 { "" } else { "s" },
                s.steps
                    .iter()
                    .map(|t| t.rate_per_s)
                    .fold(f64::MAX, f64::min)
            ),
        });
    }
}

/// Every cell whose claims returned more rows than the batch asked for: a correctness
/// failure (exit 1), so it is said in the verdict and not only among the warnings, with
/// the plan that did it where one was sampled.
fn over_claim_sentences(r: &RunResult, out: &mut Vec<String>) {
    for c in &r.cells {
        let claims: u64 = c.trials.iter().map(|t| t.counts.over_claims).sum();
        if claims == 0 {
            continue;
        }
        let most = c
            .trials
            .iter()
            .flat_map(|t| &t.warnings)
            .filter_map(|w| match w {
                crate::warnings::Warning::OverClaims { most, .. } => Some(*most),
                _ => None,
            })
            .max();
        let phase = in_phase(c);
        let plan = match c.trials.iter().find_map(|t| t.plan.as_ref()) {
            Some(p) => format!("; its plan: {}", p.shape),
            None => "; no plan was sampled".to_string(),
        };
        out.push(format!(
            "over-claimed: {} at {} workers, batch {}{phase}: {claims} claims returned more rows than the batch asked for{}, so its limit does not bound what it claims{plan}.",
            c.strategy,
            c.workers,
            c.batch_size,
            most.map_or(String::new(), |m| format!(" (up to {m})")),
        ));
    }
}

/// Per cell whose trial held a snapshot open, against the same cell of the run without
/// one (another block: same backend, strategy, layout, workers, batch and arrivals): the
/// same seconds of both trials, so the hold's cost is a ratio measured side by side
/// rather than a figure that depends on the host.
fn hold_sentences(r: &RunResult, out: &mut Vec<String>) {
    for c in &r.cells {
        let Some((t, h)) = c
            .trials
            .iter()
            .find_map(|t| t.snapshot_held.as_ref().map(|h| (t, h)))
        else {
            continue;
        };
        let Some(base) = r.cells.iter().find(|b| {
            b.phase != c.phase
                && (b.backend, b.strategy.clone(), b.workers, b.batch_size)
                    == (c.backend, c.strategy.clone(), c.workers, c.batch_size)
                && b.index_layout == c.index_layout
                && b.arrival_rate_per_s == c.arrival_rate_per_s
                && b.is_claim_only() == c.is_claim_only()
                && b.trials.iter().all(|t| t.snapshot_held.is_none())
        }) else {
            continue;
        };
        let Some(bt) = base.trials.first() else {
            continue;
        };
        fn series(t: &crate::results::TrialResult, claim_only: bool) -> &[u32] {
            if claim_only {
                &t.claimed_series
            } else {
                &t.completed_series
            }
        }
        let claim_only = c.is_claim_only();
        // Whole seconds inside the hold.
        let (from, to) = (h.from_s.ceil() as usize, h.to_s.floor() as usize);
        let rate = |s: &[u32]| {
            let w: Vec<u32> = s
                .iter()
                .copied()
                .skip(from)
                .take(to.saturating_sub(from))
                .collect();
            (!w.is_empty()).then(|| f64::from(w.iter().sum::<u32>()) / w.len() as f64)
        };
        let dead = |t: &crate::results::TrialResult| {
            t.table_series
                .iter()
                .filter(|s| s.at_s >= h.from_s && s.at_s <= h.to_s)
                .map(|s| s.dead_tuples)
                .max()
        };
        let ratio = |a: f64, b: f64| {
            if b > 0.0 {
                format!(" ({:.2}x)", a / b)
            } else {
                String::new()
            }
        };
        let mut parts = Vec::new();
        if let (Some(a), Some(b)) = (rate(series(t, claim_only)), rate(series(bt, claim_only))) {
            parts.push(format!(
                "{} {a:.0}/s against {b:.0}/s in the same seconds without it{}",
                if c.is_claim_only() {
                    "claims"
                } else {
                    "completions"
                },
                ratio(a, b)
            ));
        }
        if let (Some(a), Some(b)) = (dead(t), dead(bt)) {
            parts.push(format!(
                "dead tuples up to {a} against {b}{}",
                ratio(a as f64, b as f64)
            ));
        }
        // The claim's plan sample, when the held trial took it during the hold: what one
        // claim cost with the snapshot open against without it.
        fn sampled(x: &crate::results::TrialResult) -> Option<&crate::results::PlanSample> {
            x.plan.as_ref().filter(|p| p.analyzed)
        }
        if let (Some(a), Some(b)) = (sampled(t), sampled(bt))
            && a.at_s >= h.from_s
            && a.at_s <= h.to_s
        {
            // Buffers first: a count of pages, where one sample's time on a saturated
            // host is mostly its wait for a core.
            let (ab, bb) = (a.shared_hit + a.shared_read, b.shared_hit + b.shared_read);
            parts.push(format!(
                "the claim sampled during the hold touched {ab} buffers against {bb}{} and ran {} against {}",
                ratio(ab as f64, bb as f64),
                fmt_ms(a.execution_ms),
                fmt_ms(b.execution_ms),
            ));
        }
        let p99 = |x: &crate::results::TrialResult| x.claim_latency.p99_us as f64 / 1e3;
        parts.push(format!(
            "claim p99 {} against {}{}",
            fmt_ms(p99(t)),
            fmt_ms(p99(bt)),
            ratio(p99(t), p99(bt))
        ));
        let recovery = h
            .recovery_s
            .map(|s| format!("; oldest pending back to its level {s:.1} s after the release"))
            .unwrap_or_default();
        out.push(format!(
            "a snapshot held open from {:.0} s to {:.0} s ({} against {}): {}{recovery}.",
            h.from_s,
            h.to_s,
            c.phase,
            base.phase,
            parts.join("; ")
        ));
    }
}

/// Per cell that failed over: the acknowledged work the new primary did not have
/// (summed over its trials), what ran twice because of it, how far behind the standby
/// was when the primary went, and how long writes and throughput took to come back.
/// A cell that lost nothing says so, with the standby's lag, so that "nothing lost"
/// reads as measured and not as a window too small to hit.
fn failover_sentences(r: &RunResult, out: &mut Vec<String>) {
    for c in r.cells.iter().filter(|c| fails_over(c)) {
        let events: Vec<_> = c.trials.iter().flat_map(|t| &t.failovers).collect();
        let mut lost = crate::results::FailoverLosses::default();
        for e in &events {
            let l = e.lost;
            lost.completions += l.completions;
            lost.rerun += l.rerun;
            lost.effects += l.effects;
            lost.claims += l.claims;
            lost.inserts += l.inserts;
        }
        let reruns: u64 = c
            .trials
            .iter()
            .map(|t| t.duplicates.ledger.duplicate_executions)
            .sum();
        let n = events.len();
        let level = super::durability::commit_level(r, c)
            .map(|l| format!(" (synchronous_commit = {l})"))
            .unwrap_or_default();
        let lag = events
            .iter()
            .filter_map(|e| e.standby_before.as_ref()?.replay_lag_ms)
            .fold(None, |m: Option<f64>, l| Some(m.map_or(l, |m| m.max(l))));
        let lag = lag.map_or("no replay lag reading".into(), |l| {
            format!("the standby at most {} behind in replay", fmt_ms(l))
        });
        let outage = events.iter().map(|e| e.max_outage_s).fold(0.0, f64::max);
        let back: Vec<f64> = events.iter().filter_map(|e| e.recovery_s).collect();
        let back = match back.iter().copied().reduce(f64::max) {
            Some(s) if back.len() == n => {
                format!("; completions back to their level within {s:.1} s")
            }
            _ => "; completions did not come back to their level within the trial".into(),
        };
        let head = format!(
            "failover under {} at {} worker{}{}{level}, {n} trial{}",
            c.strategy,
            c.workers,
            if c.workers == 1 { "" } else { "s" },
            in_phase(c),
            if n == 1 { "" } else { "s" },
        );
        let cut = reruns.saturating_sub(lost.rerun);
        let cut = if cut == 0 {
            String::new()
        } else {
            format!(
                "; {cut} run{} repeated one whose completion the failover cut before it was acknowledged (at-least-once, not a loss)",
                if cut == 1 { "" } else { "s" }
            )
        };
        let body = if lost.total() == 0 {
            format!(
                "the new primary had every acknowledged claim, effect, completion and insert ({lag} when the primary went){cut}"
            )
        } else {
            format!(
                "the new primary lacked {} acknowledged completion{} ({} of them ran again), {} effect{}, {} claim{} and {} insert{} ({lag} when the primary went){cut}",
                lost.completions,
                if lost.completions == 1 { "" } else { "s" },
                lost.rerun,
                lost.effects,
                if lost.effects == 1 { "" } else { "s" },
                lost.claims,
                if lost.claims == 1 { "" } else { "s" },
                lost.inserts,
                if lost.inserts == 1 { "" } else { "s" },
            )
        };
        out.push(format!(
            "{head}: {body}; workers wrote again within {outage:.2} s{back}."
        ));
    }
}

/// The verdict, most important first: a paired block's answer, then what went wrong,
/// then what the run found.
pub(super) fn sentences(
    r: &RunResult,
    figures: RunFigures,
    paired: &super::paired::Paired,
) -> Vec<String> {
    let mut out = Vec::new();
    super::paired::sentences(paired, &mut out);
    failover_sentences(r, &mut out);
    over_claim_sentences(r, &mut out);
    super::advisory::sentences(r, &mut out);
    super::reruns::sentences(r, figures, &mut out);
    hold_sentences(r, &mut out);
    out.extend(super::drift::sentences(r));
    super::queues::sentences(r, &mut out);
    strategy_sentences(r, figures, &mut out);
    super::layouts::sentences(r, figures, &mut out);
    super::brokers::sentences(r, figures, &mut out);
    super::durability::sentences(r, &mut out);
    out.extend(super::network::sentences(r));
    out.extend(super::cluster::sentences(r));
    out.extend(super::shards::sentences(r));
    out.extend(super::pooler::sentences(r));
    out.extend(super::storage::sentences(r));
    out.extend(super::storage::index_sentences(r));
    out.extend(super::cleanup::sentences(r));
    scaling_sentence(r, figures, &mut out);
    batch_sentence(r, figures, &mut out);
    arrival_sentences(r, figures, &mut out);
    search_sentences(r, &mut out);
    // Sizing answers belong to phases with arrivals, for strategies whose promises
    // held (recommend::meaningful); the Recommendation section says what it left out.
    for rec in recommend::meaningful(r, &r.slos).0 {
        let arrivals = r
            .cells
            .iter()
            .any(|c| c.phase == rec.phase && c.has_arrivals());
        if arrivals && !r.slos.is_empty() {
            out.push(format!("recommended for {}", rec.sentence(&r.slos)));
        }
    }
    for c in &r.cells {
        if let Some(why) = bootstrap::disagreement(c) {
            out.push(format!(
                "unsteady: {} {} w={} b={}: {why}; read its numbers with care.",
                c.strategy, c.index_layout, c.workers, c.batch_size
            ));
        }
    }
    let rerun: Vec<&crate::results::TrialResult> = r
        .cells
        .iter()
        .flat_map(|c| &c.trials)
        .filter(|t| !t.rerun_because.is_empty())
        .collect();
    if let Some(first) = rerun.first() {
        out.push(format!(
            "{} trial{} ran a second time because the host disturbed the first ({}); the second run's numbers are the ones reported.",
            rerun.len(),
            if rerun.len() == 1 { "" } else { "s" },
            first.rerun_because[0]
        ));
    }
    let warned = r
        .cells
        .iter()
        .flat_map(|c| &c.trials)
        .filter(|t| !t.warnings.is_empty())
        .count();
    if warned > 0 {
        out.push(format!(
            "{warned} {} quality warnings: see Warnings before trusting them.",
            if warned == 1 {
                "trial carries"
            } else {
                "trials carry"
            }
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::durability::at_level;
    use super::*;

    /// The verdict as the run's analysis gives it.
    fn told(r: &RunResult) -> Vec<String> {
        crate::analysis::RunAnalysis::of(r).verdict
    }

    #[test]
    fn a_failover_is_told_with_what_it_lost_or_with_the_lag_it_lost_nothing_at() {
        use crate::results::{FailoverEvent, FailoverLosses, StandbyState};
        let failed_over = |level: &str, lost: FailoverLosses, lag: f64| {
            let mut c = at_level(Some(level), 4, 1000.0);
            c.trials[0].failovers.push(FailoverEvent {
                at_s: 3.0,
                promote_s: 0.2,
                standby_before: Some(StandbyState {
                    replay_lag_ms: Some(lag),
                    ..Default::default()
                }),
                max_outage_s: 0.25,
                recovery_s: Some(2.0),
                lost,
            });
            c.trials[0].duplicates.ledger.duplicate_executions = lost.rerun + 3;
            c
        };
        let lost = FailoverLosses {
            completions: 15,
            rerun: 15,
            effects: 17,
            ..Default::default()
        };
        let r = RunResult {
            cells: vec![
                failed_over("local", lost, 13.5),
                failed_over("on", FailoverLosses::default(), 12.25),
            ],
            ..RunResult::default()
        };
        let mut out = Vec::new();
        failover_sentences(&r, &mut out);
        assert_eq!(
            out,
            [
                "failover under production at 4 workers in local (synchronous_commit = local), 1 trial: the new primary lacked 15 acknowledged completions (15 of them ran again), 17 effects, 0 claims and 0 inserts (the standby at most 14 ms behind in replay when the primary went); 3 runs repeated one whose completion the failover cut before it was acknowledged (at-least-once, not a loss); workers wrote again within 0.25 s; completions back to their level within 2.0 s.",
                "failover under production at 4 workers in on (synchronous_commit = on), 1 trial: the new primary had every acknowledged claim, effect, completion and insert (the standby at most 12 ms behind in replay when the primary went); 3 runs repeated one whose completion the failover cut before it was acknowledged (at-least-once, not a loss); workers wrote again within 0.25 s; completions back to their level within 2.0 s."
            ]
        );
        // The rescue sentence leaves a failover's re-runs to this one.
        let mut out = Vec::new();
        super::super::reruns::sentences(&r, RunFigures::new(&[], &[]), &mut out);
        assert!(out.is_empty(), "{out:?}");
    }

    #[test]
    fn an_over_claiming_cell_is_named_in_the_verdict_with_its_plan() {
        let mut t = crate::results::TrialResult::default();
        t.counts.over_claims = 16;
        t.warnings.push(crate::warnings::Warning::OverClaims {
            claims: 16,
            most: 691,
            batch: 10,
        });
        let mut c = CellResult::fetch_order(Strategy::PRODUCTION, 8, 10, vec![t]);
        c.phase = "nested-loops".into();
        let r = RunResult {
            cells: vec![c],
            ..RunResult::default()
        };
        let first = told(&r).remove(0);
        assert_eq!(
            first,
            "over-claimed: production at 8 workers, batch 10 in nested-loops: 16 claims returned more rows than the batch asked for (up to 691), so its limit does not bound what it claims; no plan was sampled."
        );
    }

    #[test]
    fn a_held_snapshot_is_set_against_the_same_cell_without_it() {
        use crate::results::{SnapshotHold, TableSample, TrialResult};
        let trial = |per_s: [u32; 4], dead: [i64; 4], held: bool| {
            let mut t = TrialResult {
                completed_series: per_s.to_vec(),
                table_series: dead
                    .iter()
                    .enumerate()
                    .map(|(i, &d)| TableSample {
                        at_s: i as f64 + 0.5,
                        dead_tuples: d,
                        ..Default::default()
                    })
                    .collect(),
                snapshot_held: held.then_some(SnapshotHold {
                    from_s: 1.0,
                    to_s: 3.0,
                    recovery_s: Some(0.5),
                    ..Default::default()
                }),
                ..Default::default()
            };
            let mut h = crate::metrics::new_histogram();
            h.record(if held { 8_000 } else { 2_000 }).unwrap();
            t.claim_latency = crate::metrics::HistogramSummary::from_histogram(&h);
            t
        };
        let cell = |phase: &str, t| CellResult {
            phase: phase.into(),
            claim_only: Some(false),
            ..CellResult::fetch_order(Strategy::PRODUCTION, 8, 10, vec![t])
        };
        let r = RunResult {
            cells: vec![
                cell(
                    "saturated",
                    trial([900, 1000, 1000, 900], [10, 20, 20, 10], false),
                ),
                cell(
                    "saturated-held",
                    trial([900, 250, 250, 900], [10, 800, 1600, 10], true),
                ),
            ],
            ..RunResult::default()
        };
        assert_eq!(
            told(&r)[0],
            "a snapshot held open from 1 s to 3 s (saturated-held against saturated): completions 250/s against 1000/s in the same seconds without it (0.25x); dead tuples up to 1600 against 20 (80.00x); claim p99 8.0 ms against 2.0 ms (4.00x); oldest pending back to its level 0.5 s after the release."
        );
    }

    #[test]
    fn queues_that_part_ways_and_runs_without_duplicate_claims_are_said() {
        use crate::results::{QueueResult, TrialResult};
        let queue = |name: &str, ages: &[f64]| QueueResult {
            queue: name.into(),
            completed: 0,
            completed_per_s: 0.0,
            oldest_pending_p99_ms: None,
            oldest_pending_max_ms: ages.iter().copied().reduce(f64::max),
            oldest_pending_series: ages
                .iter()
                .enumerate()
                .map(|(i, a)| (i as f64, Some(*a)))
                .collect(),
        };
        let mut t = TrialResult {
            queues: vec![
                queue("bulk", &[100.0, 4000.0, 8900.0]),
                queue("orders", &[5.0, 22.0, 3.0]),
            ],
            ..Default::default()
        };
        t.duplicates.ledger.duplicate_executions = 3;
        let mut c = CellResult::fetch_order(Strategy::PRODUCTION, 8, 1, vec![t]);
        c.arrival_rate_per_s = Some(200.0);
        c.claim_only = Some(false);
        let r = RunResult {
            cells: vec![c],
            ..RunResult::default()
        };
        let s = told(&r);
        assert!(
            s.iter().any(|x| x == "per queue, production at 8 workers: `bulk` falls behind (oldest pending 8.9 s and still climbing at the end) while `orders` keeps up (oldest pending at most 22 ms)."),
            "{s:?}"
        );
        assert!(
            s.iter()
                .any(|x| x
                    .starts_with("production at 8 workers: 0 duplicate claims, yet 3 job runs")),
            "{s:?}"
        );
    }

    #[test]
    fn a_run_of_one_strategy_has_its_line_and_several_layouts_are_named() {
        let cell = |s: Strategy, layout: &str| CellResult {
            index_layout: layout.into(),
            ..CellResult::fetch_order(s, 4, 5, vec![Default::default()])
        };
        let one = RunResult {
            cells: vec![cell(Strategy::PRODUCTION, "fetch-order")],
            ..RunResult::default()
        };
        assert!(
            told(&one)
                .iter()
                .any(|s| s.starts_with("production: 0 duplicates, 0 lost; 4 workers")),
            "{:?}",
            told(&one)
        );
        // Two layouts: the figures quoted are the first group's, and it says which.
        let two = RunResult {
            cells: vec![
                cell(Strategy::PRODUCTION, "pk-only"),
                cell(Strategy::NAIVE, "pk-only"),
                cell(Strategy::PRODUCTION, "fetch-order"),
            ],
            ..RunResult::default()
        };
        let said = told(&two);
        assert!(
            said.iter()
                .any(|s| s.starts_with("production on pk-only, batch 5: "))
                && said
                    .iter()
                    .any(|s| s.starts_with("naive on pk-only, batch 5: ")),
            "{said:?}"
        );
        // Two engines (a declared table on both): the figures are one engine's, named.
        let mysql = CellResult {
            backend: crate::backend_kind::BackendKind::Mysql,
            ..cell(Strategy::NAIVE, "fetch-order")
        };
        let engines = RunResult {
            cells: vec![cell(Strategy::PRODUCTION, "fetch-order"), mysql],
            ..RunResult::default()
        };
        let said = told(&engines);
        assert!(
            said.iter()
                .any(|s| s.starts_with("production on postgres: 0 duplicates")),
            "{said:?}"
        );
    }

    #[test]
    fn a_trial_run_again_says_so_in_the_verdict() {
        let t = crate::results::TrialResult {
            rerun_because: vec!["the worker threads woke up to 40.0 ms late".into()],
            ..Default::default()
        };
        let r = RunResult {
            cells: vec![CellResult::fetch_order(Strategy::PRODUCTION, 4, 1, vec![t])],
            ..RunResult::default()
        };
        assert!(
            told(&r).iter().any(|s| s.starts_with(
                "1 trial ran a second time because the host disturbed the first (the worker threads woke up"
            )),
            "{:?}",
            told(&r)
        );
    }

    #[test]
    fn a_sweep_past_its_peak_says_where_the_peak_was() {
        let quickstart = [(1, 856.0), (4, 2305.0), (16, 1992.0)];
        assert_eq!(
            past_peak(&quickstart).as_deref(),
            Some(", past its peak of 2305 at 4 workers")
        );
        // Still climbing, or within the knee's 5% of the peak: nothing to add.
        assert_eq!(past_peak(&[(1, 856.0), (4, 2305.0), (16, 2400.0)]), None);
        assert_eq!(past_peak(&[(1, 856.0), (4, 2305.0), (16, 2250.0)]), None);
        assert_eq!(past_peak(&[]), None);
    }
}
