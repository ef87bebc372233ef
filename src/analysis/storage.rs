//! Storage models side by side (`storage`): cells that differ only in where finished
//! rows go, each read through its own timeline's pin against its own steady phase, so
//! which model degraded least is a ratio measured on the same host in the same run.

use crate::metric::fmt_ms;
use crate::results::{CellResult, HoldPhase, RunResult, TimelineReading};

/// The archive move, the default a cell records no name for.
const DEFAULT: &str = "archive-move";

fn model(c: &CellResult) -> &str {
    c.storage.as_deref().unwrap_or(DEFAULT)
}

/// A cell's pinned phase against its steady one: (jobs/s ratio, claim p99 ratio, the
/// pin's figures).
type ThroughThePin<'a> = (f64, Option<f64>, &'a HoldPhase);

/// Whether a cell's first phase took what it was offered: a model that fell behind
/// before the pin is measured against an overloaded baseline, and its ratios through
/// the pin say little. `Some((jobs/s, offered))` when it fell behind.
fn behind_when_steady(c: &CellResult) -> Option<(f64, f64)> {
    let steady = c.trials.first()?.timeline.first()?;
    let (done, offered) = (steady.figures.jobs_per_s, steady.offered_per_s);
    (offered > 0.0 && done < offered * super::drift::KEPT_UP_SHARE).then_some((done, offered))
}

/// What a cell's pinned phase completed and was offered, jobs/s: cells that were offered
/// the same load compare on what they carried through the pin.
fn carried(c: &CellResult) -> Option<(f64, f64)> {
    let pinned = c
        .trials
        .first()?
        .timeline
        .iter()
        .find(|p| p.pin.is_some())?;
    (pinned.offered_per_s > 0.0).then_some((pinned.figures.jobs_per_s, pinned.offered_per_s))
}

/// A cell's first trial's pinned phase against its first phase.
fn through_the_pin(c: &CellResult) -> Option<ThroughThePin<'_>> {
    let phases: &[TimelineReading] = &c.trials.first()?.timeline;
    let steady = &phases.first()?.figures;
    let pinned = &phases.iter().find(|p| p.pin.is_some())?.figures;
    if steady.jobs_per_s <= 0.0 {
        return None;
    }
    let p99 = match (pinned.claim_p99_us, steady.claim_p99_us) {
        (Some(p), Some(s)) if s > 0 => Some(p as f64 / s as f64),
        _ => None,
    };
    Some((pinned.jobs_per_s / steady.jobs_per_s, p99, pinned))
}

/// A model that fell behind before the pin, said so (it is then left out of the
/// least-degraded reading).
fn behind_note(c: &CellResult) -> String {
    match behind_when_steady(c) {
        Some((done, offered)) => format!(
            " — it fell behind already in its steady phase ({done:.0} of {offered:.0} jobs/s offered), so its ratios are against an overloaded baseline"
        ),
        None => String::new(),
    }
}

/// What the cell's model asked of its cleanup job: the rows it removed per second and
/// what its statements cost the claim while they ran (empty without a job).
fn needed(c: &CellResult) -> String {
    let Some(job) = super::cleanup::of(c) else {
        return String::new();
    };
    if job.removed_per_s < 0.5 {
        return ", nothing for the cleanup job to remove".into();
    }
    let cost = job.claim_p99_ratio().map_or(String::new(), |x| {
        format!(", claim p99 ×{x:.2} while it ran")
    });
    let why = match model(c) {
        "partitioned" => " (a partition goes only once nothing in it is live)",
        _ => "",
    };
    let left = job.past_retention_end.map_or(String::new(), |n| {
        format!(", {n} finished rows past retention at the end{why}")
    });
    format!(
        ", the cleanup job removing {:.0} rows/s{cost}{left}",
        job.removed_per_s
    )
}

