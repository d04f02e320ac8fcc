//! How the cost of a hostile input grows with its size: the generator's size
//! is doubled until one run takes a target time, then the input is made
//! `factor` times larger. `cargo xtask bench scaling` (a release `sr check`)
//! and sr-hir's scaling test (an in-process check of a debug build) share it.

use std::time::Duration;

use crate::hostile::Generator;

/// How to measure.
pub struct Scaling {
    /// The time the smaller input must take at least, so that fixed costs
    /// (starting a process, timer noise) do not hide how the work grows.
    pub target: Duration,
    /// How much larger the second input is (in the generator's size).
    pub factor: usize,
    /// Largest input (in bytes, both files together) either run may get.
    pub max_bytes: usize,
    /// Runs per size; the fastest counts.
    pub runs: usize,
}

#[derive(Debug, Clone, Copy)]
pub struct Sample {
    pub n: usize,
    pub bytes: usize,
    pub time: Duration,
}

#[derive(Debug, Clone, Copy)]
pub struct Growth {
    pub small: Sample,
    pub large: Sample,
}

impl Growth {
    /// How many times longer a run takes when the input's bytes double, from
    /// the two samples: the time ratio scaled to one doubling of the bytes
    /// (2 for linear work, 4 for quadratic).
    pub fn per_doubling(&self) -> f64 {
        let time = self.large.time.as_secs_f64() / self.small.time.as_secs_f64().max(1e-9);
        let bytes = self.large.bytes as f64 / self.small.bytes.max(1) as f64;
        if bytes <= 1.0 {
            return time;
        }
        2f64.powf(time.log2() / bytes.log2())
    }
}

/// Measures `g` with `time`, which runs the check on the files it is given
/// (named as [`Generator::files`] names them) and says how long it took.
pub fn growth(g: &Generator, scaling: &Scaling, time: &mut impl FnMut(&[(&str, String)]) -> Duration) -> Growth {
    let bytes = |files: &[(&str, String)]| files.iter().map(|(_, text)| text.len()).sum::<usize>();
    let mut fastest = |files: &[(&str, String)], first: Option<Duration>| {
        let runs = scaling.runs - usize::from(first.is_some());
        (0..runs).map(|_| time(files)).chain(first).min().unwrap_or_default()
    };
    let mut n = 1;
    let mut calibrated = None;
    loop {
        if bytes(&g.files(n * scaling.factor)) > scaling.max_bytes {
            break;
        }
        let t = fastest(&g.files(n), None);
        if t >= scaling.target {
            calibrated = Some(t);
            break;
        }
        n *= 2;
    }
    let n = if calibrated.is_some() { n } else { (n / 2).max(1) };
    let small = g.files(n);
    let small = Sample { n, bytes: bytes(&small), time: fastest(&small, calibrated) };
    let large = g.files(n * scaling.factor);
    let large = Sample { n: n * scaling.factor, bytes: bytes(&large), time: fastest(&large, None) };
    Growth { small, large }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hostile::generator;

    fn sample(bytes: usize, ms: u64) -> Sample {
        Sample { n: bytes, bytes, time: Duration::from_millis(ms) }
    }

    #[test]
    fn growth_is_scaled_to_one_doubling_of_the_bytes() {
        let linear = Growth { small: sample(100, 10), large: sample(800, 80) };
        assert!((linear.per_doubling() - 2.0).abs() < 1e-9);
        let quadratic = Growth { small: sample(100, 10), large: sample(800, 640) };
        assert!((quadratic.per_doubling() - 4.0).abs() < 1e-9);
        let blocks = Growth { small: sample(100, 10), large: sample(400, 40) };
        assert!((blocks.per_doubling() - 2.0).abs() < 1e-9);
    }

    /// A fake clock: linear in the input's bytes.
    #[test]
    fn the_size_grows_until_a_run_takes_the_target() {
        let scaling = Scaling { target: Duration::from_millis(50), factor: 4, max_bytes: 1 << 30, runs: 2 };
        let mut calls = 0;
        let g = growth(generator("prompts"), &scaling, &mut |files| {
            calls += 1;
            Duration::from_micros(files.iter().map(|(_, t)| t.len() as u64).sum::<u64>())
        });
        assert!(g.small.time >= scaling.target && g.small.time < 2 * scaling.target + Duration::from_millis(1));
        assert_eq!(g.large.n, 4 * g.small.n);
        assert!((g.per_doubling() - 2.0).abs() < 0.1, "{}", g.per_doubling());
        assert!(calls > 4);
    }

    #[test]
    fn the_size_stops_at_the_byte_limit() {
        let scaling = Scaling { target: Duration::from_secs(3600), factor: 2, max_bytes: 100_000, runs: 1 };
        let g = growth(generator("long-line"), &scaling, &mut |_| Duration::from_millis(1));
        assert!(g.large.bytes <= 100_000 && g.large.bytes > 25_000, "{g:?}");
    }
}
