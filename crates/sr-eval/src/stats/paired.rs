//! Intervals of paired differences made by the method of their p-value, so
//! an interval excludes zero exactly when the test calls the difference
//! significant at 5%: the sign-flip (paired permutation) test inverted for
//! a mean difference, Clopper–Pearson intervals for McNemar's exact test,
//! and the percentile bootstrap with its own p-value for ratios (F1).

use super::{EXACT_PAIRS, Interval, Rng};

/// The level of every interval here (95%).
pub const ALPHA: f64 = 0.05;

/// Whether a paired test on `n` pairs can give a p-value below `level` at
/// all: its smallest is `2 / 2^n` (every pair one way), so 5 pairs never
/// conclude at 0.05.
pub fn can_conclude(n: usize, level: f64) -> bool {
    n >= fewest_pairs(level)
}

/// The fewest pairs, all changing one way, that a paired test calls
/// significant at `level`: the smallest `k` with `2 / 2^k < level`.
pub fn fewest_pairs(level: f64) -> usize {
    (1..64).find(|&k| 2.0 / 2f64.powi(k as i32) < level).unwrap_or(64)
}

/// The sign-flip distribution of a mean of paired differences `d`: every
/// assignment of signs up to [`EXACT_PAIRS`] pairs, else `resamples` seeded
/// random ones. Each assignment keeps the mean of its signed differences and
/// of its signs, so the test of any shift `δ` (is the mean difference `δ`?)
/// costs one pass over the assignments, and the interval is found by bisection.
pub struct SignFlip {
    mean: f64,
    /// Per assignment: (mean of `s_i d_i`, mean of `s_i`).
    draws: Vec<(f64, f64)>,
    exact: bool,
    min: f64,
    max: f64,
}

impl SignFlip {
    pub fn new(d: &[f64], resamples: usize, seed: u64) -> SignFlip {
        let n = d.len().max(1) as f64;
        let signed = |sign: &mut dyn FnMut(usize) -> bool| {
            let (mut a, mut s) = (0.0, 0.0);
            for (i, x) in d.iter().enumerate() {
                let flip = if sign(i) { -1.0 } else { 1.0 };
                a += flip * x;
                s += flip;
            }
            (a / n, s / n)
        };
        let exact = d.len() <= EXACT_PAIRS;
        let draws = if exact {
            (0u64..1 << d.len()).map(|mask| signed(&mut |i| mask >> i & 1 == 1)).collect()
        } else {
            let mut rng = Rng::new(seed);
            (0..resamples).map(|_| signed(&mut |_| rng.next_u64() >> 63 == 1)).collect()
        };
        let fold = |f: fn(f64, f64) -> f64, start| d.iter().copied().fold(start, f);
        SignFlip {
            mean: d.iter().sum::<f64>() / n,
            draws,
            exact,
            min: fold(f64::min, f64::INFINITY),
            max: fold(f64::max, f64::NEG_INFINITY),
        }
    }

    /// The two-sided p-value of "the mean difference is `shift`": the share
    /// of assignments whose mean of `s_i (d_i - shift)` is at least as far
    /// from zero as the observed `mean - shift` (Monte Carlo counted with
    /// the observed, `(1 + k) / (1 + B)`).
    pub fn p_value(&self, shift: f64) -> f64 {
        let observed = (self.mean - shift).abs();
        // Float noise does not break a tie.
        let tolerance = 1e-12 * (1.0 + self.max.abs().max(self.min.abs()) + shift.abs());
        let hits = self.draws.iter().filter(|(a, s)| (a - shift * s).abs() >= observed - tolerance).count();
        if self.exact {
            hits as f64 / self.draws.len() as f64
        } else {
            (1 + hits) as f64 / (1 + self.draws.len()) as f64
        }
    }

    /// The shifts the test does not reject at [`ALPHA`]; `None` when no
    /// shift is rejected (too few pairs to conclude anything).
    pub fn interval(&self) -> Option<Interval> {
        if self.draws.is_empty() || !self.min.is_finite() {
            return None;
        }
        let span = self.max - self.min + self.mean.abs();
        if span == 0.0 {
            return Some(Interval { low: self.mean, high: self.mean });
        }
        let rejects = |shift: f64| self.p_value(shift) < ALPHA;
        let (far_low, far_high) = (self.min - span, self.max + span);
        if !rejects(far_low) || !rejects(far_high) {
            return None;
        }
        // Zero, when rejected, brackets its side: the interval then excludes it.
        let zero = rejects(0.0);
        let from_low = if zero && 0.0 < self.mean { 0.0 } else { far_low };
        let from_high = if zero && 0.0 > self.mean { 0.0 } else { far_high };
        let mut low = edge(from_low, self.mean, &rejects);
        let mut high = edge(from_high, self.mean, &rejects);
        if !zero {
            low = low.min(0.0);
            high = high.max(0.0);
        }
        Some(Interval { low, high })
    }
}

