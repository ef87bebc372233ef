//! The catalogue of a cell's headline figures: one entry per metric, with the name it
//! is written as (in SLOs, `compare`'s output and thresholds, the docs), its unit, how
//! its repetitions combine, which direction is worse, `compare`'s default threshold, and
//! whether it is measured only where jobs arrive. SLOs (`slo.rs`), the cell figures
//! (`analysis::figures`) and `compare` read these here, so a figure's name and rule are
//! written once; docs/metrics.md explains each rule.

use serde::{Deserialize, Serialize};

/// One headline figure of a cell. Serialized by its name (an SLO in run.json).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Metric {
    /// Completed jobs/s, or claimed jobs/s in a claim-only phase: the rate to compare by.
    Throughput,
    CompletedPerS,
    ClaimP50,
    ClaimP99,
    ClaimP999,
    /// Eligible → claimed, per job; measured only where jobs arrive during the trial.
    QueueWaitP99,
    OldestPendingP99,
    OldestPendingMax,
    /// Jobs claimed by two workers at once.
    Duplicates,
    /// Jobs whose handler ran twice (overlapping, or after an earlier success).
    DuplicateExecutions,
    Lost,
    /// The server's committed transactions per job.
    TransactionsPerJob,
}

impl std::fmt::Display for Metric {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// What a figure counts in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    Ms,
    PerSecond,
    Count,
    /// A plain ratio (transactions per job).
    Ratio,
}

/// How a cell's repetitions make its one figure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Combine {
    /// Every repetition's HDR histogram merged, the percentile read off the merge.
    MergedHistogram,
    /// The mean of the repetitions' own figures (compare: with its interval).
    Mean,
    /// The largest repetition's figure: a maximum stays a maximum.
    Max,
    /// Summed over repetitions: events, each of which counts.
    Sum,
}

/// A metric's entry in the catalogue.
#[derive(Debug, Clone, Copy)]
pub struct Entry {
    pub metric: Metric,
    pub name: &'static str,
    pub unit: Unit,
    pub combine: Combine,
    pub higher_is_better: bool,
    /// `compare`'s default relative threshold; `None`: compare does not judge it.
    pub compare_threshold: Option<f64>,
    /// Whether an SLO may name it.
    pub slo: bool,
    /// Measured only in a phase where jobs arrive during the trial.
    pub needs_arrivals: bool,
}

const fn entry(metric: Metric, name: &'static str, unit: Unit, combine: Combine) -> Entry {
    Entry {
        metric,
        name,
        unit,
        combine,
        higher_is_better: false,
        compare_threshold: None,
        slo: true,
        needs_arrivals: false,
    }
}

/// Two nightly runs of one build on the 2-core development machine, minutes apart,
/// moved throughput by up to 15%, claim p50 and p99 by up to 13%, p99.9 by 18% and queue
/// wait p99 by 23%, each outside its within-run interval, so `compare`'s defaults sit
/// above that drift (docs/nightly-noise.md). Transactions per job are the server's own
/// count: they move with the code, not with the host, so a quarter more is a real change.
pub const CATALOGUE: [Entry; 12] = {
    use Combine::*;
    use Metric::*;
    use Unit::*;
    [
        Entry {
            higher_is_better: true,
            compare_threshold: Some(0.25),
            slo: false,
            ..entry(Throughput, "throughput", PerSecond, Mean)
        },
        Entry {
            higher_is_better: true,
            ..entry(CompletedPerS, "completed_per_s", PerSecond, Mean)
        },
        Entry {
            compare_threshold: Some(0.25),
            ..entry(ClaimP50, "claim_p50", Ms, MergedHistogram)
        },
        Entry {
            compare_threshold: Some(0.35),
            ..entry(ClaimP99, "claim_p99", Ms, MergedHistogram)
        },
        Entry {
            compare_threshold: Some(0.50),
            ..entry(ClaimP999, "claim_p999", Ms, MergedHistogram)
        },
        Entry {
            compare_threshold: Some(0.50),
            needs_arrivals: true,
            ..entry(QueueWaitP99, "queue_wait_p99", Ms, MergedHistogram)
        },
        Entry {
            compare_threshold: Some(0.50),
            needs_arrivals: true,
            ..entry(OldestPendingP99, "oldest_pending_p99", Ms, Mean)
        },
        Entry {
            compare_threshold: Some(0.50),
            needs_arrivals: true,
            ..entry(OldestPendingMax, "oldest_pending_max", Ms, Max)
        },
        entry(Duplicates, "duplicates", Count, Sum),
        entry(DuplicateExecutions, "duplicate_executions", Count, Sum),
        entry(Lost, "lost", Count, Sum),
        Entry {
            compare_threshold: Some(0.25),
            slo: false,
            ..entry(TransactionsPerJob, "transactions_per_job", Ratio, Mean)
        },
    ]
};

