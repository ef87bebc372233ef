//! A trial read over time, as phases of itself. One that pinned the server's horizon
//! (a snapshot held open) is read as clean (warm-up's end to the pin), pinned, and
//! after the release; a long one without a pin as a soak, its first quarter against
//! its last.
//! Each phase's figures come from the same trial's per-second series, so the pin's
//! cost is a ratio against the clean phase on the same host in the same minutes; and
//! the recovery is the first sample after the release at which the horizon's evidence
//! (dead tuples on PostgreSQL, InnoDB's history list length on MySQL and MariaDB) was
//! back under 1.1 times the clean phase's median, with whether it stayed there.
//! A trial with a `[[timeline]]` is read phase by phase as the workload names them.

use crate::metrics::hlog::PerSecond;
use crate::results::{HoldPhase, HoldPhases, PurgeSample, SoakDrift, TableSample, TimelineReading};
use crate::workload::TimelinePhase;

/// Back to normal: under this many times the clean phase's median.
pub const RECOVERED_BELOW: f64 = 1.1;

/// What the phases are read from.
pub struct Series<'a> {
    /// Jobs completed (or claimed, claim-only) per second since the trial's start.
    pub done_per_s: &'a [u32],
    /// Claim latency per second since the trial's start.
    pub claim_seconds: &'a PerSecond,
    pub table: &'a [TableSample],
    pub purge: &'a [PurgeSample],
    /// (at, the oldest pending job's age in ms) at each sampler reading.
    pub oldest_pending: &'a [(f64, Option<f64>)],
}

impl Series<'_> {
    /// (at, value) of what the pin leaves behind: dead tuples where the server counts
    /// them, else the history list length.
    fn evidence(&self) -> Vec<(f64, i64)> {
        if self.table.is_empty() {
            self.purge
                .iter()
                .map(|p| (p.at_s, p.history_length))
                .collect()
        } else {
            self.table.iter().map(|t| (t.at_s, t.dead_tuples)).collect()
        }
    }
}

/// The phases of a trial that held the horizon from `from_s` to `to_s`: clean from
/// `clean_from_s` (the warm-up's end, or a timeline's phase before the pin) and after
/// until `end_s` (the trial's end, or the end of the timeline's phase after the pin);
/// `None` when a phase has no whole second.
pub fn phases(
    s: &Series<'_>,
    clean_from_s: f64,
    (from_s, to_s): (f64, f64),
    end_s: f64,
) -> Option<HoldPhases> {
    let clean = phase(s, clean_from_s, from_s)?;
    let held = phase(s, from_s, to_s)?;
    let after = phase(s, to_s, end_s)?;
    let evidence = s.evidence();
    let clean_median = median_max(&evidence, clean_from_s, from_s).0;
    let (recovery_s, stayed) = match clean_median {
        Some(m) => recovery(&evidence, (to_s, end_s), m),
        None => (None, false),
    };
    Some(HoldPhases {
        clean,
        held,
        after,
        recovery_s,
        stayed,
    })
}

/// The shortest measured window read as a soak.
pub const SOAK_FROM_S: f64 = crate::workload::READ_OVER_TIME_S;

/// A trial measured from `warmup_s` to `end_s`, at least [`SOAK_FROM_S`] long, read as
/// its first quarter against its last.
pub fn soak(s: &Series<'_>, warmup_s: f64, end_s: f64) -> Option<SoakDrift> {
    let quarter = (end_s - warmup_s) / 4.0;
    if end_s - warmup_s < SOAK_FROM_S {
        return None;
    }
    Some(SoakDrift {
        early: phase(s, warmup_s, warmup_s + quarter)?,
        late: phase(s, end_s - quarter, end_s)?,
    })
}

