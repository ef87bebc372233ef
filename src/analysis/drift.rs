//! The drift a pinned horizon causes, read inside one trial: the clean phase before the
//! pin against the pin and the time after it (`SnapshotHold::phases`), as ratios of the
//! same trial's own seconds, with dead tuples and how long they took to come back; a
//! `[[timeline]]`'s phases against its first; a soak's last quarter against its first.

use crate::metric::fmt_ms;
use crate::results::{HoldPhase, HoldPhases, RunResult, SoakDrift, TimelineReading};

/// How far a soak's late quarter may sit from its early one and still be "steady".
pub const STEADY_WITHIN: f64 = 0.10;

/// A phase that completed less than this share of what it was offered fell behind.
pub const KEPT_UP_SHARE: f64 = 0.95;
/// A phase that completed more than this multiple of what it was offered was working
/// off a backlog from before it (wider than [`KEPT_UP_SHARE`]: a few seconds of
/// Poisson arrivals and the jobs in flight at a boundary move a short phase by a few
/// percent either way).
pub const BACKLOG_TIMES: f64 = 1.10;

/// One sentence per trial that held the horizon and has all three phases, one per
/// trial with a timeline, and one per soak (a trial of a minute or more without a pin
/// or a timeline).
pub fn sentences(r: &RunResult) -> Vec<String> {
    let mut out = Vec::new();
    for c in &r.cells {
        for t in &c.trials {
            // `production at 8 workers on postgres in arrivals, repetition 2`
            let who = format!(
                "{} at {} workers on {}{}{}",
                c.strategy,
                c.workers,
                c.backend_label(),
                super::figures::in_phase(c),
                if c.trials.len() > 1 {
                    format!(", repetition {}", t.repetition + 1)
                } else {
                    String::new()
                }
            );
            if let Some(d) = &t.soak {
                out.push(format!(
                    "soak, {who} ({:.0} s measured): {}.",
                    t.measured_s,
                    soak(d)
                ));
            }
            if let Some(told) = timeline(&t.timeline) {
                // A derived rate says what the phases' multiples multiply.
                let origin = c
                    .arrival_rate_from
                    .as_ref()
                    .map(|o| format!(" (its rate {}, {:.0}/s)", o.how, o.measured_per_s))
                    .unwrap_or_default();
                out.push(format!("timeline, {who}{origin}: {told}."));
            }
            let Some(h) = t.snapshot_held.as_ref() else {
                continue;
            };
            let Some(p) = h.phases else {
                continue;
            };
            let mut told = figures(&p);
            told.extend(holder(&t.table_series, (h.from_s, h.to_s)));
            told.extend(waits(&t.table_series, &p));
            told.extend(scans(&h.scans));
            out.push(format!(
                "horizon pinned, {who}, against its own clean phase: {}.",
                told.join("; ")
            ));
        }
    }
    out
}

/// A soak's first quarter against its last: what moved by more than [`STEADY_WITHIN`],
/// or that nothing did.
fn soak(d: &SoakDrift) -> String {
    let (e, l) = (&d.early, &d.late);
    let pair = |a: Option<f64>, b: Option<f64>| a.zip(b).filter(|(a, _)| *a > 0.0);
    let figures = [
        ("jobs/s", pair(Some(e.jobs_per_s), Some(l.jobs_per_s))),
        (
            "claim p99",
            pair(
                e.claim_p99_us.map(|v| v as f64),
                l.claim_p99_us.map(|v| v as f64),
            ),
        ),
        (
            "oldest pending (max)",
            pair(e.oldest_pending_max_ms, l.oldest_pending_max_ms),
        ),
        (
            "dead tuples (median)",
            pair(
                e.dead_tuples_median.map(|v| v as f64),
                l.dead_tuples_median.map(|v| v as f64),
            ),
        ),
        (
            "table bytes",
            pair(
                e.table_bytes.map(|v| v as f64),
                l.table_bytes.map(|v| v as f64),
            ),
        ),
        (
            "index bytes",
            pair(
                e.index_bytes.map(|v| v as f64),
                l.index_bytes.map(|v| v as f64),
            ),
        ),
    ];
    let read: Vec<(&str, f64)> = figures
        .iter()
        .filter_map(|(name, p)| p.map(|(a, b)| (*name, b / a)))
        .collect();
    let moved: Vec<String> = read
        .iter()
        .filter(|(_, r)| (r - 1.0).abs() > STEADY_WITHIN)
        .map(|(name, r)| format!("{name} ×{r:.2}"))
        .collect();
    if moved.is_empty() {
        let names: Vec<&str> = read.iter().map(|(n, _)| *n).collect();
        return format!(
            "steady, the last quarter within {:.0}% of the first in {}",
            STEADY_WITHIN * 100.0,
            names.join(", ")
        );
    }
    format!("the last quarter against the first: {}", moved.join(", "))
}

