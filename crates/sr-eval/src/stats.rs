//! The statistics of results and comparisons, written out so that each is
//! tested against known values: the Wilson score interval (pass rates), a
//! seeded percentile bootstrap (means, ratios, paired differences), McNemar's
//! exact test (paired pass/fail), a paired permutation test (paired
//! differences of means, [`paired::SignFlip`]), the unbiased pass@k estimator, and
//! intervals of paired differences consistent with their tests ([`paired`]).
//!
//! Every random draw comes from [`Rng`] with a fixed seed, so the same results
//! give the same intervals and p-values on every machine.

pub mod paired;

use serde::{Deserialize, Serialize};

/// The normal quantile of 97.5%: every interval here is a 95% interval.
pub const Z95: f64 = 1.959_963_984_540_054;

/// Resamples of a summary's bootstrap intervals.
pub const SUMMARY_RESAMPLES: usize = 2_000;
/// Resamples of a comparison's intervals and Monte Carlo permutations.
pub const COMPARE_RESAMPLES: usize = 10_000;
/// Up to this many pairs, the permutation test enumerates every assignment
/// ([`paired::SignFlip`]).
pub const EXACT_PAIRS: usize = 14;
/// The seed of every draw.
pub const SEED: u64 = 0x5eed_5eed;

/// The low and high bounds of a 95% interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    pub low: f64,
    pub high: f64,
}

/// SplitMix64 (Steele, Lea and Flood, 2014): small, fast, and the same
/// sequence everywhere for a seed.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (Lemire's multiply-shift; `n` > 0).
    pub fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.next_u64()) * n as u128) >> 64) as usize
    }
}

/// The Wilson score interval of a proportion `p` observed over `n` trials.
/// With no trials, anything is possible: 0 to 1.
pub fn wilson(p: f64, n: usize) -> Interval {
    if n == 0 {
        return Interval { low: 0.0, high: 1.0 };
    }
    let (n, z2) = (n as f64, Z95 * Z95);
    let denominator = 1.0 + z2 / n;
    let center = (p + z2 / (2.0 * n)) / denominator;
    let half = Z95 * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).max(0.0).sqrt() / denominator;
    Interval { low: (center - half).max(0.0), high: (center + half).min(1.0) }
}

/// The percentile bootstrap of a statistic of `n` units: `resamples` times,
/// `n` units drawn with replacement (their indices are passed to `stat`,
/// which returns `None` where the statistic is undefined); the 2.5th and
/// 97.5th percentiles of the defined values. `None` when no resample defines it.
pub fn bootstrap(n: usize, resamples: usize, seed: u64, stat: impl FnMut(&[usize]) -> Option<f64>) -> Option<Interval> {
    let values = bootstrap_values(n, resamples, seed, stat);
    (!values.is_empty()).then(|| Interval { low: percentile(&values, 0.025), high: percentile(&values, 0.975) })
}

/// The defined values of [`bootstrap`]'s resamples, sorted.
pub fn bootstrap_values(
    n: usize,
    resamples: usize,
    seed: u64,
    mut stat: impl FnMut(&[usize]) -> Option<f64>,
) -> Vec<f64> {
    if n == 0 {
        return Vec::new();
    }
    let mut rng = Rng::new(seed);
    let mut drawn = vec![0; n];
    let mut values = Vec::with_capacity(resamples);
    for _ in 0..resamples {
        for slot in drawn.iter_mut() {
            *slot = rng.below(n);
        }
        if let Some(value) = stat(&drawn).filter(|v| v.is_finite()) {
            values.push(value);
        }
    }
    values.sort_by(f64::total_cmp);
    values
}

/// The `q` quantile of sorted values (at least one), interpolated linearly
/// between ranks (Hyndman and Fan's type 7, numpy's default).
pub fn percentile(sorted: &[f64], q: f64) -> f64 {
    let h = (sorted.len() - 1) as f64 * q;
    let below = h.floor() as usize;
    let above = (below + 1).min(sorted.len() - 1);
    sorted[below] + (h - below as f64) * (sorted[above] - sorted[below])
}

/// McNemar's exact test: of the pairs that disagree, `b` went one way and
/// `c` the other; the two-sided p-value of `min(b, c)` under a fair coin
/// (a binomial test of `b` in `b + c` at one half).
pub fn mcnemar_exact(b: u64, c: u64) -> f64 {
    let n = b + c;
    if n == 0 {
        return 1.0;
    }
    // Each binomial probability as a logarithm, summed in log space (0.5^n underflows past n = 1074).
    let ln_half_n = n as f64 * std::f64::consts::LN_2;
    let mut ln_choose = 0.0;
    let mut terms = Vec::new();
    for i in 0..=b.min(c) {
        if i > 0 {
            ln_choose += ((n - i + 1) as f64).ln() - (i as f64).ln();
        }
        terms.push(ln_choose - ln_half_n);
    }
    let most = terms.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let tail = most.exp() * terms.iter().map(|t| (t - most).exp()).sum::<f64>();
    (2.0 * tail).min(1.0)
}

/// The unbiased estimator of pass@k from `n` samples of which `c` passed
/// (Chen et al., 2021): the chance that at least one of `k` samples drawn
/// without replacement passes, `1 - C(n - c, k) / C(n, k)`.
pub fn pass_at_k(n: u32, c: u32, k: u32) -> f64 {
    if n.saturating_sub(c) < k {
        return 1.0;
    }
    let mut none = 1.0;
    for i in (n - c + 1)..=n {
        none *= 1.0 - f64::from(k) / f64::from(i);
    }
    1.0 - none
}

/// The mean of `values`; `None` for none.
pub fn mean(values: impl IntoIterator<Item = f64>) -> Option<f64> {
    let (mut sum, mut n) = (0.0, 0usize);
    for value in values {
        sum += value;
        n += 1;
    }
    (n > 0).then(|| sum / n as f64)
}

#[cfg(test)]
mod tests;
