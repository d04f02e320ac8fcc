//! `cargo xtask bench scaling`: `sr check` (release build, text and JSON
//! output) on every generated hostile input (`sr_testing::hostile::all`: one
//! per diagnostic code, one per construct, and the hand-written ones). Each
//! input grows until a run takes a tenth of a second, then doubles; the
//! bench prints the time ratio of every input and fails when doubling the
//! input costs more than 2.5× the time.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use sr_testing::hostile::{self, Generator};
use sr_testing::scaling::{Growth, Scaling, growth};

use crate::ci::step;
use crate::root;

/// The time ratio for twice the input past which the bench fails.
const MAX_PER_DOUBLING: f64 = 2.5;

pub fn run() -> Result<(), String> {
    step("cargo", &["build", "--release", "-q", "-p", "sr-cli"], &[])?;
    let target = std::env::var("CARGO_TARGET_DIR").map_or_else(|_| root().join("target"), Into::into);
    let sr = target.join("release").join("sr");
    let dir = std::env::temp_dir().join(format!("sr-scaling-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let started = Instant::now();
    println!("{:26} {:>9} {:>10} {:>9} {:>10} {:>10} {:>6}", "input", "n", "bytes", "time", "n ×2", "time ×2", "ratio");
    let mut failures = Vec::new();
    for g in hostile::all() {
        let mut measured = measure(&sr, &dir, g, 2)?;
        if measured.per_doubling() > MAX_PER_DOUBLING {
            // A busy machine, or the real thing: the best of five decides.
            measured = measure(&sr, &dir, g, 5)?;
        }
        let ratio = measured.per_doubling();
        println!(
            "{:26} {:>9} {:>10} {:>7.1}ms {:>10} {:>8.1}ms {ratio:>6.2}{}",
            g.name,
            measured.small.n,
            measured.small.bytes,
            measured.small.time.as_secs_f64() * 1e3,
            measured.large.n,
            measured.large.time.as_secs_f64() * 1e3,
            if ratio > MAX_PER_DOUBLING { "  FAIL" } else { "" },
        );
        if ratio > MAX_PER_DOUBLING {
            failures.push(format!("{}: ×{ratio:.2} the time for twice the input", g.name));
        }
    }
    println!("{} inputs in {:.0} s", hostile::all().count(), started.elapsed().as_secs_f64());
    let _ = std::fs::remove_dir_all(&dir);
    if failures.is_empty() { Ok(()) } else { Err(failures.join("\n")) }
}

/// `g`'s growth: the size at which `sr check` (text, then JSON) takes 100 ms,
/// and twice that size, each the fastest of `runs`.
fn measure(sr: &Path, dir: &Path, g: &Generator, runs: usize) -> Result<Growth, String> {
    let scaling = Scaling {
        target: Duration::from_millis(100),
        factor: 2,
        // `sr check` refuses files over 16 MiB (`sr_files::MAX_SOURCE_BYTES`).
        max_bytes: 16 << 20,
        runs,
    };
    let mut failed = None;
    let measured = growth(g, &scaling, &mut |files| match check(sr, dir, files) {
        Ok(time) => time,
        Err(e) => {
            failed.get_or_insert(e);
            Duration::ZERO
        }
    });
    match failed {
        Some(e) => Err(format!("{}: {e}", g.name)),
        None => Ok(measured),
    }
}

/// The time `sr check` takes on `files` in text and in JSON, together.
fn check(sr: &Path, dir: &Path, files: &[(&str, String)]) -> Result<Duration, String> {
    for (name, text) in files {
        std::fs::write(dir.join(name), text).map_err(|e| e.to_string())?;
    }
    let mut total = Duration::ZERO;
    for format in ["text", "json"] {
        let started = Instant::now();
        let out = Command::new(sr)
            .args(["check", "--format", format, hostile::FILE])
            .current_dir(dir)
            .env("NO_COLOR", "1")
            .output()
            .map_err(|e| format!("cannot run {}: {e}", sr.display()))?;
        total += started.elapsed();
        if !matches!(out.status.code(), Some(0 | 1)) {
            return Err(format!("sr check --format {format} ended with {}", out.status));
        }
    }
    Ok(total)
}