/// Bisection between a rejected shift and an accepted one (the mean): the
/// accepted end once they meet.
fn edge(mut rejected: f64, mut accepted: f64, rejects: &dyn Fn(f64) -> bool) -> f64 {
    for _ in 0..80 {
        let middle = (rejected + accepted) / 2.0;
        if middle == rejected || middle == accepted {
            break;
        }
        if rejects(middle) {
            rejected = middle;
        } else {
            accepted = middle;
        }
    }
    accepted
}

/// The interval of a paired difference of pass rates, `(better - worse) / n`,
/// consistent with McNemar's exact test: the discordant share `(worse +
/// better) / n` and the share of the discordant pairs that got better each
/// get a Clopper–Pearson interval, and the difference ranges over both. It
/// excludes zero exactly when McNemar's exact p-value is below 0.05.
pub fn mcnemar_interval(worse: u64, better: u64, n: u64) -> Interval {
    let discordant = worse + better;
    let share = clopper_pearson(discordant, n);
    let up = clopper_pearson(better, discordant);
    let at = |p: f64, pick_high: bool| {
        let net = 2.0 * p - 1.0;
        // The difference is share × net; its extreme takes the share that magnifies it.
        let magnify = if pick_high { net > 0.0 } else { net < 0.0 };
        net * if magnify { share.high } else { share.low }
    };
    Interval { low: at(up.low, false), high: at(up.high, true) }
}

/// The exact (Clopper–Pearson) 95% interval of a proportion with `k`
/// successes of `n`: each bound is where one binomial tail is 2.5%.
/// `n = 0` is 0 to 1.
pub fn clopper_pearson(k: u64, n: u64) -> Interval {
    if n == 0 {
        return Interval { low: 0.0, high: 1.0 };
    }
    let half = ALPHA / 2.0;
    // P(X >= k) grows with p; P(X <= k) falls.
    let low = if k == 0 { 0.0 } else { solve(|p| 1.0 - binomial_cdf(k - 1, n, p) - half) };
    let high = if k == n { 1.0 } else { solve(|p| half - binomial_cdf(k, n, p)) };
    Interval { low, high }
}

/// The root in 0..1 of an increasing `f`, by bisection.
fn solve(f: impl Fn(f64) -> f64) -> f64 {
    let (mut low, mut high) = (0.0, 1.0);
    for _ in 0..100 {
        let middle = (low + high) / 2.0;
        if f(middle) < 0.0 {
            low = middle;
        } else {
            high = middle;
        }
    }
    (low + high) / 2.0
}

/// `P(X <= k)` for `X ~ Binomial(n, p)`, summed in log space.
fn binomial_cdf(k: u64, n: u64, p: f64) -> f64 {
    if p <= 0.0 {
        return 1.0;
    }
    if p >= 1.0 {
        return if k >= n { 1.0 } else { 0.0 };
    }
    let (ln_p, ln_q) = (p.ln(), (1.0 - p).ln());
    let mut ln_choose = 0.0;
    let mut sum = 0.0;
    for i in 0..=k.min(n) {
        if i > 0 {
            ln_choose += ((n - i + 1) as f64).ln() - (i as f64).ln();
        }
        sum += (ln_choose + i as f64 * ln_p + (n - i) as f64 * ln_q).exp();
    }
    sum.min(1.0)
}

/// The two-sided p-value of "no difference" that matches the percentile
/// bootstrap interval of the same resamples (`sorted`): twice the smaller
/// share of resamples on either side of zero, counted with the observed.
pub fn bootstrap_p_value(sorted: &[f64]) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let below = sorted.iter().filter(|v| **v <= 0.0).count();
    let above = sorted.iter().filter(|v| **v >= 0.0).count();
    Some((2.0 * (1 + below.min(above)) as f64 / (1 + sorted.len()) as f64).min(1.0))
}