/// The first phase in figures, each later one against it: `steady (1000/s offered):
/// 998 jobs/s, kept up, claim p99 2.1 ms, oldest pending up to 40 ms; surge (3000/s
/// offered): 2100 jobs/s, fell behind, claim p99 ×4.20, oldest pending up to 14.0 s`.
/// The oldest pending age is told as it was: against a first phase that kept up, a
/// ratio of milliseconds says nothing a reader can use.
fn timeline(phases: &[TimelineReading]) -> Option<String> {
    let (first, rest) = phases.split_first()?;
    let base = &first.figures;
    let mut told = vec![format!(
        "{}{}{}{}",
        heading(first),
        pace(first),
        base.claim_p99_us
            .map(|us| format!(", claim p99 {}", fmt_ms(us as f64 / 1e3)))
            .unwrap_or_default(),
        oldest(base)
    )];
    for p in rest {
        let f = &p.figures;
        let ratio = |name: &str, a: Option<f64>, b: Option<f64>| {
            a.zip(b)
                .filter(|(a, _)| *a > 0.0)
                .map(|(a, b)| format!(", {name} ×{:.2}", b / a))
                .unwrap_or_default()
        };
        let as_f = |v: Option<i64>| v.map(|v| v as f64);
        told.push(format!(
            "{}{}{}{}{}{}",
            heading(p),
            pace(p),
            ratio(
                "claim p99",
                base.claim_p99_us.map(|v| v as f64),
                f.claim_p99_us.map(|v| v as f64)
            ),
            oldest(f),
            ratio(
                "dead tuples (max)",
                as_f(base.dead_tuples_max),
                as_f(f.dead_tuples_max)
            ),
            ratio(
                "history list (max)",
                as_f(base.history_length_max),
                as_f(f.history_length_max)
            ),
        ));
    }
    Some(format!(
        "{}; ratios against {}",
        told.join("; "),
        first.name
    ))
}

/// `, oldest pending up to 14.0 s`
fn oldest(f: &HoldPhase) -> String {
    f.oldest_pending_max_ms
        .map(|ms| format!(", oldest pending up to {}", fmt_ms(ms)))
        .unwrap_or_default()
}

/// `surge (3000/s offered, idle-in-transaction pin): `
fn heading(p: &TimelineReading) -> String {
    let offered = if p.offered_per_s > 0.0 {
        format!("{:.0}/s offered", p.offered_per_s)
    } else {
        "no arrivals".into()
    };
    let pin = p
        .pin
        .as_ref()
        .map(|k| format!(", {k} pin"))
        .unwrap_or_default();
    format!("{} ({offered}{pin}): ", p.name)
}

/// `2100 jobs/s, fell behind`: whether the phase completed what it was offered (at
/// least [`KEPT_UP_SHARE`] of it), or more than [`BACKLOG_TIMES`] it: a backlog from
/// before being worked off.
fn pace(p: &TimelineReading) -> String {
    let done = p.figures.jobs_per_s;
    let verdict = match p.offered_per_s {
        o if o <= 0.0 => String::new(),
        o if done < o * KEPT_UP_SHARE => ", fell behind".into(),
        o if done > o * BACKLOG_TIMES => format!(
            ", ×{:.2} what it was offered: working off a backlog",
            done / o
        ),
        _ => ", kept up".into(),
    };
    format!("{done:.0} jobs/s{verdict}")
}

