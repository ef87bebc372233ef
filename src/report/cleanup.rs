//! The report's view of the cleanup job (`[cleanup]`): per cell, what it removed, what
//! its statements took, what it cost the workers' claims while it ran, and whether it
//! kept up.

use crate::analysis::cleanup::of;
use crate::results::{RunResult, cell_key};

/// How to read the cleanup table.
pub const CLEANUP_HOW: &str = "Per cell, the cleanup job beside the workers ([cleanup]: on its own connection, a run every every_s seconds that repeats one statement removing at most batch of the oldest finished rows — the archive's, or the hot table's under storage = \"update-in-place\" — finished more than retain_s seconds ago, until a statement removes fewer than a batch; under storage = \"partitioned\" a statement truncates a whole partition with nothing live in it), over the repetitions: rows removed per second of trial (mean), its statements (with those a deadlock or lock timeout with the workers rolled back, which end their run) and their slowest p99; the workers' claim p99 over the measured seconds in which one of its statements ran and over those in which none did (means over repetitions; their ratio is what the job cost the claim); the finished rows past retention at the first trial's start and at the worst trial's end (counted up to ten million), and the size of the table it cleans (the archive; the hot table, all its partitions, under storage = \"update-in-place\" or \"partitioned\") with its indexes from the first trial's start to the last one's end (InnoDB's estimate on MySQL and MariaDB). It kept up when its last run that the trial's end did not cut short ended with a statement that removed fewer than a batch (nothing was left past retention then: what is past it at the end arrived since), or nothing was past retention at the end; catching up when not, but fewer rows were past retention at the end than at the start (a job whose one run the trial's end cut short is judged so too); fell behind otherwise. The index on the finish time (the archive's finished_at; a partial index on the hot table's finished rows under update-in-place) is the job's, built only when a workload has one: each completion pays for an entry in it. This trial's jobs the job removed stay counted (claimbench keeps their id, queue and times for the counts after the trial), and seeded history (population.history) is never counted as completed.";

/// One row per cell whose trials ran the job; `None` when none did.
pub fn table(r: &RunResult) -> Option<(Vec<&'static str>, Vec<Vec<String>>)> {
    let mut header = crate::results::KEY_HEADER.to_vec();
    header.extend([
        "removed rows/s",
        "statements",
        "statement p99 ms",
        "claim p99 ms while it ran / between",
        "past retention start→end",
        "cleaned table MB",
        "kept up",
    ]);
    let dash = || "–".to_string();
    let ms = |us: Option<f64>| us.map_or_else(dash, |v| format!("{:.2}", v / 1000.0));
    let rows: Vec<Vec<String>> = r
        .cells
        .iter()
        .filter_map(|c| {
            let k = of(c)?;
            let mut row = cell_key(c);
            let past = |n: Option<u64>| n.map_or_else(dash, |n| n.to_string());
            row.extend([
                format!("{:.0}", k.removed_per_s),
                match k.conflicts {
                    0 => k.statements.to_string(),
                    n => format!("{} ({n} rolled back)", k.statements),
                },
                format!("{:.2}", k.statement_p99_us as f64 / 1000.0),
                format!(
                    "{} / {}{}",
                    ms(k.claim_p99_during_us),
                    ms(k.claim_p99_between_us),
                    k.claim_p99_ratio()
                        .map_or(String::new(), |x| format!(" (×{x:.2})"))
                ),
                format!(
                    "{}→{}",
                    past(k.past_retention_start),
                    past(k.past_retention_end)
                ),
                k.table_mb
                    .map_or_else(dash, |(a, b)| format!("{a:.1}→{b:.1}")),
                k.standing.map_or_else(dash, |s| s.words().to_string()),
            ]);
            Some(row)
        })
        .collect();
    (!rows.is_empty()).then_some((header, rows))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::{CellResult, CleanupFigures, CleanupState, TrialResult};
    use crate::strategy::Strategy;

    #[test]
    fn a_row_per_cell_that_ran_the_job_with_its_cost_and_standing() {
        let state = |past, mb: i64| {
            Some(CleanupState {
                past_retention: past,
                table_bytes: mb << 20,
            })
        };
        let job = CleanupFigures {
            removed_per_s: 1234.4,
            statements: 61,
            conflicts: 2,
            claim_p99_during_us: Some(9000),
            claim_p99_between_us: Some(3000),
            caught_up: Some(true),
            start: state(500_000, 128),
            end: state(2_085, 131),
            ..Default::default()
        };
        let with = TrialResult {
            cleanup: Some(job),
            ..Default::default()
        };
        let r = RunResult {
            cells: vec![
                CellResult::fetch_order(Strategy::PRODUCTION, 8, 10, vec![with]),
                CellResult::fetch_order(Strategy::PRODUCTION, 4, 10, vec![TrialResult::default()]),
            ],
            ..Default::default()
        };
        let (header, rows) = table(&r).unwrap();
        assert_eq!(rows.len(), 1, "only the cell that ran the job");
        let at = |name: &str| header.iter().position(|h| *h == name).unwrap();
        let row = &rows[0];
        assert_eq!(row[at("removed rows/s")], "1234");
        assert_eq!(row[at("statements")], "61 (2 rolled back)");
        assert_eq!(
            row[at("claim p99 ms while it ran / between")],
            "9.00 / 3.00 (×3.00)"
        );
        assert_eq!(row[at("past retention start→end")], "500000→2085");
        assert_eq!(row[at("cleaned table MB")], "128.0→131.0");
        assert_eq!(row[at("kept up")], "kept up");
        assert!(table(&RunResult::default()).is_none());
    }
}
