//! Machine-readable exports: `cells.csv` (one row per cell, every metric, repetitions
//! merged or averaged) and, per cell, the claim-latency and queue-wait distributions in
//! HdrHistogram's percentile-distribution text format (`.hgrm`), which HdrHistogram's own
//! plotting tools read.

use super::view::{CellView, RunView};
use crate::analysis::figures::CellFigures;
use crate::metrics::HistogramSummary;
use crate::results::CellResult;
use serde::Serialize;
use std::fmt::Write;
use std::path::PathBuf;

#[derive(Serialize)]
struct CellRow<'a> {
    /// The matrix block, with its arrival rate when jobs arrived (summary's phase column).
    phase: String,
    backend: String,
    strategy: String,
    index_layout: &'a str,
    workers: u32,
    batch_size: u32,
    repetitions: usize,
    claims_per_s: f64,
    claimed_per_s: f64,
    /// Empty for a claim-only cell, as are the duplicate-execution columns: nothing ran.
    completed_per_s: Option<f64>,
    claim_p50_us: u64,
    claim_p90_us: u64,
    claim_p99_us: u64,
    claim_p999_us: u64,
    claim_max_us: u64,
    empty_claims: u64,
    /// Empty where no jobs arrived during the trial, as summary.md's `–`: a drain's
    /// queue wait is its backlog's age, not a wait (the catalogue's rule, metric.rs).
    queue_wait_p50_us: Option<u64>,
    queue_wait_p99_us: Option<u64>,
    queue_wait_max_us: Option<u64>,
    oldest_pending_p50_ms: Option<f64>,
    oldest_pending_p99_ms: Option<f64>,
    oldest_pending_max_ms: Option<f64>,
    distinct_claimed: u64,
    duplicate_claims: u64,
    duplicate_claim_rate: f64,
    duplicate_executions_ledger: Option<u64>,
    duplicate_executions_effects: Option<i64>,
    duplicate_execution_rate: Option<f64>,
    lost: i64,
    lost_races: u64,
    deadlocks: i64,
    row_lock_waits: Option<i64>,
    lock_escalations: Option<i64>,
    retries: u64,
    lock_wait_share: f64,
    client_cpu_us_per_claim: f64,
    server_cpu_s: Option<f64>,
    dead_tuples: i64,
    table_bytes: i64,
    index_bytes: i64,
    warnings: usize,
}

fn row<'a>(v: &CellView<'a>) -> CellRow<'a> {
    let c = v.cell;
    // Handlers ran (not a claim-only cell): completions and executions were measured.
    let ran = !v.figures.claim_only;
    let waited = v.figures.queue_wait_p99_ms.is_some();
    let pending = v.figures.oldest_pending_p99_ms.is_some();
    CellRow {
        phase: crate::results::phase_label(c),
        backend: c.backend_label(),
        strategy: c.strategy.to_string(),
        index_layout: &c.index_layout,
        workers: c.workers,
        batch_size: c.batch_size,
        repetitions: c.trials.len(),
        claims_per_s: v.claims_per_s.mean,
        claimed_per_s: v.claimed_per_s.mean,
        completed_per_s: ran.then_some(v.completed_per_s.mean),
        claim_p50_us: v.claim.p50_us,
        claim_p90_us: v.claim.p90_us,
        claim_p99_us: v.claim.p99_us,
        claim_p999_us: v.claim.p999_us,
        claim_max_us: v.claim.max_us,
        empty_claims: v.empty_claims,
        queue_wait_p50_us: waited.then_some(v.queue_wait.p50_us),
        queue_wait_p99_us: waited.then_some(v.queue_wait.p99_us),
        queue_wait_max_us: waited.then_some(v.queue_wait.max_us),
        oldest_pending_p50_ms: pending.then_some(v.oldest_pending_p50_ms),
        oldest_pending_p99_ms: v.figures.oldest_pending_p99_ms,
        oldest_pending_max_ms: v.figures.oldest_pending_max_ms,
        distinct_claimed: v.distinct_claimed,
        duplicate_claims: v.duplicate_claims,
        duplicate_claim_rate: v.duplicate_claim_rate(),
        duplicate_executions_ledger: ran.then_some(v.duplicate_executions_ledger),
        duplicate_executions_effects: ran.then_some(v.duplicate_executions_effects),
        duplicate_execution_rate: ran.then(|| v.duplicate_execution_rate()),
        lost: v.lost,
        lost_races: v.lost_races,
        deadlocks: v.deadlocks,
        row_lock_waits: v.row_lock_waits,
        lock_escalations: v.lock_escalations,
        retries: v.retries,
        lock_wait_share: v.lock_wait_share,
        client_cpu_us_per_claim: v.client_cpu_us_per_claim,
        server_cpu_s: v.server_cpu_s,
        dead_tuples: v.dead_tuples,
        table_bytes: v.table_bytes,
        index_bytes: v.index_bytes,
        warnings: v.warnings,
    }
}