impl Metric {
    pub fn entry(self) -> &'static Entry {
        CATALOGUE
            .iter()
            .find(|e| e.metric == self)
            .expect("every metric has an entry")
    }

    pub fn name(self) -> &'static str {
        self.entry().name
    }

    /// The metric written `name`, if the catalogue has one.
    pub fn named(name: &str) -> Option<Metric> {
        CATALOGUE.iter().find(|e| e.name == name).map(|e| e.metric)
    }

    /// `v` as a person reads this metric: milliseconds scaled to their size, a rate per
    /// second, a ratio per job, a count.
    pub fn show(self, v: f64) -> String {
        match self.entry().unit {
            Unit::Ms => fmt_ms(v),
            Unit::PerSecond => format!("{v:.0}/s"),
            Unit::Ratio => format!("{v:.2}/job"),
            Unit::Count => format!("{v:.0}"),
        }
    }

    pub fn is_time(self) -> bool {
        self.entry().unit == Unit::Ms
    }

    /// The metrics an SLO may name, as written.
    pub fn slo_names() -> String {
        CATALOGUE
            .iter()
            .filter(|e| e.slo)
            .map(|e| e.name)
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The cell's figure from each repetition's own, by the catalogue's rule (`None`
    /// for no repetition). A merged-histogram metric is read off the merged histogram,
    /// not combined from per-repetition figures.
    pub fn over_repetitions(self, values: impl Iterator<Item = f64>) -> Option<f64> {
        let values: Vec<f64> = values.collect();
        if values.is_empty() {
            return None;
        }
        Some(match self.entry().combine {
            Combine::Mean => values.iter().sum::<f64>() / values.len() as f64,
            Combine::Max => values.iter().copied().fold(f64::MIN, f64::max),
            Combine::Sum => values.iter().sum(),
            Combine::MergedHistogram => {
                unreachable!("{} is read off the merged histogram", self.name())
            }
        })
    }

    /// The metrics `compare` judges, in the catalogue's order.
    pub fn compared() -> impl Iterator<Item = &'static Entry> {
        CATALOGUE.iter().filter(|e| e.compare_threshold.is_some())
    }
}

/// Milliseconds with as many digits as their size deserves: "1.3 s", "25 ms", "4.2 ms",
/// "0.47 ms".
pub fn fmt_ms(v: f64) -> String {
    if v >= 1000.0 {
        format!("{:.1} s", v / 1000.0)
    } else if v >= 10.0 {
        format!("{v:.0} ms")
    } else if v >= 1.0 {
        format!("{v:.1} ms")
    } else {
        format!("{v:.2} ms")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every metric has exactly one entry, under a name no other has, and reads back
    /// from it; the serialized form is the same name.
    #[test]
    fn every_metric_has_one_entry_and_one_name() {
        for e in &CATALOGUE {
            assert_eq!(CATALOGUE.iter().filter(|o| o.metric == e.metric).count(), 1);
            assert_eq!(Metric::named(e.name), Some(e.metric), "{}", e.name);
            assert_eq!(
                serde_json::to_string(&e.metric).unwrap(),
                format!("\"{}\"", e.name)
            );
        }
        assert!(Metric::named("throughputs").is_none());
        let reps = || [29.9, 25.5, 28.0].into_iter();
        assert_eq!(
            Metric::OldestPendingMax.over_repetitions(reps()),
            Some(29.9)
        );
        let p99 = Metric::OldestPendingP99.over_repetitions(reps()).unwrap();
        assert!((p99 - 27.8).abs() < 1e-9, "{p99}");
        assert_eq!(
            Metric::Lost.over_repetitions([1.0, 2.0].into_iter()),
            Some(3.0)
        );
        assert_eq!(
            Metric::Throughput.over_repetitions(std::iter::empty()),
            None
        );
        assert_eq!(Metric::compared().count(), 8);
        assert!(!Metric::slo_names().contains("throughput,"));
    }
}
