//! The table-or-broker question in the verdict: a broker's technique, or a lock service
//! beside the table, against the SQL claim of the same run, on one ledger.

use super::figures::{RunFigures, fmt_ms, in_phase};
use crate::results::{CellResult, RunResult};
use crate::strategy::Strategy;

/// A broker's technique (or a lock service beside the table) against the SQL claim of
/// the same run (production where it ran, else the first SQL cell), at the largest
/// worker count both ran with one batch size and arrival rate: the table-or-broker
/// question, answered on one ledger. Once per technique and phase; a peer in the same
/// phase comes first (the same storage model, the same faults), and where a technique
/// ran in several phases each sentence names its phase.
pub(super) fn sentences(r: &RunResult, figures: RunFigures, out: &mut Vec<String>) {
    let broker = |c: &CellResult| !c.backend.engine().runs_sql || c.strategy.needs_lock_service();
    let mut told: Vec<(&str, &Strategy)> = Vec::new();
    let mut brokers: Vec<&CellResult> = r.cells.iter().filter(|c| broker(c)).collect();
    brokers.sort_by_key(|c| std::cmp::Reverse(c.workers));
    let phases_of = |s: &Strategy| {
        let mut p: Vec<&str> = brokers
            .iter()
            .filter(|c| c.strategy == *s)
            .map(|c| c.phase.as_str())
            .collect();
        p.sort_unstable();
        p.dedup();
        p.len()
    };
    for &b in &brokers {
        if told.contains(&(b.phase.as_str(), &b.strategy)) {
            continue;
        }
        let peers = r.cells.iter().filter(|c| {
            !broker(c)
                && (c.workers, c.batch_size, c.arrival_rate_per_s)
                    == (b.workers, b.batch_size, b.arrival_rate_per_s)
        });
        let here = |c: &&CellResult| c.phase == b.phase;
        let production = |c: &&CellResult| c.strategy == Strategy::PRODUCTION;
        let Some(t) = peers
            .clone()
            .find(|c| here(c) && production(c))
            .or_else(|| peers.clone().find(here))
            .or_else(|| peers.clone().find(production))
            .or_else(|| peers.clone().next())
        else {
            continue;
        };
        told.push((b.phase.as_str(), &b.strategy));
        let named = |c: &CellResult| match phases_of(&b.strategy) > 1 {
            true => format!("{}{}", c.strategy, in_phase(c)),
            false => c.strategy.to_string(),
        };
        let (fb, ft) = (figures.of(b), figures.of(t));
        let ms = |x: Option<f64>| x.map_or("–".into(), fmt_ms);
        let ratio = match ft.throughput > 0.0 {
            true => format!(" ({:.2}x)", fb.throughput / ft.throughput),
            false => String::new(),
        };
        // A run that outlived its lease ran a job the queue will hand out again: a
        // duplicate now where the job went back to its place, later where it went to a
        // stream's tail (so the duplicates alone would flatter the tail).
        let outlived = |c: &CellResult| -> i64 {
            c.trials
                .iter()
                .map(|t| t.reconciliation.db.unowned_executions)
                .sum()
        };
        // A compare-and-set's losers: the rejected writes its throughput paid for.
        let races: u64 = b.trials.iter().map(|t| t.counts.lost_races).sum();
        let leases = b.strategy.needs_lock_service();
        let raced = match (races, leases) {
            (0, _) => String::new(),
            (n, true) => {
                format!(" Its lock service refused {n} leases (candidates another worker held).")
            }
            (n, false) => format!(
                " Its compare-and-set lost {n} races (candidates another worker took first)."
            ),
        };
        // Said where either handed a job out again: what ended each job's holding.
        let again = match (redelivered(b), redelivered(t)) {
            (x, y) if x == "0" && y == "0" => String::new(),
            (x, y) => format!(" Handed out again: {x} against {y}."),
        };
        out.push(format!(
            "{} on {} against {} on {}, {} workers at batch {}: {:.0} against {:.0} jobs/s{ratio}, claim p99 {} against {}; duplicates {} against {} (runs that outlived their lease {} against {}), lost {} against {}.{raced}{again}",
            named(b),
            b.backend,
            named(t),
            t.backend,
            b.workers,
            b.batch_size,
            fb.throughput,
            ft.throughput,
            ms(fb.claim_p99_ms),
            ms(ft.claim_p99_ms),
            fb.duplicate_claims + fb.duplicate_executions,
            ft.duplicate_claims + ft.duplicate_executions,
            outlived(b),
            outlived(t),
            fb.lost,
            ft.lost
        ));
    }
}

