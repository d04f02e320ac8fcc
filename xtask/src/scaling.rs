//! `cargo xtask bench scaling`: `sr check` (release build) on hostile inputs at
//! a size and at twice it. Fails loudly when the time per input byte grows
//! more than 1.25× as the input doubles (2.5× the time for twice the bytes).

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use sr_testing::hostile::generator;

use crate::ci::step;
use crate::root;

/// Generators and their smaller size; each runs at that size and twice it.
const CASES: &[(&str, usize)] = &[
    ("plus-chain", 200_000),
    ("list", 200_000),
    ("property-chain", 200_000),
    ("nested-if-statements", 1_000),
    ("long-line", 4_000_000),
    ("unterminated-triple", 2_000_000),
    ("unclosed-interpolations", 50_000),
    ("dotted-name", 4_000_000),
    ("delegate-ring", 4_000),
    ("prompts", 10_000),
    ("flow-fan-out", 4_000),
    ("mixed-line-endings", 100_000),
    ("many-errors", 50_000),
];

/// Allowed growth of the time per byte when the input doubles.
const MAX_GROWTH: f64 = 1.25;

pub fn run() -> Result<(), String> {
    step("cargo", &["build", "--release", "-q", "-p", "sr-cli"], &[])?;
    let target = std::env::var("CARGO_TARGET_DIR").map_or_else(|_| root().join("target"), Into::into);
    let sr = target.join("release").join("sr");
    let dir = std::env::temp_dir().join(format!("sr-scaling-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    println!("{:24} {:>10} {:>12} {:>10} {:>10} {:>7}", "input", "size", "bytes", "time", "time ×2", "growth");
    let mut failures = Vec::new();
    for &(name, size) in CASES {
        let g = generator(name);
        let small = (g.make)(size);
        let large = (g.make)(size * 2);
        let (t1, t2) = (best_of_three(&sr, &dir, &small)?, best_of_three(&sr, &dir, &large)?);
        let per_byte = |t: Duration, text: &str| t.as_secs_f64() / text.len() as f64;
        let growth = per_byte(t2, &large) / per_byte(t1, &small);
        println!(
            "{name:24} {size:>10} {:>12} {:>8.1}ms {:>8.1}ms {growth:>7.2}",
            small.len(),
            t1.as_secs_f64() * 1e3,
            t2.as_secs_f64() * 1e3,
        );
        if growth > MAX_GROWTH {
            failures.push(format!("{name}: time per byte grew {growth:.2}× as the input doubled"));
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    if failures.is_empty() { Ok(()) } else { Err(failures.join("\n")) }
}

/// The fastest of three runs of `sr check --format json` on `text`.
fn best_of_three(sr: &Path, dir: &Path, text: &str) -> Result<Duration, String> {
    let file = dir.join("case.sr");
    std::fs::write(&file, text).map_err(|e| e.to_string())?;
    let mut best = Duration::MAX;
    for _ in 0..3 {
        let started = Instant::now();
        let out = Command::new(sr)
            .args(["check", "--format", "json"])
            .arg(&file)
            .output()
            .map_err(|e| format!("cannot run {}: {e}", sr.display()))?;
        let elapsed = started.elapsed();
        if !matches!(out.status.code(), Some(0 | 1)) {
            return Err(format!("sr check ended with {}", out.status));
        }
        best = best.min(elapsed);
    }
    Ok(best)
}
