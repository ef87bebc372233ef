//! Confidence from repetitions: a percentile bootstrap of the mean over a cell's
//! repetitions (resampling whole repetitions, since runs of the same cell differ by
//! more than the claims within one do), and the rule that flags repetitions that
//! disagree too much to be summarised by one number.

use crate::results::CellResult;
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};

/// Resamples per interval: enough for a stable 95% interval of a mean.
const RESAMPLES: usize = 2000;

/// A mean with its 95% percentile-bootstrap interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    pub mean: f64,
    pub low: f64,
    pub high: f64,
}

/// The 95% interval of the mean of `xs` (`None` below two values: no spread to
/// resample). Seeded, so the same run always reports the same interval.
pub fn mean_interval(xs: &[f64]) -> Option<Interval> {
    if xs.len() < 2 {
        return None;
    }
    let mean = xs.iter().sum::<f64>() / xs.len() as f64;
    let mut rng = rand::rngs::SmallRng::seed_from_u64(0xb007);
    let mut means: Vec<f64> = (0..RESAMPLES)
        .map(|_| {
            (0..xs.len())
                .map(|_| xs[rng.gen_range(0..xs.len())])
                .sum::<f64>()
                / xs.len() as f64
        })
        .collect();
    means.sort_by(f64::total_cmp);
    let at = |q: f64| means[((RESAMPLES as f64 - 1.0) * q).round() as usize];
    Some(Interval {
        mean,
        low: at(0.025),
        high: at(0.975),
    })
}

/// Repetitions disagree when their throughputs spread more than this share of their
/// mean (coefficient of variation)...
pub const MAX_THROUGHPUT_CV: f64 = 0.10;
/// ...or their claim p99s differ by more than this factor.
pub const MAX_P99_RATIO: f64 = 2.0;

/// Why a cell's repetitions disagree, if they do.
pub fn disagreement(c: &CellResult) -> Option<String> {
    if c.trials.len() < 2 {
        return None;
    }
    let x: Vec<f64> = c.trials.iter().map(|t| t.completed_per_s).collect();
    let mean = x.iter().sum::<f64>() / x.len() as f64;
    let var = x.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (x.len() - 1) as f64;
    let cv = if mean > 0.0 { var.sqrt() / mean } else { 0.0 };
    if cv > MAX_THROUGHPUT_CV {
        return Some(format!(
            "completed/s varies {:.0}% between repetitions (bound {:.0}%)",
            cv * 100.0,
            MAX_THROUGHPUT_CV * 100.0
        ));
    }
    let p99: Vec<f64> = c
        .trials
        .iter()
        .filter(|t| t.claim_latency.count > 0)
        .map(|t| t.claim_latency.p99_us as f64)
        .collect();
    let (lo, hi) = p99
        .iter()
        .fold((f64::MAX, 0.0f64), |(lo, hi), &v| (lo.min(v), hi.max(v)));
    if p99.len() >= 2 && lo > 0.0 && hi / lo > MAX_P99_RATIO {
        return Some(format!(
            "claim p99 ranges {:.2}-{:.2} ms between repetitions ({:.1}x, bound {MAX_P99_RATIO:.0}x)",
            lo / 1e3,
            hi / 1e3,
            hi / lo
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::TrialResult;

    #[test]
    fn interval_brackets_the_mean_and_narrows_with_agreement() {
        let wide = mean_interval(&[80.0, 100.0, 120.0]).unwrap();
        let narrow = mean_interval(&[99.0, 100.0, 101.0]).unwrap();
        assert_eq!(wide.mean, 100.0);
        assert!(wide.low < 100.0 && wide.high > 100.0);
        assert!(wide.low >= 80.0 && wide.high <= 120.0);
        assert!(narrow.high - narrow.low < (wide.high - wide.low) / 5.0);
        assert!(mean_interval(&[5.0]).is_none());
    }

    fn cell(rates: &[f64], p99s_us: &[u64]) -> CellResult {
        let trials = rates
            .iter()
            .zip(p99s_us)
            .map(|(&r, &p)| {
                let mut t = TrialResult {
                    completed_per_s: r,
                    ..TrialResult::default()
                };
                t.claim_latency.count = 100;
                t.claim_latency.p99_us = p;
                t
            })
            .collect();
        CellResult::fetch_order(crate::strategy::Strategy::PRODUCTION, 4, 10, trials)
    }

    #[test]
    fn flags_spread_throughput_or_tails_only() {
        assert_eq!(
            disagreement(&cell(&[100.0, 102.0, 98.0], &[900, 1000, 1100])),
            None
        );
        let e = disagreement(&cell(&[100.0, 150.0, 60.0], &[1000, 1000, 1000])).unwrap();
        assert!(e.contains("completed/s varies"), "{e}");
        let e = disagreement(&cell(&[100.0, 101.0, 99.0], &[1000, 2500, 1100])).unwrap();
        assert!(e.contains("claim p99 ranges 1.00-2.50 ms"), "{e}");
        assert_eq!(disagreement(&cell(&[100.0], &[1000])), None);
    }
}
