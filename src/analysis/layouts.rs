//! The verdict's index comparison: one strategy on two or more layouts at the same
//! workers and batch, in one run, told as the layouts' rates and tails side by side and
//! the best against the slowest. The ratio is of two figures from the same run, so it is
//! a finding about the layouts, not about this host's speed; the rows a claim examined
//! (where its plan was sampled) say why.

use super::figures::{RunFigures, fmt_ms};
use crate::results::{CellResult, RunResult};

/// Cells that compare: the same server, strategy, workers and batch, without arrivals
/// (the storage scenario's layouts carry arrivals and are told through the pin,
/// `storage::index_sentences`).
fn key(c: &CellResult) -> (String, &str, u32, u32) {
    (
        c.backend_label(),
        c.strategy.as_str(),
        c.workers,
        c.batch_size,
    )
}

/// `, N rows examined per claim` from the cell's plan sample, or nothing without one:
/// a count that does not depend on the host's speed.
pub(super) fn rows_examined(c: &CellResult) -> String {
    c.trials
        .first()
        .and_then(|t| t.plan.as_ref())
        .map_or(String::new(), |p| {
            format!(", {} rows examined per claim", p.rows_examined)
        })
}

pub fn sentences(r: &RunResult, figures: RunFigures, out: &mut Vec<String>) {
    // Grouped in one pass, in the order each group first appears: a run may hold up to
    // 100,000 cells.
    let mut groups: Vec<Vec<(&CellResult, f64)>> = Vec::new();
    let mut index: std::collections::HashMap<_, usize> = std::collections::HashMap::new();
    for c in r.cells.iter().filter(|c| !c.has_arrivals()) {
        let i = *index.entry(key(c)).or_insert_with(|| {
            groups.push(Vec::new());
            groups.len() - 1
        });
        groups[i].push((c, figures.of(c).throughput));
    }
    for mut group in groups {
        let c = group[0].0;
        let mut layouts: Vec<&str> = group.iter().map(|(o, _)| o.index_layout.as_str()).collect();
        layouts.sort_unstable();
        layouts.dedup();
        if layouts.len() < 2 || layouts.len() != group.len() {
            // One layout, or a layout twice (two phases of it): nothing one-to-one.
            continue;
        }
        group.sort_by(|a, b| b.1.total_cmp(&a.1));
        let each: Vec<String> = group
            .iter()
            .map(|(o, per_s)| {
                let p99 = figures.of(o).claim_p99_ms.map_or("–".into(), fmt_ms);
                let rows = rows_examined(o);
                format!(
                    "{} {per_s:.0} jobs/s, claim p99 {p99}{rows}",
                    o.index_layout
                )
            })
            .collect();
        let (best, slowest) = (group[0], group[group.len() - 1]);
        let ratio = match slowest.1 > 0.0 {
            true => format!(
                "; {} carried {:.1}x what {} did",
                best.0.index_layout,
                best.1 / slowest.1,
                slowest.0.index_layout
            ),
            false => String::new(),
        };
        out.push(format!(
            "{} by index layout at {} workers, batch {}: {}{ratio}.",
            c.strategy,
            c.workers,
            c.batch_size,
            each.join("; ")
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::TrialResult;
    use crate::strategy::Strategy;

    fn on(layout: &str, per_s: f64, phase: &str) -> CellResult {
        let t = TrialResult {
            completed_per_s: per_s,
            ..Default::default()
        };
        let mut c = CellResult::fetch_order(Strategy::PRODUCTION, 8, 5, vec![t]);
        c.index_layout = layout.into();
        c.phase = phase.into();
        c
    }

    fn told(r: &RunResult) -> Vec<String> {
        let mut out = Vec::new();
        sentences(r, RunFigures::new(&r.cells, &[]), &mut out);
        out
    }

    /// A claim on its table's own indexes and again on an index in its order (the
    /// pg-boss example's two blocks): fastest first, and the ratio of the two.
    #[test]
    fn one_strategy_on_two_layouts_is_told_fastest_first_with_their_ratio() {
        let r = RunResult {
            cells: vec![
                on("pk-only", 250.0, "as-shipped"),
                on("fetch-ordered", 7_250.0, "ordered-index"),
            ],
            ..RunResult::default()
        };
        assert_eq!(
            told(&r),
            [
                "production by index layout at 8 workers, batch 5: fetch-ordered 7250 jobs/s, claim p99 –; pk-only 250 jobs/s, claim p99 –; fetch-ordered carried 29.0x what pk-only did."
            ]
        );
    }

    /// Nothing to compare: one layout, a layout in two phases, or other worker counts.
    #[test]
    fn no_sentence_without_two_layouts_at_the_same_workers_and_batch() {
        let one = RunResult {
            cells: vec![on("pk-only", 250.0, "a")],
            ..RunResult::default()
        };
        let twice = RunResult {
            cells: vec![
                on("pk-only", 250.0, "a"),
                on("pk-only", 260.0, "b"),
                on("fetch-order", 900.0, "b"),
            ],
            ..RunResult::default()
        };
        let mut other = on("fetch-order", 900.0, "a");
        other.workers = 16;
        let apart = RunResult {
            cells: vec![on("pk-only", 250.0, "a"), other],
            ..RunResult::default()
        };
        for r in [one, twice, apart] {
            assert!(told(&r).is_empty(), "{:?}", told(&r));
        }
    }
}
