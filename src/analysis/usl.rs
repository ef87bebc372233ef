//! The Universal Scalability Law, X(N) = λN / (1 + σ(N−1) + κN(N−1)), fitted to a worker
//! sweep: λ is one worker's throughput, σ the share lost to contention (queueing on a
//! shared resource: the claim's locks), κ the coherency cost (every worker paying for
//! every other: lock waits that grow with pairs of workers). With κ > 0 throughput peaks
//! at N* = √((1−σ)/κ) workers and falls after it.
//!
//! N/X(N) = 1/λ + (σ/λ)(N−1) + (κ/λ)N(N−1) is linear in its three coefficients, so the
//! fit is ordinary least squares (linregress) on that form, as Gunther fits it.

use linregress::{FormulaRegressionBuilder, RegressionDataBuilder};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct UslFit {
    pub lambda: f64,
    pub sigma: f64,
    pub kappa: f64,
    /// R² of the fitted throughput against the measured, on the throughput scale.
    pub r_squared: f64,
    /// Workers at the predicted peak (`None`: no retrograde term, so no peak).
    pub peak_workers: Option<f64>,
}

impl UslFit {
    pub fn throughput(&self, n: f64) -> f64 {
        self.lambda * n / (1.0 + self.sigma * (n - 1.0) + self.kappa * n * (n - 1.0))
    }
}

/// Fewer distinct worker counts than this leave the three coefficients without a
/// residual to judge the fit by.
pub const MIN_POINTS: usize = 4;

/// Fits `(workers, throughput)` points; `None` with fewer than [`MIN_POINTS`] distinct
/// worker counts, a zero throughput, or a fit whose one-worker rate is not positive.
pub fn fit(points: &[(f64, f64)]) -> Option<UslFit> {
    let mut ns: Vec<f64> = points.iter().map(|p| p.0).collect();
    ns.sort_by(f64::total_cmp);
    ns.dedup();
    if ns.len() < MIN_POINTS || points.iter().any(|p| p.1 <= 0.0 || p.0 < 1.0) {
        return None;
    }
    let y: Vec<f64> = points.iter().map(|(n, x)| n / x).collect();
    let a: Vec<f64> = points.iter().map(|(n, _)| n - 1.0).collect();
    let b: Vec<f64> = points.iter().map(|(n, _)| n * (n - 1.0)).collect();
    let data = RegressionDataBuilder::new()
        .build_from(vec![("Y", y), ("A", a), ("B", b)])
        .ok()?;
    let model = FormulaRegressionBuilder::new()
        .data(&data)
        .data_columns("Y", ["A", "B"])
        .fit_without_statistics()
        .ok()?;
    let (inv_lambda, s, k) = (model[0], model[1], model[2]);
    if inv_lambda <= 0.0 {
        return None;
    }
    let lambda = 1.0 / inv_lambda;
    let (sigma, kappa) = (s * lambda, k * lambda);
    let mut f = UslFit {
        lambda,
        sigma,
        kappa,
        r_squared: 0.0,
        peak_workers: (kappa > 0.0 && sigma < 1.0).then(|| ((1.0 - sigma) / kappa).sqrt()),
    };
    let mean = points.iter().map(|p| p.1).sum::<f64>() / points.len() as f64;
    let total: f64 = points.iter().map(|p| (p.1 - mean).powi(2)).sum();
    let resid: f64 = points
        .iter()
        .map(|&(n, x)| (x - f.throughput(n)).powi(2))
        .sum();
    f.r_squared = if total > 0.0 {
        1.0 - resid / total
    } else {
        1.0
    };
    Some(f)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(got: f64, want: f64, tol: f64) -> bool {
        (got - want).abs() <= tol * want.abs()
    }

    #[test]
    fn recovers_known_coefficients_from_exact_points() {
        let truth = UslFit {
            lambda: 950.0,
            sigma: 0.08,
            kappa: 0.002,
            r_squared: 1.0,
            peak_workers: None,
        };
        let pts: Vec<(f64, f64)> = [1.0, 2.0, 4.0, 8.0, 16.0, 32.0]
            .iter()
            .map(|&n| (n, truth.throughput(n)))
            .collect();
        let f = fit(&pts).unwrap();
        assert!(close(f.lambda, 950.0, 0.05), "{f:?}");
        assert!(close(f.sigma, 0.08, 0.05), "{f:?}");
        assert!(close(f.kappa, 0.002, 0.05), "{f:?}");
        assert!(f.r_squared > 0.999);
        let peak = ((1.0 - 0.08) / 0.002f64).sqrt();
        assert!(close(f.peak_workers.unwrap(), peak, 0.05));
    }

    #[test]
    fn recovers_them_within_five_percent_from_noisy_points() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand::rngs::SmallRng::seed_from_u64(9);
        let truth = |n: f64| 1200.0 * n / (1.0 + 0.05 * (n - 1.0) + 0.001 * n * (n - 1.0));
        // Three repetitions per worker count, each within ±0.5%.
        let pts: Vec<(f64, f64)> = [1.0, 2.0, 4.0, 8.0, 16.0, 24.0, 32.0, 48.0]
            .iter()
            .flat_map(|&n| [n, n, n])
            .map(|n| (n, truth(n) * (1.0 + rng.gen_range(-0.005..0.005))))
            .collect();
        let f = fit(&pts).unwrap();
        assert!(close(f.lambda, 1200.0, 0.05), "{f:?}");
        assert!(close(f.sigma, 0.05, 0.05), "{f:?}");
        assert!(close(f.kappa, 0.001, 0.05), "{f:?}");
    }

    #[test]
    fn too_few_worker_counts_are_not_fitted() {
        assert!(fit(&[(1.0, 10.0), (4.0, 30.0), (16.0, 60.0)]).is_none());
        assert!(fit(&[(1.0, 10.0), (2.0, 0.0), (4.0, 30.0), (8.0, 40.0)]).is_none());
    }

    #[test]
    fn linear_scaling_has_no_peak() {
        let pts: Vec<(f64, f64)> = [1.0, 2.0, 4.0, 8.0]
            .iter()
            .map(|&n| (n, 100.0 * n))
            .collect();
        let f = fit(&pts).unwrap();
        assert!(close(f.lambda, 100.0, 0.01));
        assert!(f.sigma.abs() < 1e-6 && f.kappa.abs() < 1e-6);
    }
}
