//! Where a series of nightly figures shifted for good: E-divisive means (Matteson and
//! James, 2014, with α = 1), the method open-source change-point services run on noisy
//! benchmark histories. It splits a series where the energy distance between the two
//! sides is largest, keeps the split only if fewer than `significance` of random
//! reorderings of that stretch split as well, and repeats on the stretches it made.
//! Distribution-free: it needs no assumption about how a night's figure is spread.
//!
//! Written here rather than taken from a crate: the one Rust port on crates.io has had a
//! single release (2021), and the method is fifty lines over a distance matrix.

use rand::SeedableRng;
use rand::rngs::SmallRng;
use rand::seq::SliceRandom;

/// How the search is run; [`Settings::default`] is what `history` uses.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Settings {
    /// The fewest points a stretch between change points may hold.
    pub min_size: usize,
    /// A split counts when at most this share of reorderings split as strongly.
    pub significance: f64,
    /// Reorderings per test: the smallest share it can tell is 1 / (n + 1).
    pub permutations: usize,
    /// The reorderings' seed, so that a history gives the same answer each time.
    pub seed: u64,
}

impl Default for Settings {
    /// 499 reorderings at 1 %: many series are tested at once (each cell's metrics), so
    /// a 5 % test would raise a false alarm on most flat histories.
    fn default() -> Settings {
        Settings {
            min_size: 3,
            significance: 0.01,
            permutations: 499,
            seed: 1,
        }
    }
}

/// One change point: the first index of the new level, and the test's p-value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ChangePoint {
    pub at: usize,
    pub p_value: f64,
}

/// The significant change points of `xs`, in index order.
pub fn e_divisive(xs: &[f64], s: Settings) -> Vec<ChangePoint> {
    let n = xs.len();
    let mut found: Vec<ChangePoint> = Vec::new();
    if n < 2 * s.min_size {
        return found;
    }
    let mut rng = SmallRng::seed_from_u64(s.seed);
    let mut bounds = vec![0, n];
    loop {
        // The strongest split of any stretch between the change points found so far.
        let best = bounds
            .windows(2)
            .filter_map(|w| {
                best_split(&xs[w[0]..w[1]], s.min_size).map(|(at, q)| (w[0], w[1], at, q))
            })
            .max_by(|a, b| a.3.total_cmp(&b.3));
        let Some((from, to, at, q)) = best else {
            return found;
        };
        let mut stretch = xs[from..to].to_vec();
        // The test is decided as soon as enough reorderings split as strongly that the
        // p-value can only stay above `significance`: a flat stretch (most series, most
        // nights) is done after a few reorderings instead of all of them. The decision
        // is the full test's; only the p-value of a split that is not kept is left out.
        let enough = (s.significance * (s.permutations + 1) as f64).floor() as usize;
        let mut at_least = 0;
        for _ in 0..s.permutations {
            stretch.shuffle(&mut rng);
            if best_split(&stretch, s.min_size).is_some_and(|(_, pq)| pq >= q) {
                at_least += 1;
                if at_least >= enough {
                    return found;
                }
            }
        }
        let p_value = (at_least + 1) as f64 / (s.permutations + 1) as f64;
        if p_value > s.significance {
            return found;
        }
        found.push(ChangePoint {
            at: from + at,
            p_value,
        });
        found.sort_by_key(|c| c.at);
        bounds.push(from + at);
        bounds.sort_unstable();
    }
}