/// Who held the horizon when it was oldest during the pin: `held by
/// claimbench-holder (idle in transaction)`.
fn holder(series: &[crate::results::TableSample], (from_s, to_s): (f64, f64)) -> Option<String> {
    let oldest = series
        .iter()
        .filter(|t| t.at_s >= from_s && t.at_s < to_s && t.horizon_holder.is_some())
        .max_by_key(|t| t.horizon_age)?;
    Some(format!(
        "the horizon held by {}",
        oldest.horizon_holder.as_deref()?
    ))
}

/// What the workers waited on while pinned against the clean phase, the three
/// commonest waits of each as shares of the active workers sampled: `the workers'
/// waits while pinned: CPU 61 %, LWLock:BufferContent 22 %, IO:DataFileRead 9 %
/// (clean: CPU 93 %, Lock:transactionid 4 %)`.
fn waits(series: &[crate::results::TableSample], p: &HoldPhases) -> Option<String> {
    let top = |x: &HoldPhase| -> Option<String> {
        let mut counts: std::collections::BTreeMap<&str, u64> = Default::default();
        for t in series
            .iter()
            .filter(|t| t.at_s >= x.from_s && t.at_s < x.to_s)
        {
            for (event, n) in &t.waits {
                *counts.entry(event.as_str()).or_default() += u64::from(*n);
            }
        }
        let total: u64 = counts.values().sum();
        if total == 0 {
            return None;
        }
        let mut ranked: Vec<(&str, u64)> = counts.into_iter().collect();
        ranked.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        Some(
            ranked
                .iter()
                .take(3)
                .map(|(e, n)| format!("{e} {:.0} %", *n as f64 * 100.0 / total as f64))
                .collect::<Vec<_>>()
                .join(", "),
        )
    };
    let held = top(&p.held)?;
    let clean = top(&p.clean).unwrap_or_else(|| "not sampled".into());
    Some(format!(
        "the workers' waits while pinned: {held} (clean: {clean})"
    ))
}

/// A scanning reader's cost over its snapshot's life: `the reader's scan of the hot
/// table took 12 ms at first and 480 ms at the last (×40.0), 90 scans`. The first scan
/// is the baseline: it ran on the table as the pin found it.
fn scans(scans: &[(f64, f64)]) -> Option<String> {
    let (&(_, first), &(_, last)) = (scans.first()?, scans.last()?);
    let ratio = if first > 0.0 && scans.len() > 1 {
        format!(" (×{:.1})", last / first)
    } else {
        String::new()
    };
    Some(format!(
        "the reader's scan of the hot table took {} at first and {} at the last{ratio}, {} scans",
        fmt_ms(first),
        fmt_ms(last),
        scans.len()
    ))
}

/// `×0.62 while pinned, ×0.98 after`
fn moved(clean: Option<f64>, held: Option<f64>, after: Option<f64>) -> Option<String> {
    let (c, h, a) = (clean?, held?, after?);
    (c > 0.0).then(|| format!("×{:.2} while pinned, ×{:.2} after", h / c, a / c))
}