/// Why an export file could not be written.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error("cannot write CSV")]
    Csv(#[from] csv::Error),
    #[error("cannot write CSV")]
    CsvFlush(#[from] std::io::Error),
    #[error("CSV is not UTF-8")]
    Utf8(#[from] std::string::FromUtf8Error),
    #[error(transparent)]
    Histogram(#[from] crate::metrics::HistogramError),
    #[error(transparent)]
    Folder(#[from] crate::results::ResultsError),
}

fn csv_text(rows: &[CellRow<'_>]) -> Result<String, ExportError> {
    let mut w = csv::Writer::from_writer(Vec::new());
    for r in rows {
        w.serialize(r)?;
    }
    let bytes = w.into_inner().map_err(|e| e.into_error())?;
    Ok(String::from_utf8(bytes)?)
}

/// cells.csv from the run's cells as the view computed them.
pub fn cells_csv(cells: &[CellView]) -> Result<String, ExportError> {
    let rows: Vec<CellRow<'_>> = cells.iter().map(row).collect();
    let text = csv_text(&rows)?;
    if !text.is_empty() {
        return Ok(text);
    }
    // csv writes the header with the first record; a run without cells still gets one.
    let empty = CellResult {
        phase: String::new(),
        arrival_rate_per_s: None,
        arrival_rate_from: None,
        backend: crate::backend::BackendKind::Postgres,
        strategy: crate::strategy::Strategy::PRODUCTION,
        index_layout: String::new(),
        workers: 0,
        batch_size: 0,
        session_settings: Vec::new(),
        server_settings: Vec::new(),
        pool_size: None,
        claim_only: None,
        storage: None,
        pair: None,
        server: None,
        trials: Vec::new(),
    };
    let text = csv_text(&[row(&CellView::of(&empty, CellFigures::of(&empty)))])?;
    Ok(text
        .lines()
        .next()
        .map(|h| format!("{h}\n"))
        .unwrap_or_default())
}

/// cells.csv: the document's cells, one row each.
pub struct CellsCsv;

impl super::document::Renderer for CellsCsv {
    type Error = ExportError;

    fn render(&self, doc: &super::document::Document) -> Result<String, ExportError> {
        cells_csv(doc.cells())
    }
}

/// HdrHistogram's percentile distribution text (as Java's
/// `outputPercentileDistribution(out, 5, 1000.0)` writes it): values in ms.
pub fn hgrm(h: &HistogramSummary) -> Result<String, ExportError> {
    let hist = h.histogram()?;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:>12} {:>14} {:>10} {:>14}\n",
        "Value", "Percentile", "TotalCount", "1/(1-Percentile)"
    );
    if !hist.is_empty() {
        let mut total = 0u64;
        for v in hist.iter_quantiles(5) {
            total += v.count_since_last_iteration();
            let q = v.quantile_iterated_to();
            let value = v.value_iterated_to() as f64 / 1000.0;
            if q < 1.0 {
                let _ = writeln!(
                    out,
                    "{value:>12.3} {q:>14.12} {total:>10} {:>14.2}",
                    1.0 / (1.0 - q)
                );
            } else {
                let _ = writeln!(out, "{value:>12.3} {q:>14.12} {total:>10}");
            }
        }
    }
    let _ = writeln!(
        out,
        "#[Mean    = {:>12.3}, StdDeviation   = {:>12.3}]",
        hist.mean() / 1000.0,
        hist.stdev() / 1000.0
    );
    let _ = writeln!(
        out,
        "#[Max     = {:>12.3}, Total count    = {:>12}]",
        hist.max() as f64 / 1000.0,
        hist.len()
    );
    let _ = writeln!(
        out,
        "#[Buckets = {:>12}, SubBuckets     = {:>12}]",
        hist.buckets(),
        // As HdrHistogram computes it: the power of two that holds 2 x 10^sigfig.
        (2 * 10u64.pow(u32::from(hist.sigfig()))).next_power_of_two()
    );
    Ok(out)
}

/// Writes `hgrm/<cell>.claim_latency.hgrm` and `.queue_wait.hgrm` for every cell.
pub fn write_hgrms(
    view: &RunView,
    dir: &crate::results::Folder,
) -> Result<Vec<PathBuf>, ExportError> {
    let mut written = Vec::new();
    for v in &view.cells {
        let c = v.cell;
        // The phase and its rate too: one cell can appear in several phases.
        // Every name from the run.json through the one sanitiser: a crafted run names
        // its strategy `../x`.
        use crate::names::file_component as part;
        let stem = format!(
            "{}-{}-{}-{}-w{}-b{}",
            part(&crate::results::phase_label(c)),
            part(&c.backend_label()),
            part(c.strategy.as_str()),
            part(&c.index_layout),
            c.workers,
            c.batch_size
        );
        for (what, h) in [("claim_latency", &v.claim), ("queue_wait", &v.queue_wait)] {
            written.push(dir.write(&format!("{stem}.{what}.hgrm"), hgrm(h)?.as_bytes())?);
        }
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::new_histogram;

    #[test]
    fn hgrm_has_the_hdrhistogram_columns_and_footer() {
        let mut h = new_histogram();
        for v in 1..=1000u64 {
            h.record(v * 10).unwrap();
        }
        let text = hgrm(&HistogramSummary::from_histogram(&h)).unwrap();
        assert!(text.starts_with("       Value     Percentile TotalCount 1/(1-Percentile)"));
        let last_row = text
            .lines()
            .rfind(|l| !l.starts_with('#') && !l.is_empty())
            .unwrap();
        assert!(
            last_row.contains("1.000000000000") && last_row.contains("1000"),
            "{last_row}"
        );
        assert!(
            text.contains("#[Max     =       10.007, Total count    =         1000]"),
            "{text}"
        );
    }

    #[test]
    fn empty_histogram_still_has_a_footer() {
        let text = hgrm(&HistogramSummary::default()).unwrap();
        assert!(text.contains("Total count    =            0"), "{text}");
    }
}