/// Each timeline phase over its measured part (from `warmup_s` to `end_s`); a phase
/// with no measured whole second (inside the warm-up, past an interrupted trial's
/// end) is left out.
pub fn timeline(
    s: &Series<'_>,
    (phases, base_rate): (&[TimelinePhase], Option<f64>),
    (warmup_s, end_s): (f64, f64),
) -> Vec<TimelineReading> {
    phases
        .iter()
        .filter_map(|p| {
            let from = p.from.as_secs_f64().max(warmup_s);
            let to = p.to.as_secs_f64().min(end_s);
            Some(TimelineReading {
                name: p.name.clone(),
                offered_per_s: p.rate_per_s(base_rate),
                pin: p.pin.map(|k| k.name().to_string()),
                figures: phase(s, from, to)?,
            })
        })
        .collect()
}

/// One phase's figures over its whole seconds.
fn phase(s: &Series<'_>, from_s: f64, to_s: f64) -> Option<HoldPhase> {
    let (first, last) = (from_s.ceil() as usize, to_s.floor() as usize);
    if last <= first {
        return None;
    }
    let seconds = last - first;
    let done: u64 = (first..last)
        .map(|sec| u64::from(s.done_per_s.get(sec).copied().unwrap_or(0)))
        .sum();
    let claims = s.claim_seconds.between(first, last);
    let dead: Vec<(f64, i64)> = s.table.iter().map(|t| (t.at_s, t.dead_tuples)).collect();
    let history: Vec<(f64, i64)> = s.purge.iter().map(|p| (p.at_s, p.history_length)).collect();
    let (dead_tuples_median, dead_tuples_max) = median_max(&dead, from_s, to_s);
    let (history_length_median, history_length_max) = median_max(&history, from_s, to_s);
    let in_phase = || s.table.iter().filter(|t| t.at_s >= from_s && t.at_s < to_s);
    let wal: Vec<i64> = in_phase().filter_map(|t| t.wal_bytes).collect();
    let wal_bytes_per_job = match (wal.first(), wal.last()) {
        (Some(a), Some(b)) if done > 0 && b > a => Some((b - a) as f64 / done as f64),
        _ => None,
    };
    let last_table = in_phase().next_back();
    Some(HoldPhase {
        oldest_pending_max_ms: s
            .oldest_pending
            .iter()
            .filter(|(at, _)| *at >= from_s && *at < to_s)
            .filter_map(|(_, age)| *age)
            .max_by(f64::total_cmp),
        table_bytes: last_table.map(|t| t.table_bytes),
        index_bytes: last_table.map(|t| t.index_bytes),
        from_s,
        to_s,
        jobs_per_s: done as f64 / seconds as f64,
        claim_p99_us: (!claims.is_empty()).then(|| claims.value_at_quantile(0.99)),
        dead_tuples_median,
        dead_tuples_max,
        history_length_median,
        history_length_max,
        horizon_age_max: in_phase().filter_map(|t| t.horizon_age).max(),
        slot_wal_bytes_max: in_phase().filter_map(|t| t.slot_wal_bytes).max(),
        autovacuums: runs(in_phase().filter_map(|t| t.autovacuums)),
        autoanalyzes: runs(in_phase().filter_map(|t| t.autoanalyzes)),
        wal_bytes_per_job,
    })
}

/// How much a counter sampled in a phase grew from its first reading to its last.
fn runs(mut counts: impl DoubleEndedIterator<Item = i64>) -> Option<i64> {
    let first = counts.next()?;
    Some(counts.next_back().unwrap_or(first) - first)
}

/// The median and the largest value sampled in [from_s, to_s).
fn median_max(series: &[(f64, i64)], from_s: f64, to_s: f64) -> (Option<i64>, Option<i64>) {
    let mut v: Vec<i64> = series
        .iter()
        .filter(|(at, _)| *at >= from_s && *at < to_s)
        .map(|(_, v)| *v)
        .collect();
    v.sort_unstable();
    (v.get(v.len() / 2).copied(), v.last().copied())
}

