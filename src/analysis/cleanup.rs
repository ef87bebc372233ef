//! The cleanup job (`[cleanup]`) over a cell's repetitions: whether it kept up with the
//! rows the workers finished, and what it cost their claims while it ran.

use crate::metric::fmt_ms;
use crate::results::{CellResult, CleanupFigures, RunResult};

/// Where the job stood at a trial's end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Standing {
    /// Its last whole run removed everything past retention (a statement came back
    /// short): what is past it at the end arrived since.
    KeptUp,
    /// Not caught up, but fewer past retention than at the start.
    CatchingUp,
    /// As many or more than at the start.
    FellBehind,
}

impl Standing {
    pub fn words(self) -> &'static str {
        match self {
            Standing::KeptUp => "kept up",
            Standing::CatchingUp => "catching up",
            Standing::FellBehind => "fell behind",
        }
    }
}

/// A cell's job over its repetitions.
#[derive(Debug, Clone, PartialEq)]
pub struct CellCleanup {
    pub removed_per_s: f64,
    pub statements: u64,
    /// Of them, rolled back in a deadlock or lock timeout with the workers.
    pub conflicts: u64,
    pub statement_p99_us: u64,
    /// Means over the repetitions that have each, µs.
    pub claim_p99_during_us: Option<f64>,
    pub claim_p99_between_us: Option<f64>,
    /// The first repetition's start and the worst end.
    pub past_retention_start: Option<u64>,
    pub past_retention_end: Option<u64>,
    pub table_mb: Option<(f64, f64)>,
    /// The worst over repetitions.
    pub standing: Option<Standing>,
}

impl CellCleanup {
    pub fn claim_p99_ratio(&self) -> Option<f64> {
        match (self.claim_p99_during_us, self.claim_p99_between_us) {
            (Some(d), Some(b)) if b > 0.0 => Some(d / b),
            _ => None,
        }
    }
}

/// Where one trial's job stood at its end; `None` when what it left was not read.
pub fn standing(f: &CleanupFigures) -> Option<Standing> {
    let (start, end) = (f.start?.past_retention, f.end?.past_retention);
    Some(if f.caught_up == Some(true) || end == 0 {
        Standing::KeptUp
    } else if end < start {
        // Also a job whose one run the trial's end cut short, if it had gained.
        Standing::CatchingUp
    } else {
        Standing::FellBehind
    })
}

/// `None` for a cell whose trials ran no cleanup job.
pub fn of(c: &CellResult) -> Option<CellCleanup> {
    let runs: Vec<&CleanupFigures> = c.trials.iter().filter_map(|t| t.cleanup.as_ref()).collect();
    let first = *runs.first()?;
    let n = runs.len() as f64;
    let mean = |pick: fn(&CleanupFigures) -> Option<u64>| {
        let v: Vec<u64> = runs.iter().filter_map(|f| pick(f)).collect();
        (!v.is_empty()).then(|| v.iter().sum::<u64>() as f64 / v.len() as f64)
    };
    let worst_end = runs
        .iter()
        .filter_map(|f| f.end)
        .max_by_key(|e| e.past_retention);
    let mb = |b: i64| b as f64 / 1_048_576.0;
    Some(CellCleanup {
        removed_per_s: runs.iter().map(|f| f.removed_per_s).sum::<f64>() / n,
        statements: runs.iter().map(|f| f.statements).sum(),
        conflicts: runs.iter().map(|f| f.conflicts).sum(),
        statement_p99_us: runs
            .iter()
            .map(|f| f.statement_latency.p99_us)
            .max()
            .unwrap_or(0),
        claim_p99_during_us: mean(|f| f.claim_p99_during_us),
        claim_p99_between_us: mean(|f| f.claim_p99_between_us),
        past_retention_start: first.start.map(|s| s.past_retention),
        past_retention_end: worst_end.map(|e| e.past_retention),
        table_mb: first
            .start
            .zip(runs.last()?.end)
            .map(|(s, e)| (mb(s.table_bytes), mb(e.table_bytes))),
        standing: runs
            .iter()
            .filter_map(|f| standing(f))
            .max_by_key(|s| *s as u8),
    })
}