/// One sentence per group of cells (backend, strategy, layout, workers, batch) that ran
/// more than one storage model through a pin.
pub fn sentences(r: &RunResult) -> Vec<String> {
    let mut out = Vec::new();
    let key = |c: &CellResult| {
        (
            c.backend,
            c.strategy.clone(),
            c.index_layout.clone(),
            c.workers,
            c.batch_size,
        )
    };
    let mut told = Vec::new();
    for c in &r.cells {
        if told.contains(&key(c)) {
            continue;
        }
        let group: Vec<(&CellResult, ThroughThePin<'_>)> = r
            .cells
            .iter()
            .filter(|o| key(o) == key(c))
            .filter_map(|o| Some((o, through_the_pin(o)?)))
            .collect();
        let mut models: Vec<&str> = group.iter().map(|(o, _)| model(o)).collect();
        models.dedup();
        if models.len() < 2 {
            continue;
        }
        told.push(key(c));
        // The hot table with its indexes at the pin's end, each against the first model's.
        let bytes = |pin: &HoldPhase| Some(pin.table_bytes? + pin.index_bytes?);
        let (first, first_bytes) = (model(group[0].0), bytes(group[0].1.2));
        let each: Vec<String> = group
            .iter()
            .map(|(o, (jobs, p99, pin))| {
                let mb = |b: i64| b as f64 / 1_048_576.0;
                let against = match (bytes(pin), first_bytes) {
                    (Some(b), Some(f)) if model(o) != first && f > 0 => {
                        format!(" (×{:.2} {first}'s)", b as f64 / f as f64)
                    }
                    _ => String::new(),
                };
                // What the pin left behind: dead tuples (PostgreSQL) or the undo
                // history InnoDB could not purge (MySQL, MariaDB).
                let garbage = match (pin.dead_tuples_max, pin.history_length_max) {
                    (Some(d), _) => format!(", dead tuples up to {d}"),
                    (None, Some(h)) => format!(", the history list up to {h}"),
                    _ => String::new(),
                };
                let size = match (pin.table_bytes, pin.index_bytes) {
                    (Some(t), Some(i)) => format!(
                        ", hot table {:.0} MB and its indexes {:.0} MB{against}",
                        mb(t),
                        mb(i)
                    ),
                    _ => String::new(),
                };
                format!(
                    "{} jobs/s ×{jobs:.2}, claim p99 {}{}{garbage}{size}{}",
                    model(o),
                    pin.claim_p99_us
                        .map_or("–".into(), |us| fmt_ms(us as f64 / 1000.0)),
                    p99.map_or(String::new(), |x| format!(" (×{x:.2})")),
                    needed(o),
                ) + &behind_note(o)
            })
            .collect();
        out.push(format!(
            "storage models, {} at {} workers, batch {} on {} ({}), through the pin against each one's steady phase: {}{}.",
            c.strategy,
            c.workers,
            c.batch_size,
            c.index_layout,
            c.backend,
            each.join("; "),
            least_degraded(&group)
        ));
    }
    out
}

/// The model that degraded least: the largest share of the offered rate carried through
/// the pin (every model of a layout was offered the same), among the models that took
/// their steady phase's rate. Those within 10 % of the best share are named together:
/// one trial's share moves by a few points from run to run (the lower pinned claim p99
/// orders them).
fn least_degraded(group: &[(&CellResult, ThroughThePin<'_>)]) -> String {
    let mut ranked: Vec<(&str, f64, f64, u64)> = group
        .iter()
        .filter(|(o, _)| behind_when_steady(o).is_none())
        .filter_map(|(o, (_, _, pin))| {
            let (done, offered) = carried(o)?;
            Some((model(o), done / offered, offered, pin.claim_p99_us?))
        })
        .collect();
    ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.3.cmp(&b.3)));
    let Some(&(best, share, offered, p99)) = ranked.first() else {
        return String::new();
    };
    let close: Vec<&(&str, f64, f64, u64)> = ranked.iter().filter(|m| m.1 >= share * 0.9).collect();
    let pct = |x: f64| format!("{:.0}", x * 100.0);
    match close.as_slice() {
        [_] => format!(
            "; {best} degraded least: it carried {} % of the {offered:.0} jobs/s offered through the pin, claim p99 {}",
            pct(share),
            fmt_ms(p99 as f64 / 1000.0)
        ),
        _ => {
            let names: Vec<&str> = close.iter().map(|m| m.0).collect();
            let names = match names.split_last() {
                Some((last, [_, ..])) => {
                    format!("{} and {last}", names[..names.len() - 1].join(", "))
                }
                _ => names.join(""),
            };
            let low = close.last().map_or(share, |m| m.1);
            let range = match pct(low) == pct(share) {
                true => pct(share),
                false => format!("{}–{}", pct(low), pct(share)),
            };
            format!(
                "; {names} degraded least, within 10 % of each other: they carried {range} % of the {offered:.0} jobs/s offered through the pin",
            )
        }
    }
}

/// One sentence per group of cells (backend, strategy, workers, batch, storage model)
/// that ran more than one index layout through a pin: which index the model needs. A
/// layout is read through the pin as the models are (the share of its offered rate it
/// carried, its claim p99 against its own steady phase), with the rows its claim examined
/// in the plan sampled half-way through the trial, and the one that carried a share at
/// least 10 % larger than another's is named.
pub fn index_sentences(r: &RunResult) -> Vec<String> {
    let mut out = Vec::new();
    let key = |c: &CellResult| {
        (
            c.backend,
            c.strategy.clone(),
            c.workers,
            c.batch_size,
            model(c).to_string(),
        )
    };
    let mut told = Vec::new();
    for c in &r.cells {
        if told.contains(&key(c)) {
            continue;
        }
        told.push(key(c));
        let group: Vec<(&CellResult, ThroughThePin<'_>)> = r
            .cells
            .iter()
            .filter(|o| key(o) == key(c))
            .filter_map(|o| Some((o, through_the_pin(o)?)))
            .collect();
        let mut layouts: Vec<&str> = group.iter().map(|(o, _)| o.index_layout.as_str()).collect();
        layouts.dedup();
        if layouts.len() < 2 {
            continue;
        }
        // Each layout was offered half its own capacity: they compare on the share of it
        // they carried through the pin, as the models do.
        let each: Vec<String> = group
            .iter()
            .map(|(o, (_, p99, pin))| {
                let rows = super::layouts::rows_examined(o);
                let carried = carried(o).map_or(String::new(), |(done, offered)| {
                    format!(
                        " carried {:.0} % of the {offered:.0} jobs/s offered,",
                        done / offered * 100.0
                    )
                });
                format!(
                    "{}{carried} claim p99 {}{}{rows}",
                    o.index_layout,
                    pin.claim_p99_us
                        .map_or("–".into(), |us| fmt_ms(us as f64 / 1000.0)),
                    p99.map_or(String::new(), |x| format!(" (×{x:.2} its steady phase's)")),
                )
            })
            .collect();
        let mut ranked: Vec<(&str, f64)> = group
            .iter()
            .filter_map(|(o, _)| {
                let (done, offered) = carried(o)?;
                Some((o.index_layout.as_str(), done / offered))
            })
            .collect();
        ranked.sort_by(|a, b| b.1.total_cmp(&a.1));
        // A lead within a few points of one trial's share names no layout.
        let verdict = match ranked.as_slice() {
            [(best, b), .., (worst, w)] if *w > 0.0 && b / w >= 1.1 => {
                format!("; {best} carried the most (×{:.2} {worst}'s share)", b / w)
            }
            [_, ..] => "; no layout carried 10 % more than another".into(),
            [] => String::new(),
        };
        out.push(format!(
            "index layouts under {}, {} at {} workers, batch {} ({}), through the pin: {}{}.",
            model(c),
            c.strategy,
            c.workers,
            c.batch_size,
            c.backend,
            each.join("; "),
            verdict
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::TrialResult;
    use crate::strategy::Strategy;

    fn phase(jobs_per_s: f64, p99: u64, dead: i64) -> HoldPhase {
        HoldPhase {
            jobs_per_s,
            claim_p99_us: Some(p99),
            dead_tuples_max: Some(dead),
            table_bytes: Some(64 << 20),
            index_bytes: Some((dead / 10_000) << 20),
            ..Default::default()
        }
    }

    fn cell(storage: Option<&str>, layout: &str, pinned: HoldPhase) -> CellResult {
        let reading = |name: &str, pin: Option<&str>, figures| TimelineReading {
            name: name.into(),
            offered_per_s: 500.0,
            pin: pin.map(String::from),
            figures,
        };
        let t = TrialResult {
            timeline: vec![
                reading("steady", None, phase(500.0, 2000, 100)),
                reading("pinned", Some("idle-in-transaction"), pinned),
            ],
            ..Default::default()
        };
        CellResult {
            index_layout: layout.into(),
            storage: storage.map(String::from),
            ..CellResult::fetch_order(Strategy::PRODUCTION, 8, 10, vec![t])
        }
    }

    #[test]
    fn each_model_is_read_against_its_own_steady_phase_and_the_least_degraded_named() {
        let r = RunResult {
            cells: vec![
                cell(None, "fetch-order", phase(450.0, 6000, 90_000)),
                cell(
                    Some("update-in-place"),
                    "fetch-order",
                    phase(400.0, 3000, 60_000),
                ),
                // Alone on its layout: no comparison.
                cell(None, "pending-partial", phase(500.0, 2000, 100)),
            ],
            ..Default::default()
        };
        let s = sentences(&r);
        assert_eq!(s.len(), 1, "{s:?}");
        assert_eq!(
            s[0],
            "storage models, production at 8 workers, batch 10 on fetch-order (postgres), through the pin against each one's steady phase: archive-move jobs/s ×0.90, claim p99 6.0 ms (×3.00), dead tuples up to 90000, hot table 64 MB and its indexes 9 MB; update-in-place jobs/s ×0.80, claim p99 3.0 ms (×1.50), dead tuples up to 60000, hot table 64 MB and its indexes 6 MB (×0.96 archive-move's); archive-move degraded least: it carried 90 % of the 500 jobs/s offered through the pin, claim p99 6.0 ms."
        );
    }

    #[test]
    fn each_model_says_what_it_needed_from_the_cleanup_job() {
        let with_job = |storage, removed_per_s, during| {
            let mut c = cell(storage, "fetch-order", phase(450.0, 3000, 100));
            c.trials[0].cleanup = Some(crate::results::CleanupFigures {
                removed_per_s,
                claim_p99_during_us: Some(during),
                claim_p99_between_us: Some(2000),
                ..Default::default()
            });
            c
        };
        let r = RunResult {
            cells: vec![
                with_job(None, 480.0, 5000),
                with_job(Some("delete"), 0.0, 2000),
            ],
            ..Default::default()
        };
        let s = sentences(&r);
        assert!(
            s[0].contains("archive-move jobs/s ×0.90, claim p99 3.0 ms (×1.50), dead tuples up to 100, hot table 64 MB and its indexes 0 MB, the cleanup job removing 480 rows/s, claim p99 ×2.50 while it ran;"),
            "{s:?}"
        );
        assert!(
            s[0].contains("(×1.00 archive-move's), nothing for the cleanup job to remove;"),
            "{s:?}"
        );
    }

    #[test]
    fn each_model_names_the_layout_that_carried_most_through_the_pin() {
        let with_plan = |storage, layout, jobs, p99, rows| {
            let mut c = cell(storage, layout, phase(jobs, p99, 100));
            c.trials[0].plan = Some(crate::results::PlanSample {
                at_s: 40.0,
                statement: "claim".into(),
                shape: String::new(),
                execution_ms: 1.0,
                shared_hit: 0,
                shared_read: 0,
                rows_examined: rows,
                plan: serde_json::Value::Null,
                analyzed: true,
            });
            c
        };
        let r = RunResult {
            cells: vec![
                // The lower p99 does not decide: what each carried of what it was offered.
                with_plan(None, "fetch-order", 300.0, 4000, 900),
                with_plan(None, "pending-partial", 450.0, 8000, 40),
                // One layout only: nothing to choose between.
                with_plan(Some("delete"), "fetch-order", 450.0, 3000, 30),
                // Within 10 %: no layout named.
                with_plan(Some("update-in-place"), "fetch-order", 450.0, 4000, 90),
                with_plan(Some("update-in-place"), "pending-partial", 430.0, 3700, 60),
            ],
            ..Default::default()
        };
        let s = index_sentences(&r);
        assert_eq!(
            s,
            vec![
                "index layouts under archive-move, production at 8 workers, batch 10 (postgres), through the pin: fetch-order carried 60 % of the 500 jobs/s offered, claim p99 4.0 ms (×2.00 its steady phase's), 900 rows examined per claim; pending-partial carried 90 % of the 500 jobs/s offered, claim p99 8.0 ms (×4.00 its steady phase's), 40 rows examined per claim; pending-partial carried the most (×1.50 fetch-order's share).",
                "index layouts under update-in-place, production at 8 workers, batch 10 (postgres), through the pin: fetch-order carried 90 % of the 500 jobs/s offered, claim p99 4.0 ms (×2.00 its steady phase's), 90 rows examined per claim; pending-partial carried 86 % of the 500 jobs/s offered, claim p99 3.7 ms (×1.85 its steady phase's), 60 rows examined per claim; no layout carried 10 % more than another."
            ]
        );
    }

    #[test]
    fn a_model_that_fell_behind_before_the_pin_is_not_named_least_degraded() {
        // partitioned's claim p99 rose least, from a steady phase that did not take its
        // rate; the other two carried as much, and are named together (the lower pinned
        // p99 first).
        let mut behind = cell(Some("partitioned"), "fetch-order", phase(250.0, 2200, 100));
        behind.trials[0].timeline[0].figures.jobs_per_s = 300.0;
        let r = RunResult {
            cells: vec![
                cell(None, "fetch-order", phase(450.0, 6000, 100)),
                cell(
                    Some("update-in-place"),
                    "fetch-order",
                    phase(450.0, 4000, 100),
                ),
                behind,
            ],
            ..Default::default()
        };
        let s = sentences(&r);
        assert!(
            s[0].contains("— it fell behind already in its steady phase (300 of 500 jobs/s offered), so its ratios are against an overloaded baseline; update-in-place and archive-move degraded least, within 10 % of each other: they carried 90 % of the 500 jobs/s offered through the pin."),
            "{s:?}"
        );
    }

    #[test]
    fn on_mysql_the_pin_leaves_a_history_list_and_no_sizes_are_made_up() {
        let innodb = |storage, jobs, history| {
            let mut pinned = phase(jobs, 9000, 0);
            pinned.dead_tuples_max = None;
            pinned.history_length_max = Some(history);
            pinned.table_bytes = None;
            pinned.index_bytes = None;
            CellResult {
                backend: crate::backend_kind::BackendKind::Mysql,
                ..cell(storage, "fetch-order", pinned)
            }
        };
        let r = RunResult {
            cells: vec![
                innodb(None, 300.0, 51_000),
                innodb(Some("delete"), 400.0, 48_000),
            ],
            ..Default::default()
        };
        assert_eq!(
            sentences(&r),
            vec![
                "storage models, production at 8 workers, batch 10 on fetch-order (mysql), through the pin against each one's steady phase: archive-move jobs/s ×0.60, claim p99 9.0 ms (×4.50), the history list up to 51000; delete jobs/s ×0.80, claim p99 9.0 ms (×4.50), the history list up to 48000; delete degraded least: it carried 80 % of the 500 jobs/s offered through the pin, claim p99 9.0 ms."
            ]
        );
    }
}