/// Seconds after `to_s` until the evidence was first back under [`RECOVERED_BELOW`] x
/// `clean_median` (at least one more than it), and whether it stayed: the median of
/// that reading and every later one before `end_s` under the level too. Autovacuum's
/// saw-tooth crosses any one level now and then in a clean phase as well; its median is
/// the level it keeps.
fn recovery(
    evidence: &[(f64, i64)],
    (to_s, end_s): (f64, f64),
    clean_median: i64,
) -> (Option<f64>, bool) {
    let level = (clean_median as f64 * RECOVERED_BELOW).max(clean_median as f64 + 1.0);
    let after: Vec<&(f64, i64)> = evidence
        .iter()
        .filter(|(at, _)| *at >= to_s && *at <= end_s)
        .collect();
    let Some(i) = after.iter().position(|(_, v)| *v as f64 <= level) else {
        return (None, false);
    };
    let mut later: Vec<i64> = after[i..].iter().map(|(_, v)| *v).collect();
    later.sort_unstable();
    let stayed = later[later.len() / 2] as f64 <= level;
    (Some(after[i].0 - to_s), stayed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(at_s: f64, dead_tuples: i64) -> TableSample {
        TableSample {
            at_s,
            dead_tuples,
            ..Default::default()
        }
    }

    #[test]
    fn each_phase_is_read_from_its_own_whole_seconds() {
        // 1 s warm-up; the pin from 4.5 s to 8.5 s; the trial ends at 12 s.
        let done = [0, 100, 100, 100, 90, 50, 50, 50, 50, 80, 100, 100];
        let mut claim_seconds = PerSecond::default();
        for sec in 0..12usize {
            let us = if (5..8).contains(&sec) { 4000 } else { 1000 };
            (0..100).for_each(|_| claim_seconds.record(sec, us));
        }
        let table: Vec<TableSample> = (0..24)
            .map(|i| {
                let at = i as f64 * 0.5;
                let dead = match at {
                    a if a < 4.5 => 100,
                    a if a < 8.5 => 100 + (a * 100.0) as i64,
                    a if a < 10.0 => 500,
                    _ => 105,
                };
                sample(at, dead)
            })
            .collect();
        let s = Series {
            done_per_s: &done,
            claim_seconds: &claim_seconds,
            table: &table,
            purge: &[],
            oldest_pending: &[(2.0, Some(30.0)), (6.0, Some(900.0)), (6.5, None)],
        };
        let p = phases(&s, 1.0, (4.5, 8.5), 12.0).unwrap();
        // Clean: seconds 1, 2, 3; pinned: 5, 6, 7; after: 9, 10, 11.
        assert_eq!(p.clean.jobs_per_s, 100.0);
        assert_eq!(p.held.jobs_per_s, 50.0);
        assert!((p.after.jobs_per_s - 280.0 / 3.0).abs() < 1e-9);
        assert_eq!(p.clean.claim_p99_us, Some(1000));
        assert_eq!(p.held.claim_p99_us.map(|v| v / 100), Some(40));
        assert_eq!(p.clean.dead_tuples_median, Some(100));
        assert_eq!(p.held.dead_tuples_max, Some(900));
        assert_eq!(p.clean.oldest_pending_max_ms, Some(30.0));
        assert_eq!(p.held.oldest_pending_max_ms, Some(900.0));
        assert_eq!(p.after.oldest_pending_max_ms, None);
        // Too short to be read as a soak; a minute is.
        assert!(soak(&s, 1.0, 12.0).is_none());
        // Back under 110 at 10 s: 1.5 s after the release, and it stayed.
        assert_eq!(p.recovery_s, Some(1.5));
        assert!(p.stayed);
        // One reading above the level after the crossing is a saw-tooth, still back;
        // a climb that lasts is not staying.
        let mut once = table.clone();
        once.push(sample(12.0, 400));
        let p = phases(&Series { table: &once, ..s }, 1.0, (4.5, 8.5), 12.5).unwrap();
        assert!(p.stayed);
        let mut again = once.clone();
        again.extend((0..5).map(|i| sample(12.5 + f64::from(i) * 0.5, 400)));
        let s = Series { table: &again, ..s };
        let p = phases(&s, 1.0, (4.5, 8.5), 15.0).unwrap();
        assert_eq!(p.recovery_s, Some(1.5));
        assert!(!p.stayed);
        // A pin that leaves no whole second after it: no phases.
        assert!(phases(&s, 1.0, (4.5, 11.5), 12.0).is_none());
    }
}
