//! When jobs arrive: one rate for the whole trial, or a rate per phase of its timeline.
//! A Poisson process has no memory, so a gap that would cross into the next phase is
//! redrawn from that phase's start at its own rate: the arrivals in each phase are that
//! phase's process exactly, and a phase at rate 0 has none.

use crate::workload::{Arrivals, Workload};

/// The rate in force over each stretch of the trial, in seconds since its start.
#[derive(Debug, Clone, PartialEq)]
pub struct Schedule {
    /// (from, to, jobs per second), in order, end to end.
    stretches: Vec<(f64, f64, f64)>,
    arrivals: Arrivals,
}

impl Schedule {
    /// The workload's phases' rates, or its one rate from start to end; `None` when no
    /// job ever arrives.
    pub fn of(w: &Workload) -> Option<Schedule> {
        let stretches: Vec<(f64, f64, f64)> = if w.timeline.is_empty() {
            vec![(0.0, f64::INFINITY, w.producer_rate_per_s?)]
        } else {
            w.timeline
                .iter()
                .map(|p| {
                    let rate = p.rate_per_s(w.producer_rate_per_s);
                    (p.from.as_secs_f64(), p.to.as_secs_f64(), rate)
                })
                .collect()
        };
        stretches.iter().any(|s| s.2 > 0.0).then_some(Schedule {
            stretches,
            arrivals: w.arrivals,
        })
    }

    /// The first arrival after `after` (s), with `uniform01` drawing in [0, 1); `None`
    /// when none comes before the schedule ends.
    pub fn next(&self, mut after: f64, mut uniform01: impl FnMut() -> f64) -> Option<f64> {
        for &(from, to, rate) in &self.stretches {
            if after >= to {
                continue;
            }
            after = after.max(from);
            if rate <= 0.0 {
                continue;
            }
            let gap = match self.arrivals {
                Arrivals::Poisson => -(1.0 - uniform01()).ln() / rate,
                Arrivals::Uniform => 1.0 / rate,
            };
            if after + gap < to {
                return Some(after + gap);
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schedule(stretches: Vec<(f64, f64, f64)>, arrivals: Arrivals) -> Schedule {
        Schedule {
            stretches,
            arrivals,
        }
    }

    fn all(s: &Schedule, seed: u64) -> Vec<f64> {
        use rand::{Rng, SeedableRng};
        let mut rng = rand::rngs::SmallRng::seed_from_u64(seed);
        let mut out = Vec::new();
        let mut t = 0.0;
        while let Some(n) = s.next(t, || rng.r#gen::<f64>()) {
            out.push(n);
            t = n;
        }
        out
    }

    #[test]
    fn each_phase_gets_its_own_rate_and_a_phase_at_zero_gets_none() {
        let s = schedule(
            vec![(0.0, 10.0, 100.0), (10.0, 20.0, 0.0), (20.0, 30.0, 1000.0)],
            Arrivals::Poisson,
        );
        for seed in 0..20 {
            let at = all(&s, seed);
            let count = |a: f64, b: f64| at.iter().filter(|t| **t >= a && **t < b).count();
            // Poisson counts: 1,000 ± 5 sd and 10,000 ± 5 sd.
            assert!(
                (842..1158).contains(&count(0.0, 10.0)),
                "{}",
                count(0.0, 10.0)
            );
            assert_eq!(count(10.0, 20.0), 0);
            assert!((9500..10500).contains(&count(20.0, 30.0)));
            assert!(at.windows(2).all(|w| w[0] < w[1]));
            assert!(*at.last().unwrap() < 30.0);
        }
    }

    #[test]
    fn even_arrivals_restart_at_a_phase_boundary() {
        let s = schedule(vec![(0.0, 1.0, 4.0), (1.0, 2.0, 2.0)], Arrivals::Uniform);
        assert_eq!(all(&s, 0), vec![0.25, 0.5, 0.75, 1.5]);
        // One rate for the whole trial never ends.
        let one = schedule(vec![(0.0, f64::INFINITY, 2.0)], Arrivals::Uniform);
        assert_eq!(one.next(7.0, || 0.0), Some(7.5));
    }
}