/// The split of `xs` (the first index of its right side) with the largest scaled energy
/// distance between a left stretch `xs[..τ]` and the right stretch that follows it,
/// `xs[τ..κ]` for the best end κ (so a shift that later reverts still stands out), and
/// that q̂ = mn/(m+n) · (2/(mn)·ΣΣ|x−y| − Σ|x−x'|/C(m,2) − Σ|y−y'|/C(n,2)); `None`
/// when no split leaves `min_size` on each side. O(n²) time, O(n) memory.
fn best_split(xs: &[f64], min_size: usize) -> Option<(usize, f64)> {
    let n = xs.len();
    let min_size = min_size.max(2);
    if n < 2 * min_size {
        return None;
    }
    // self_to[y]: the summed distance of xs[y] to the points before it; to[y]: to the
    // points of the left stretch xs[..tau], kept up to date as tau grows (O(n) memory;
    // the sums run in index order, as a full matrix of prefix sums would).
    // Built point by point across the whole vector (an element-wise update the compiler
    // vectorises; each sum still runs in index order).
    let mut self_to = vec![0.0; n];
    for (j, &x) in xs.iter().enumerate() {
        for (d, y) in self_to[j + 1..].iter_mut().zip(&xs[j + 1..]) {
            *d += (y - x).abs();
        }
    }
    let mut to = vec![0.0; n];
    // q̂ rewritten without a division per pair: with m = τ and k = κ − τ,
    // q̂ = 2/(m+k) · (ΣΣ|x−y| − k·Σ|x−x'|/(m−1) − m·Σ|y−y'|/(k−1)), and 1/j from a table.
    let inv: Vec<f64> = (0..=n).map(|j| 1.0 / j.max(1) as f64).collect();
    let mut best: Option<(usize, f64)> = None;
    let mut left = 0.0;
    for tau in 1..=n - min_size {
        // Point tau-1 joins the left stretch.
        let joined = xs[tau - 1];
        left += self_to[tau - 1];
        for (d, x) in to[tau..].iter_mut().zip(&xs[tau..]) {
            *d += (x - joined).abs();
        }
        if tau < min_size {
            continue;
        }
        let m = tau as f64;
        let left_mean = left * inv[tau - 1];
        let (mut between, mut right) = (0.0, 0.0);
        for y in tau..tau + min_size - 1 {
            between += to[y];
            right += self_to[y] - to[y];
        }
        // Only the split is wanted, not its end: the largest q̂ over the ends, without a
        // branch per end.
        let mut at_tau = f64::NEG_INFINITY;
        let mut k = (min_size - 1) as f64;
        for y in tau + min_size - 1..n {
            // Point y joins the right stretch, which is then xs[tau..=y], k points.
            between += to[y];
            right += self_to[y] - to[y];
            k += 1.0;
            let q = 2.0 * inv[y + 1] * (between - k * left_mean - m * right * inv[y - tau]);
            // Not f64::max: its NaN handling costs more than the rest of the loop.
            at_tau = if q > at_tau { q } else { at_tau };
        }
        if best.is_none_or(|(_, b)| at_tau > b) {
            best = Some((tau, at_tau));
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::Rng;

    /// `n` nights around `level` with `noise` (a share of it, uniform), from `seed`.
    fn nights(seed: u64, levels: &[(usize, f64)], noise: f64) -> Vec<f64> {
        let mut rng = SmallRng::seed_from_u64(seed);
        levels
            .iter()
            .flat_map(|&(n, level)| std::iter::repeat_n(level, n))
            .map(|l| l * (1.0 + rng.gen_range(-noise..noise)))
            .collect()
    }

    /// A 10 % step after 20 of 30 nights with ±3 % noise is found where it is, on every
    /// seed tried; a flat series with the same noise gives nothing on any of them.
    #[test]
    fn a_step_is_found_where_it_begins_and_a_flat_series_has_none() {
        for seed in 0..20 {
            let step = nights(seed, &[(20, 1000.0), (10, 900.0)], 0.03);
            let found = e_divisive(&step, Settings::default());
            assert_eq!(found.len(), 1, "seed {seed}: {found:?}");
            assert!((19..=21).contains(&found[0].at), "seed {seed}: {found:?}");
            let flat = nights(seed, &[(30, 1000.0)], 0.03);
            assert_eq!(e_divisive(&flat, Settings::default()), [], "seed {seed}");
        }
    }

    /// Two steps (down, then back up) are both found; a series too short for two
    /// stretches of `min_size` gives none; the answer repeats for a seed.
    #[test]
    fn two_steps_are_both_found_and_the_answer_repeats() {
        let xs = nights(3, &[(12, 10.0), (10, 14.0), (12, 10.0)], 0.02);
        let found = e_divisive(&xs, Settings::default());
        let at: Vec<usize> = found.iter().map(|c| c.at).collect();
        assert_eq!(at.len(), 2, "{found:?}");
        assert!(
            (11..=13).contains(&at[0]) && (21..=23).contains(&at[1]),
            "{at:?}"
        );
        assert_eq!(found, e_divisive(&xs, Settings::default()));
        assert_eq!(
            e_divisive(&[1.0, 5.0, 1.0, 5.0, 9.0], Settings::default()),
            []
        );
    }

    /// The split statistic is largest at the true split of a clean step, and the
    /// incremental sums equal the direct ones.
    #[test]
    fn the_split_statistic_peaks_at_a_clean_step() {
        let xs = [1.0, 1.0, 1.0, 1.0, 5.0, 5.0, 5.0];
        let (at, q) = best_split(&xs, 2).unwrap();
        assert_eq!(at, 4);
        // Direct: between 12 pairs of distance 4; within 0 → q = 4·3/7 · 2·48/12.
        assert!((q - 12.0 / 7.0 * 8.0).abs() < 1e-9, "{q}");
    }
}