/// A cell's jobs handed out again, by what ended their last holding (the ledger's
/// redeliveries over its trials), its causes named where there were any.
fn redelivered(c: &CellResult) -> String {
    let mut r = crate::ledger::Redeliveries::default();
    for t in &c.trials {
        let x = t.duplicates.ledger.redelivered;
        r.released += x.released;
        r.rescued += x.rescued;
        r.stranded += x.stranded;
        r.hung += x.hung;
        r.while_held += x.while_held;
    }
    let causes: Vec<String> = [
        (r.released, "released by their holder"),
        (r.rescued, "rescued after the lease"),
        (r.stranded, "after a crash or a lost connection"),
        (r.hung, "after a hang"),
        (r.while_held, "while another worker held them"),
    ]
    .iter()
    .filter(|(n, _)| *n > 0)
    .map(|(n, why)| format!("{n} {why}"))
    .collect();
    match causes.is_empty() {
        true => "0".into(),
        false => format!("{} ({})", r.total(), causes.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend_kind::BackendKind;

    fn told(r: &RunResult) -> Vec<String> {
        crate::analysis::RunAnalysis::of(r).verdict
    }

    /// The table-or-broker question: a broker's cell is set against the SQL claim at the
    /// same workers and batch (production preferred), once per broker technique.
    #[test]
    fn a_brokers_technique_is_set_against_the_sql_claim_of_the_same_pool() {
        let trial = |completed: u64| crate::results::TrialResult {
            measured_s: 1.0,
            completed_per_s: completed as f64,
            ..Default::default()
        };
        let streams = Strategy::builtin_named("redis-streams").unwrap();
        let cas = Strategy::builtin_named("redis-cas").unwrap();
        let lock = Strategy::builtin_named("lock-service").unwrap();
        let on = |s: Strategy, kind, workers, per_s| CellResult {
            backend: kind,
            index_layout: if kind == BackendKind::Redis {
                "stream"
            } else {
                "fetch-order"
            }
            .into(),
            ..CellResult::fetch_order(s, workers, 10, vec![trial(per_s)])
        };
        let r = RunResult {
            cells: vec![
                on(Strategy::NAIVE, BackendKind::Postgres, 16, 9000),
                on(Strategy::PRODUCTION, BackendKind::Postgres, 4, 1000),
                on(Strategy::PRODUCTION, BackendKind::Postgres, 16, 3000),
                on(streams.clone(), BackendKind::Redis, 4, 1500),
                on(streams, BackendKind::Redis, 16, 6000),
                on(cas, BackendKind::Redis, 16, 4500),
                on(lock.clone(), BackendKind::Postgres, 16, 2000),
            ],
            ..RunResult::default()
        };
        let mut r = r;
        r.cells[5].index_layout = "hash-by-due".into();
        r.cells[5].trials[0].counts.lost_races = 812;
        r.cells[5].trials[0].reconciliation.db.unowned_executions = 3;
        r.cells[6].trials[0].counts.lost_races = 40;
        let again = &mut r.cells[4].trials[0].duplicates.ledger.redelivered;
        (again.released, again.rescued) = (5, 2);
        r.cells[2].trials[0].duplicates.ledger.redelivered.stranded = 1;
        let said: Vec<String> = told(&r)
            .into_iter()
            .filter(|s| {
                s.starts_with("redis-") || s.starts_with("lock-service on postgres against")
            })
            .collect();
        assert_eq!(
            said,
            vec![
                "redis-streams on redis against production on postgres, 16 workers at batch 10: 6000 against 3000 jobs/s (2.00x), claim p99 – against –; duplicates 0 against 0 (runs that outlived their lease 0 against 0), lost 0 against 0. Handed out again: 7 (5 released by their holder, 2 rescued after the lease) against 1 (1 after a crash or a lost connection).",
                "redis-cas on redis against production on postgres, 16 workers at batch 10: 4500 against 3000 jobs/s (1.50x), claim p99 – against –; duplicates 0 against 0 (runs that outlived their lease 3 against 0), lost 0 against 0. Its compare-and-set lost 812 races (candidates another worker took first). Handed out again: 0 against 1 (1 after a crash or a lost connection).",
                "lock-service on postgres against production on postgres, 16 workers at batch 10: 2000 against 3000 jobs/s (0.67x), claim p99 – against –; duplicates 0 against 0 (runs that outlived their lease 0 against 0), lost 0 against 0. Its lock service refused 40 leases (candidates another worker held). Handed out again: 0 against 1 (1 after a crash or a lost connection).",
            ],
        );
    }

    /// A technique in two phases (two storage models) is set against the SQL claim of
    /// its own phase, once per phase, each sentence naming it.
    #[test]
    fn a_technique_in_two_phases_meets_the_claim_of_its_own_phase() {
        let lock = Strategy::builtin_named("lock-service").unwrap();
        let cell = |phase: &str, s: Strategy, per_s: u64| CellResult {
            phase: phase.into(),
            ..CellResult::fetch_order(
                s,
                16,
                1,
                vec![crate::results::TrialResult {
                    measured_s: 1.0,
                    completed_per_s: per_s as f64,
                    ..Default::default()
                }],
            )
        };
        let r = RunResult {
            cells: vec![
                cell("in-place", Strategy::PRODUCTION, 2000),
                cell("in-place", lock.clone(), 1000),
                cell("archive", Strategy::PRODUCTION, 1600),
                cell("archive", lock, 800),
            ],
            ..RunResult::default()
        };
        let said: Vec<String> = told(&r)
            .into_iter()
            .filter(|s| s.starts_with("lock-service in"))
            .map(|s| s[..s.find("jobs/s").unwrap()].to_string())
            .collect();
        assert_eq!(
            said,
            [
                "lock-service in in-place on postgres against production in in-place on postgres, 16 workers at batch 1: 1000 against 2000 ",
                "lock-service in archive on postgres against production in archive on postgres, 16 workers at batch 1: 800 against 1600 ",
            ]
        );
    }
}
