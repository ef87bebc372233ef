//! The sustainable arrival rate: the highest open-loop Poisson rate at which the
//! queue-wait and oldest-pending SLOs hold over a trial's measured window. The search
//! doubles the rate from a start until a step fails, then bisects the bracket until it
//! is narrower than the tolerance; every step is a trial of its own. [`RateSearch`] is
//! the pure part, so it is tested against a simulated server with a known limit.

use super::figures::CellFigures;
use crate::results::CellResult;
use crate::slo::Slo;
use crate::warnings::Warning;

/// The objective a search uses when the workload sets none on queue wait or
/// oldest-pending age.
pub const DEFAULT_SLO: &str = "queue_wait_p99<=1s";

/// Where a search stands: the highest rate that held and the lowest that did not.
#[derive(Debug, Clone)]
pub struct RateSearch {
    settings: crate::workload::RateSearch,
    held: Option<f64>,
    failed: Option<f64>,
    trials: u32,
}

impl RateSearch {
    pub fn new(settings: crate::workload::RateSearch) -> RateSearch {
        RateSearch {
            settings,
            held: None,
            failed: None,
            trials: 0,
        }
    }

    /// The next rate to try, or `None` when the search is done.
    pub fn next_rate(&self) -> Option<f64> {
        if self.trials >= self.settings.max_trials {
            return None;
        }
        match (self.held, self.failed) {
            (None, None) => Some(self.settings.start_per_s),
            (Some(lo), None) => Some(lo * 2.0),
            // Even the start failed: halve, down to 1/64 of the start.
            (None, Some(hi)) => (hi > self.settings.start_per_s / 64.0 * 1.5).then_some(hi / 2.0),
            (Some(lo), Some(hi)) => {
                ((hi - lo) / lo > self.settings.tolerance).then_some((lo + hi) / 2.0)
            }
        }
    }

    pub fn record(&mut self, rate: f64, held: bool) {
        self.trials += 1;
        if held {
            self.held = Some(self.held.map_or(rate, |h| h.max(rate)));
        } else {
            self.failed = Some(self.failed.map_or(rate, |f| f.min(rate)));
        }
    }

    /// The highest rate that held, once a higher one failed; `None` when no step held,
    /// or (as a lower bound) the highest that held when none failed.
    pub fn sustained(&self) -> Option<f64> {
        self.held
    }
}

pub use crate::results::{SearchResult, SearchStep};

/// The SLOs a search judges a step by: the run's queue-wait and oldest-pending ones,
/// or [`DEFAULT_SLO`].
pub fn search_slos(slos: &[Slo]) -> Vec<Slo> {
    let own: Vec<Slo> = slos
        .iter()
        .filter(|s| s.metric.entry().needs_arrivals)
        .copied()
        .collect();
    if own.is_empty() {
        vec![Slo::parse(DEFAULT_SLO).expect("the default parses")]
    } else {
        own
    }
}

/// Whether a step's cell held: its SLOs met and its producer on schedule (a producer
/// that fell behind offered less than the rate, so the step proves nothing).
pub fn step_holds(cell: &CellResult, slos: &[Slo]) -> SearchStep {
    let f = CellFigures::of(cell);
    let mut misses = f.misses(&search_slos(slos));
    for t in &cell.trials {
        for w in &t.warnings {
            if let Warning::ProducerBehind { .. } = w {
                misses.push(w.to_string());
            }
        }
    }
    SearchStep {
        rate_per_s: cell.arrival_rate_per_s.unwrap_or(0.0),
        held: misses.is_empty(),
        completed_per_s: f.completed_per_s,
        misses,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    /// A simulated server: `servers` workers, each job takes `service_s`, jobs arrive
    /// as a Poisson process at `rate` for `window_s`; returns the p99 queue wait (s).
    fn simulate(rate: f64, servers: usize, service_s: f64, window_s: f64, seed: u64) -> f64 {
        let mut rng = rand::rngs::SmallRng::seed_from_u64(seed);
        let mut free_at = vec![0.0f64; servers];
        let mut t = 0.0;
        let mut waits = Vec::new();
        loop {
            t += -(1.0 - rng.r#gen::<f64>()).ln() / rate;
            if t > window_s {
                break;
            }
            let (i, &earliest) = free_at
                .iter()
                .enumerate()
                .min_by(|a, b| a.1.total_cmp(b.1))
                .expect("at least one server");
            let start = earliest.max(t);
            waits.push(start - t);
            free_at[i] = start + service_s;
        }
        waits.sort_by(f64::total_cmp);
        waits[(waits.len() as f64 * 0.99) as usize - 1]
    }

    fn search(servers: usize, service_s: f64, start: f64) -> RateSearch {
        let mut s = RateSearch::new(crate::workload::RateSearch {
            start_per_s: start,
            max_trials: 20,
            tolerance: 0.05,
        });
        let mut seed = 0;
        while let Some(rate) = s.next_rate() {
            seed += 1;
            // The SLO: p99 queue wait within 50 service times over a 60 s window.
            let held = simulate(rate, servers, service_s, 60.0, seed) <= 50.0 * service_s;
            s.record(rate, held);
        }
        s
    }

    #[test]
    fn finds_a_simulated_servers_limit_within_ten_percent() {
        for (servers, service_s, start) in [(4, 0.01, 50.0), (16, 0.002, 100.0), (1, 0.05, 80.0)] {
            let limit = servers as f64 / service_s;
            let s = search(servers, service_s, start);
            let found = s.sustained().expect("a rate held");
            assert!(
                s.failed.is_some_and(|f| f > found),
                "a failing step above it"
            );
            assert!(
                (found - limit).abs() / limit <= 0.10,
                "{servers} servers x {service_s}s: found {found:.0}/s, limit {limit:.0}/s"
            );
        }
    }

    #[test]
    fn doubles_then_bisects_and_stops_at_the_budget() {
        let mut s = RateSearch::new(crate::workload::RateSearch {
            start_per_s: 100.0,
            max_trials: 5,
            tolerance: 0.01,
        });
        let mut asked = Vec::new();
        while let Some(r) = s.next_rate() {
            asked.push(r);
            s.record(r, r <= 300.0);
        }
        assert_eq!(asked, vec![100.0, 200.0, 400.0, 300.0, 350.0]);
        assert_eq!(s.sustained(), Some(300.0));
    }

    #[test]
    fn a_failing_start_halves_and_may_find_nothing() {
        let mut s = RateSearch::new(crate::workload::RateSearch {
            start_per_s: 64.0,
            max_trials: 50,
            tolerance: 0.1,
        });
        while let Some(r) = s.next_rate() {
            s.record(r, false);
        }
        assert_eq!(s.sustained(), None);
    }
}