/// One sentence for the run: what the job removed, whether it kept up in every cell
/// (naming those where it did not), and the cell whose claims it slowed most.
pub fn sentences(r: &RunResult) -> Vec<String> {
    let cells: Vec<(&CellResult, CellCleanup)> =
        r.cells.iter().filter_map(|c| Some((c, of(c)?))).collect();
    let Some(config) = r
        .cells
        .iter()
        .find_map(|c| c.trials.first()?.cleanup.as_ref())
    else {
        return Vec::new();
    };
    let name = |c: &CellResult| {
        format!(
            "{} at {} workers, batch {}{}",
            c.strategy,
            c.workers,
            c.batch_size,
            super::figures::in_phase(c)
        )
    };
    let rates: Vec<f64> = cells.iter().map(|(_, k)| k.removed_per_s).collect();
    let (lo, hi) = rates.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), &v| {
        (lo.min(v), hi.max(v))
    });
    let removed = match lo == hi {
        true => format!("{lo:.0} rows/s"),
        false => format!("{lo:.0}–{hi:.0} rows/s"),
    };
    let not_kept: Vec<String> = cells
        .iter()
        .filter(|(_, k)| k.standing.is_some_and(|s| s != Standing::KeptUp))
        .map(|(c, k)| format!("{} ({})", name(c), k.standing.expect("filtered").words()))
        .collect();
    let kept = match (not_kept.is_empty(), cells.len()) {
        (true, 1) => "and kept up".to_string(),
        (true, n) => format!("and kept up in all {n} cells"),
        (false, _) => format!("and did not keep up in {}", not_kept.join(", ")),
    };
    let mut s = format!(
        "the cleanup job (rows finished over {} s ago, {} per statement, every {} s) removed {removed} {kept}",
        config.retain_s, config.batch, config.every_s
    );
    let slowest = cells
        .iter()
        .filter_map(|(c, k)| Some((c, k, k.claim_p99_ratio()?)))
        .max_by(|a, b| a.2.total_cmp(&b.2));
    match slowest {
        Some((c, k, ratio)) => s.push_str(&format!(
            "; the claims' p99 in the seconds it ran was up to ×{ratio:.2} that of the seconds between its runs ({}: {} against {})",
            name(c),
            fmt_ms(k.claim_p99_during_us.expect("a ratio has both") / 1000.0),
            fmt_ms(k.claim_p99_between_us.expect("a ratio has both") / 1000.0),
        )),
        // Its cost is read per second: a job busy in every second leaves nothing to
        // compare against.
        None if cells.iter().all(|(_, k)| k.claim_p99_between_us.is_none()) => s.push_str(
            "; it ran in every measured second, so no second without it shows what it cost the claims (an every_s of a few seconds leaves some)",
        ),
        None => {}
    }
    s.push('.');
    vec![s]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::{CleanupState, TrialResult};
    use crate::strategy::Strategy;

    fn trial(start: u64, end: u64, during: u64, between: u64) -> TrialResult {
        TrialResult {
            cleanup: Some(CleanupFigures {
                caught_up: Some(end < 1000),
                retain_s: 2.0,
                batch: 500,
                every_s: 1.0,
                removed_per_s: 900.0,
                claim_p99_during_us: Some(during),
                claim_p99_between_us: Some(between),
                start: Some(CleanupState {
                    past_retention: start,
                    table_bytes: 8 << 20,
                }),
                end: Some(CleanupState {
                    past_retention: end,
                    table_bytes: 4 << 20,
                }),
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    #[test]
    fn a_job_kept_up_when_its_last_whole_run_removed_everything_past_retention() {
        let f = |caught_up, start, end| {
            let mut t = trial(start, end, 1, 1);
            t.cleanup.as_mut().unwrap().caught_up = caught_up;
            standing(t.cleanup.as_ref().unwrap())
        };
        // What is past retention at the end arrived after its last run: kept up.
        assert_eq!(f(Some(true), 100_000, 9_000), Some(Standing::KeptUp));
        assert_eq!(f(Some(false), 100_000, 9_000), Some(Standing::CatchingUp));
        assert_eq!(f(Some(false), 1_000, 1_600), Some(Standing::FellBehind));
        // No run ended whole: what it left against what it found.
        assert_eq!(f(None, 500_000, 130_000), Some(Standing::CatchingUp));
        assert_eq!(f(None, 1_000, 1_600), Some(Standing::FellBehind));
        assert_eq!(f(None, 0, 0), Some(Standing::KeptUp));
    }

    #[test]
    fn the_sentence_names_the_cells_it_did_not_keep_up_in_and_the_worst_slowdown() {
        let cell =
            |workers, trials| CellResult::fetch_order(Strategy::PRODUCTION, workers, 10, trials);
        let r = RunResult {
            cells: vec![
                cell(
                    4,
                    vec![trial(50_000, 0, 3000, 2000), trial(50_000, 10, 3400, 2000)],
                ),
                cell(16, vec![trial(50_000, 60_000, 9000, 3000)]),
            ],
            ..Default::default()
        };
        let k = of(&r.cells[0]).unwrap();
        assert_eq!(k.claim_p99_during_us, Some(3200.0));
        assert_eq!(k.standing, Some(Standing::KeptUp));
        assert_eq!(k.table_mb, Some((8.0, 4.0)));
        let s = sentences(&r);
        assert_eq!(s.len(), 1);
        assert!(s[0].starts_with("the cleanup job (rows finished over 2 s ago, 500 per statement, every 1 s) removed 900 rows/s and did not keep up in production at 16 workers, batch 10 (fell behind)"), "{}", s[0]);
        assert!(s[0].contains("up to ×3.00 that of the seconds between its runs (production at 16 workers, batch 10: 9.0 ms against 3.0 ms)"), "{}", s[0]);
        // A run without the job says nothing of it.
        let none = RunResult {
            cells: vec![cell(4, vec![TrialResult::default()])],
            ..Default::default()
        };
        assert!(sentences(&none).is_empty());
        // A job busy in every second: nothing to compare, and the sentence says why.
        let mut busy = trial(50_000, 0, 3000, 0);
        busy.cleanup.as_mut().unwrap().claim_p99_between_us = None;
        let r = RunResult {
            cells: vec![cell(4, vec![busy])],
            ..Default::default()
        };
        assert_eq!(of(&r.cells[0]).unwrap().claim_p99_during_us, Some(3000.0));
        assert!(sentences(&r)[0].ends_with("kept up; it ran in every measured second, so no second without it shows what it cost the claims (an every_s of a few seconds leaves some)."), "{:?}", sentences(&r));
    }
}