fn figures(p: &HoldPhases) -> Vec<String> {
    let rate = |x: &HoldPhase| Some(x.jobs_per_s);
    let p99 = |x: &HoldPhase| x.claim_p99_us.map(|v| v as f64);
    let mut out = Vec::new();
    if let Some(m) = moved(rate(&p.clean), rate(&p.held), rate(&p.after)) {
        out.push(format!("jobs/s {m} (clean {:.0}/s)", p.clean.jobs_per_s));
    }
    if let Some(m) = moved(p99(&p.clean), p99(&p.held), p99(&p.after)) {
        out.push(format!("claim p99 {m}"));
    }
    if let (Some(c), Some(h)) = (p.clean.wal_bytes_per_job, p.held.wal_bytes_per_job) {
        out.push(format!("WAL per job {c:.0} B clean, {h:.0} B pinned"));
    }
    if let (Some(c), Some(h)) = (p.clean.autovacuums, p.held.autovacuums) {
        let seconds = |x: &HoldPhase| (x.to_s - x.from_s).max(1.0);
        out.push(format!(
            "autovacuum ran {h} times in the pin's {:.0} s ({c} in the clean phase's {:.0} s)",
            seconds(&p.held),
            seconds(&p.clean)
        ));
    }
    if let Some(kept) = p.held.slot_wal_bytes_max {
        out.push(format!(
            "WAL kept for replication slots up to {:.1} MB (clean: {})",
            kept as f64 / 1e6,
            p.clean
                .slot_wal_bytes_max
                .map_or("none".into(), |b| format!("{:.1} MB", b as f64 / 1e6))
        ));
    }
    if let Some(age) = p.held.horizon_age_max {
        out.push(format!(
            "the horizon up to {age} transactions old (clean: {})",
            p.clean
                .horizon_age_max
                .map_or("not sampled".into(), |a| a.to_string())
        ));
    }
    // The pin's evidence: dead tuples where the server counts them, else InnoDB's
    // history list length (the same choice the phases' recovery made).
    let evidence = match (p.clean.dead_tuples_median, p.held.dead_tuples_max) {
        (Some(m), Some(t)) => Some(("dead tuples", m, t)),
        _ => p
            .clean
            .history_length_median
            .zip(p.held.history_length_max)
            .map(|(m, t)| ("the history list length", m, t)),
    };
    let Some((what, median, top)) = evidence else {
        return out;
    };
    let ratio = if median > 0 {
        format!(" (×{:.1})", top as f64 / median as f64)
    } else {
        String::new()
    };
    let back = match (p.recovery_s, p.stayed) {
        (Some(s), true) => {
            format!("back under 1.1× that {s:.1} s after the release, and it stayed")
        }
        (Some(s), false) => {
            format!("back under 1.1× that {s:.1} s after the release, but not for good")
        }
        (None, _) => "not back under 1.1× that by the trial's end".into(),
    };
    out.push(format!(
        "{what} up to {top} against a clean median of {median}{ratio}, {back}"
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_timeline_tells_its_first_phase_and_each_later_one_against_it() {
        let phase = |name: &str, offered, jobs, p99, oldest, pin: Option<&str>| TimelineReading {
            name: name.into(),
            offered_per_s: offered,
            pin: pin.map(str::to_string),
            figures: HoldPhase {
                jobs_per_s: jobs,
                claim_p99_us: Some(p99),
                oldest_pending_max_ms: Some(oldest),
                ..Default::default()
            },
        };
        let told = timeline(&[
            phase("steady", 1000.0, 998.0, 2100, 40.0, None),
            phase("surge", 3000.0, 2100.0, 8820, 14_000.0, None),
            phase("drain", 1000.0, 1900.0, 4200, 9_000.0, None),
            phase("pinned", 1000.0, 990.0, 4200, 80.0, Some("snapshot")),
            phase("quiet", 0.0, 500.0, 2100, 40.0, None),
        ])
        .unwrap();
        assert_eq!(
            told,
            "steady (1000/s offered): 998 jobs/s, kept up, claim p99 2.1 ms, oldest pending up to 40 ms; \
             surge (3000/s offered): 2100 jobs/s, fell behind, claim p99 ×4.20, oldest pending up to 14.0 s; \
             drain (1000/s offered): 1900 jobs/s, ×1.90 what it was offered: working off a backlog, claim p99 ×2.00, oldest pending up to 9.0 s; \
             pinned (1000/s offered, snapshot pin): 990 jobs/s, kept up, claim p99 ×2.00, oldest pending up to 80 ms; \
             quiet (no arrivals): 500 jobs/s, claim p99 ×1.00, oldest pending up to 40 ms; \
             ratios against steady"
        );
        assert_eq!(timeline(&[]), None);
        assert_eq!(
            scans(&[(65.0, 12.0), (66.0, 30.0), (67.0, 480.0)]).unwrap(),
            "the reader's scan of the hot table took 12 ms at first and 480 ms at the last (×40.0), 3 scans"
        );
        assert_eq!(scans(&[]), None);
    }

    #[test]
    fn the_pins_holder_and_the_workers_waits_come_from_the_readings() {
        use crate::results::TableSample;
        let reading = |at_s, age, who: &str, waits: &[(&str, u32)]| TableSample {
            at_s,
            horizon_age: Some(age),
            horizon_holder: Some(who.into()),
            waits: waits.iter().map(|(e, n)| (e.to_string(), *n)).collect(),
            ..Default::default()
        };
        let series = [
            reading(1.0, 3, "claimbench-worker-0 (active)", &[("CPU", 2)]),
            reading(
                3.0,
                900,
                "claimbench-holder (idle in transaction)",
                &[("CPU", 1), ("IO:DataFileRead", 1)],
            ),
            reading(
                4.0,
                1800,
                "claimbench-holder (idle in transaction)",
                &[("IO:DataFileRead", 2)],
            ),
            reading(6.0, 2, "claimbench-worker-1 (active)", &[]),
        ];
        assert_eq!(
            holder(&series, (2.0, 5.0)).unwrap(),
            "the horizon held by claimbench-holder (idle in transaction)"
        );
        let phase = |from_s, to_s| HoldPhase {
            from_s,
            to_s,
            ..Default::default()
        };
        let p = HoldPhases {
            clean: phase(0.0, 2.0),
            held: phase(2.0, 5.0),
            after: phase(5.0, 7.0),
            recovery_s: None,
            stayed: false,
        };
        assert_eq!(
            waits(&series, &p).unwrap(),
            "the workers' waits while pinned: IO:DataFileRead 75 %, CPU 25 % (clean: CPU 100 %)"
        );
        // No active worker sampled while pinned: nothing to tell.
        assert_eq!(waits(&series[..1], &p), None);
    }

    #[test]
    fn a_soak_says_what_drifted_or_that_nothing_did() {
        let q = |jobs_per_s, p99, table| HoldPhase {
            jobs_per_s,
            claim_p99_us: Some(p99),
            table_bytes: Some(table),
            ..Default::default()
        };
        let steady = SoakDrift {
            early: q(1000.0, 2000, 100),
            late: q(1040.0, 2100, 105),
        };
        assert_eq!(
            soak(&steady),
            "steady, the last quarter within 10% of the first in jobs/s, claim p99, table bytes"
        );
        let drifted = SoakDrift {
            early: q(1000.0, 2000, 100),
            late: q(700.0, 2100, 300),
        };
        assert_eq!(
            soak(&drifted),
            "the last quarter against the first: jobs/s ×0.70, table bytes ×3.00"
        );
    }

    #[test]
    fn the_pin_is_told_as_ratios_against_the_clean_phase() {
        let phase = |jobs_per_s, p99, median, max| HoldPhase {
            jobs_per_s,
            claim_p99_us: Some(p99),
            dead_tuples_median: Some(median),
            dead_tuples_max: Some(max),
            ..Default::default()
        };
        let p = HoldPhases {
            clean: phase(1000.0, 2000, 400, 600),
            held: phase(620.0, 5000, 30_000, 61_000),
            after: phase(980.0, 2100, 500, 9_000),
            recovery_s: Some(12.34),
            stayed: true,
        };
        assert_eq!(
            figures(&p),
            [
                "jobs/s ×0.62 while pinned, ×0.98 after (clean 1000/s)",
                "claim p99 ×2.50 while pinned, ×1.05 after",
                "dead tuples up to 61000 against a clean median of 400 (×152.5), back under 1.1× that 12.3 s after the release, and it stayed",
            ]
        );
        let never = HoldPhases {
            recovery_s: None,
            ..p
        };
        assert!(figures(&never)[2].ends_with("not back under 1.1× that by the trial's end"));
        // MariaDB: no dead tuples, the history list length instead.
        let innodb = |jobs_per_s, median, max| HoldPhase {
            jobs_per_s,
            history_length_median: Some(median),
            history_length_max: Some(max),
            ..Default::default()
        };
        let m = HoldPhases {
            clean: innodb(500.0, 20, 30),
            held: innodb(400.0, 9000, 18_000),
            after: innodb(500.0, 25, 40),
            recovery_s: None,
            stayed: false,
        };
        assert_eq!(
            figures(&m),
            [
                "jobs/s ×0.80 while pinned, ×1.00 after (clean 500/s)",
                "the history list length up to 18000 against a clean median of 20 (×900.0), not back under 1.1× that by the trial's end",
            ]
        );
    }
}
