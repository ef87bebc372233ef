//! `claimbench recommend`: per strategy and layout, the smallest pool (fewest workers,
//! then smallest batch) whose cell meets every SLO, the knee of the worker sweep, the
//! best throughput seen, and the table that supports them.

use super::figures::{CellFigures, fmt_ms};
use crate::backend_kind::BackendKind;
use crate::results::{CellResult, RunResult};
use crate::slo::Slo;
use crate::strategy::Strategy;

/// Another step of workers that adds less than this share of throughput is past the knee.
pub const KNEE_GAIN: f64 = 0.05;

/// The objectives `recommend` uses when neither the workload nor `--slo` sets any:
/// correctness only.
pub const DEFAULT_SLOS: [&str; 2] = ["duplicates==0", "lost==0"];

/// "queue_wait_p99, oldest_pending_max not measured: no arrivals in this phase; ...":
/// the unmeasured SLOs grouped by why, in their order.
fn not_measured(unmeasured: &[(String, &'static str)]) -> String {
    let mut groups: Vec<(&str, Vec<&str>)> = Vec::new();
    for (name, why) in unmeasured {
        match groups.iter_mut().find(|(w, _)| w == why) {
            Some((_, names)) => names.push(name),
            None => groups.push((why, vec![name])),
        }
    }
    groups
        .iter()
        .map(|(why, names)| format!("{} not measured: {why}", names.join(", ")))
        .collect::<Vec<_>>()
        .join("; ")
}

/// One cell as the recommendation reads it.
#[derive(Debug, Clone)]
pub struct Candidate {
    pub workers: u32,
    pub batch: u32,
    pub figures: CellFigures,
    pub misses: Vec<String>,
    /// SLOs this cell cannot measure (they neither pass nor fail it): the metric's name
    /// and why (no arrivals in the phase, a claim-only phase).
    pub unmeasured: Vec<(String, &'static str)>,
    /// At least one SLO could be measured here: a cell that measures none meets nothing
    /// and is never recommended.
    pub judged: bool,
}

/// The answer for one (backend, phase, strategy, layout).
#[derive(Debug, Clone)]
pub struct Recommendation {
    pub backend: BackendKind,
    pub phase: String,
    pub strategy: Strategy,
    pub index_layout: String,
    /// The smallest cell meeting every SLO.
    pub recommended: Option<(u32, u32)>,
    /// (workers, batch): the first worker count after which one more step adds less
    /// than [`KNEE_GAIN`], at the recommended batch (else the best one's); `None` when
    /// throughput still grows at the largest count tried.
    pub knee: Option<(u32, u32)>,
    pub best: (u32, u32, f64),
    pub candidates: Vec<Candidate>,
}

impl Recommendation {
    pub fn label(&self) -> String {
        let phase = if self.phase.is_empty() {
            String::new()
        } else {
            format!(" [{}]", self.phase)
        };
        format!(
            "{} {} {}{phase}",
            self.backend, self.strategy, self.index_layout
        )
    }

    /// One sentence: what to deploy, or why nothing qualifies.
    pub fn sentence(&self, slos: &[Slo]) -> String {
        let unmeasured = self
            .candidates
            .first()
            .map(|c| c.unmeasured.clone())
            .unwrap_or_default();
        let slo_text = slos
            .iter()
            .filter(|s| !unmeasured.iter().any(|(u, _)| u == s.metric.name()))
            .map(Slo::to_string)
            .collect::<Vec<_>>()
            .join(", ");
        if slo_text.is_empty() && !unmeasured.is_empty() {
            // Every candidate "meets" objectives it cannot measure: nothing to pick by.
            return format!(
                "{}: no SLO can be judged here ({}); best {:.0} jobs/s at {} workers, batch {}",
                self.label(),
                not_measured(&unmeasured),
                self.best.2,
                self.best.0,
                self.best.1
            );
        }
        let slo_text = if unmeasured.is_empty() {
            slo_text
        } else {
            format!("{slo_text} ({})", not_measured(&unmeasured))
        };
        let knee = match self.knee {
            Some((1, b)) => format!("knee at 1 worker (batch {b})"),
            Some((w, b)) => format!("knee at {w} workers (batch {b})"),
            None => "still scaling at the largest worker count tried".to_string(),
        };
        let best = format!(
            "best {:.0} jobs/s at {} workers, batch {}",
            self.best.2, self.best.0, self.best.1
        );
        match self.recommended {
            Some((w, b)) => {
                let f = &self
                    .candidates
                    .iter()
                    .find(|c| (c.workers, c.batch) == (w, b))
                    .expect("recommended from the candidates")
                    .figures;
                format!(
                    "{}: {w} worker{}, batch {b} meet {slo_text} ({:.0} jobs/s, claim p99 {}); {knee}; {best}",
                    self.label(),
                    if w == 1 { "" } else { "s" },
                    f.throughput,
                    f.claim_p99_ms.map_or("–".into(), fmt_ms),
                )
            }
            None => {
                let closest = self
                    .candidates
                    .iter()
                    .min_by_key(|c| c.misses.len())
                    .map(|c| {
                        format!(
                            "closest: {} worker{}, batch {} missed {}",
                            c.workers,
                            if c.workers == 1 { "" } else { "s" },
                            c.batch,
                            c.misses.join("; ")
                        )
                    })
                    .unwrap_or_default();
                format!(
                    "{}: no cell meets {slo_text} ({closest}); {knee}; {best}",
                    self.label()
                )
            }
        }
    }
}

/// The recommendations a report shows: only where the SLOs can tell pools apart (the
/// phase has arrivals, or an SLO judges throughput: without either the smallest pool
/// always wins on claim latency) and only for a strategy whose promises held in the run
/// (no duplicate claims, nothing lost). The second part is one line per group left out
/// for its promises, and one line when no phase can size a pool at all.
pub fn meaningful(r: &RunResult, slos: &[Slo]) -> (Vec<Recommendation>, Vec<String>) {
    let throughput_slo = slos
        .iter()
        .any(|s| s.metric == crate::slo::Metric::CompletedPerS);
    let sizes = |rec: &Recommendation| {
        throughput_slo
            || r.cells
                .iter()
                .any(|c| c.phase == rec.phase && c.has_arrivals())
    };
    let mut kept = Vec::new();
    let mut notes = Vec::new();
    let mut cannot_size = 0;
    for rec in recommend(r, slos) {
        if !sizes(&rec) {
            cannot_size += 1;
            continue;
        }
        let dups: u64 = rec
            .candidates
            .iter()
            .map(|c| c.figures.duplicate_claims)
            .sum();
        let lost: i64 = rec.candidates.iter().map(|c| c.figures.lost).sum();
        if dups > 0 || lost > 0 {
            notes.push(format!(
                "{}: no pool recommended: its promises did not hold in this run ({dups} duplicate claims, {lost} lost jobs)",
                rec.label()
            ));
            continue;
        }
        kept.push(rec);
    }
    if kept.is_empty() && cannot_size > 0 {
        notes.push(
            "No phase of this run can size a pool: without arrivals (arrival_rate_per_s) or an SLO on completed_per_s, the smallest pool always meets a claim-latency SLO best; add a [[matrix]] block with arrivals to size one (workloads/sizing.toml does)."
                .to_string(),
        );
    }
    (kept, notes)
}

/// Cells of rate searches are steps of a search, not pool sizes: left out.
fn sized_cells(r: &RunResult) -> Vec<&CellResult> {
    r.cells
        .iter()
        .filter(|c| !r.rate_searches.iter().any(|s| s.phase == c.phase))
        .collect()
}

/// One recommendation per (backend, phase, strategy, layout), in the run's order.
pub fn recommend(r: &RunResult, slos: &[Slo]) -> Vec<Recommendation> {
    let mut out: Vec<Recommendation> = Vec::new();
    for c in sized_cells(r) {
        let figures = CellFigures::of(c);
        let unmeasured: Vec<(String, &'static str)> = figures
            .unmeasured(slos)
            .iter()
            .map(|s| {
                (
                    s.metric.name().to_string(),
                    figures.why_unmeasured(s.metric),
                )
            })
            .collect();
        let cand = Candidate {
            workers: c.workers,
            batch: c.batch_size,
            misses: figures.misses(slos),
            judged: unmeasured.len() < slos.len(),
            unmeasured,
            figures,
        };
        let same = |o: &&mut Recommendation| {
            o.backend == c.backend
                && o.phase == c.phase
                && o.strategy == c.strategy
                && o.index_layout == c.index_layout
        };
        match out.iter_mut().find(|o| same(o)) {
            Some(o) => o.candidates.push(cand),
            None => out.push(Recommendation {
                backend: c.backend,
                phase: c.phase.clone(),
                strategy: c.strategy.clone(),
                index_layout: c.index_layout.clone(),
                recommended: None,
                knee: None,
                best: (0, 0, 0.0),
                candidates: vec![cand],
            }),
        }
    }
    for o in &mut out {
        o.candidates.sort_by_key(|c| (c.workers, c.batch));
        o.recommended = o
            .candidates
            .iter()
            .find(|c| c.judged && c.misses.is_empty())
            .map(|c| (c.workers, c.batch));
        let best = o
            .candidates
            .iter()
            .max_by(|a, b| a.figures.throughput.total_cmp(&b.figures.throughput))
            .expect("a group has a cell");
        o.best = (best.workers, best.batch, best.figures.throughput);
        let batch = o.recommended.map_or(best.batch, |r| r.1);
        o.knee = knee(
            o.candidates
                .iter()
                .filter(|c| c.batch == batch)
                .map(|c| (c.workers, c.figures.throughput)),
        )
        .map(|w| (w, batch));
    }
    out
}

/// The first worker count whose next step adds less than [`KNEE_GAIN`]; `points` in
/// ascending worker order.
pub fn knee(points: impl Iterator<Item = (u32, f64)>) -> Option<u32> {
    let pts: Vec<(u32, f64)> = points.collect();
    pts.windows(2)
        .find(|w| w[1].1 < w[0].1 * (1.0 + KNEE_GAIN))
        .map(|w| w[0].0)
}

/// The objectives in force: `--slo` flags replace the run's on the same metric.
pub fn effective_slos(run: &[Slo], flags: &[Slo]) -> Vec<Slo> {
    let mut out: Vec<Slo> = run
        .iter()
        .filter(|s| !flags.iter().any(|f| f.metric == s.metric))
        .copied()
        .collect();
    out.extend_from_slice(flags);
    if out.is_empty() {
        out = DEFAULT_SLOS
            .iter()
            .map(|s| Slo::parse(s).expect("defaults parse"))
            .collect();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::TrialResult;

    fn cell(workers: u32, batch: u32, rate: f64, p99_ms: u64, dup: u64) -> CellResult {
        let mut t = TrialResult {
            completed_per_s: rate,
            ..TrialResult::default()
        };
        t.counts.jobs_completed = 1;
        let mut h = crate::metrics::new_histogram();
        h.record(p99_ms * 1000).unwrap();
        t.claim_latency = crate::metrics::HistogramSummary::from_histogram(&h);
        t.duplicates.ledger.duplicate_claims = dup;
        CellResult::fetch_order(Strategy::PRODUCTION, workers, batch, vec![t])
    }

    fn run(cells: Vec<CellResult>) -> RunResult {
        RunResult {
            cells,
            ..RunResult::default()
        }
    }

    fn slos(s: &[&str]) -> Vec<Slo> {
        s.iter().map(|s| Slo::parse(s).unwrap()).collect()
    }

    /// A report recommends a pool only where SLOs can tell pools apart and the
    /// strategy's promises held; it says why it left a group out.
    #[test]
    fn reports_recommend_only_where_it_means_something() {
        let latency = slos(&["claim_p99<=20ms"]);
        // A backlog alone and a latency SLO: the smallest pool always wins.
        let backlog = run(vec![cell(1, 1, 400.0, 2, 0), cell(4, 1, 1500.0, 5, 0)]);
        let (kept, notes) = meaningful(&backlog, &latency);
        assert!(kept.is_empty());
        assert_eq!(notes.len(), 1);
        assert!(
            notes[0].starts_with("No phase of this run can size a pool"),
            "{notes:?}"
        );
        // An SLO on throughput tells pools apart.
        let (kept, notes) = meaningful(&backlog, &slos(&["completed_per_s>=1000"]));
        assert_eq!((kept.len(), notes.len()), (1, 0));
        assert_eq!(kept[0].recommended, Some((4, 1)));
        // Arrivals do too; a strategy that duplicated is left out, with its reason.
        let arriving = |mut c: CellResult| {
            c.arrival_rate_per_s = Some(300.0);
            c
        };
        let mut naive = arriving(cell(1, 1, 400.0, 2, 7));
        naive.strategy = Strategy::NAIVE;
        let r = run(vec![arriving(cell(1, 1, 400.0, 2, 0)), naive]);
        let (kept, notes) = meaningful(&r, &latency);
        assert_eq!(kept.len(), 1);
        assert_eq!(kept[0].strategy, Strategy::PRODUCTION);
        assert_eq!(notes.len(), 1);
        assert!(
            notes[0].contains("naive") && notes[0].contains("7 duplicate claims"),
            "{notes:?}"
        );
    }

    #[test]
    fn recommends_the_smallest_cell_that_meets_every_slo() {
        let r = run(vec![
            cell(1, 10, 400.0, 2, 0),
            cell(4, 10, 1500.0, 5, 0),
            cell(8, 10, 2600.0, 12, 0),
            cell(16, 10, 2700.0, 40, 0),
            cell(4, 50, 1900.0, 25, 0),
        ]);
        let rec = recommend(&r, &slos(&["completed_per_s>=1400", "claim_p99<=20ms"]));
        assert_eq!(rec.len(), 1);
        assert_eq!(rec[0].recommended, Some((4, 10)));
        assert_eq!(rec[0].best, (16, 10, 2700.0));
        assert_eq!(rec[0].knee, Some((8, 10)), "8 -> 16 adds under 5%");
        let s = rec[0].sentence(&slos(&["claim_p99<=20ms"]));
        assert!(s.contains("4 workers, batch 10 meet"), "{s}");
    }

    #[test]
    fn the_knee_is_none_while_throughput_still_grows() {
        assert_eq!(knee([(1, 100.0), (2, 190.0), (4, 370.0)].into_iter()), None);
        assert_eq!(knee([(1, 100.0), (2, 104.0)].into_iter()), Some(1));
    }

    #[test]
    fn none_met_names_the_closest_miss() {
        let r = run(vec![cell(1, 10, 400.0, 30, 0), cell(4, 10, 900.0, 50, 3)]);
        let rec = recommend(&r, &slos(&["claim_p99<=20ms", "duplicates==0"]));
        assert_eq!(rec[0].recommended, None);
        let s = rec[0].sentence(&slos(&["claim_p99<=20ms"]));
        assert!(s.contains("no cell meets"), "{s}");
        assert!(
            s.contains("closest: 1 worker, batch 10 missed claim_p99<=20ms (measured 30 ms)"),
            "{s}"
        );
    }

    #[test]
    fn flags_replace_the_runs_objective_on_the_same_metric() {
        let got = effective_slos(
            &slos(&["claim_p99<=20ms", "lost==0"]),
            &slos(&["claim_p99<=5ms"]),
        );
        assert_eq!(got, slos(&["lost==0", "claim_p99<=5ms"]));
        assert_eq!(effective_slos(&[], &[]), slos(&DEFAULT_SLOS));
    }
}
