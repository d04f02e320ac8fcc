//! Checking cost grows linearly with the input, for every generated hostile
//! input: one per diagnostic code (`sr_testing::hostile::codes`), one per
//! construct (`…::constructs`) and the hand-written ones. This is the fast
//! variant of `cargo xtask bench scaling`: in process, in whatever profile
//! the tests are built, each input made eight times larger once it takes
//! 40 ms; quadratic work (4× per doubling) shows up as 64×, linear as 8×.
#![allow(clippy::unwrap_used)]

use std::time::{Duration, Instant};

use sr_hir::{RootDatabase, file_diagnostics};
use sr_syntax::Code;
use sr_testing::hostile::{self, Generator, codes};
use sr_testing::scaling::{Growth, Scaling, growth};

/// The files of `g` at size `n` in a fresh database, and the generated one.
fn load(files: &[(&str, String)]) -> (RootDatabase, sr_hir::File) {
    let mut db = RootDatabase::default();
    for (name, text) in files.iter().rev() {
        db.set_file(format!("/hostile/{name}"), text.as_str());
    }
    let file = db.file(format!("/hostile/{}", hostile::FILE)).unwrap();
    (db, file)
}

/// Every code of the table has a generator named after it (or `CODE-…`),
/// and each of them reports it once per repetition.
#[test]
fn every_code_has_a_generator_that_produces_it() {
    let n = 20;
    let mut problems = Vec::new();
    for &code in Code::ALL {
        let name = code.as_str();
        let named = |g: &&Generator| g.name == name || g.name.strip_prefix(name).is_some_and(|r| r.starts_with('-'));
        let generators: Vec<_> = codes::CODES.iter().filter(named).collect();
        if generators.is_empty() {
            problems.push(format!("{name}: no generator in sr_testing::hostile::codes"));
        }
        let wanted = if codes::ONCE.contains(&name) { 1 } else { n };
        for g in generators {
            let (db, file) = load(&g.files(n));
            let found = file_diagnostics(&db, file).iter().filter(|d| d.code() == code && d.in_mode(false)).count();
            if found < wanted {
                problems.push(format!("{}: {found} × {name} at size {n}, wanted {wanted}", g.name));
            }
        }
    }
    for g in codes::CODES {
        if !Code::ALL.iter().any(|c| g.name.split('-').next() == Some(c.as_str())) {
            problems.push(format!("{}: not named after a code", g.name));
        }
    }
    assert!(problems.is_empty(), "\n{}", problems.join("\n"));
}

/// The per-doubling growth past which the test fails: linear work with
/// timer noise stays well under it, quadratic work goes to 4.
const MAX_PER_DOUBLING: f64 = 2.6;

fn measure(g: &Generator, runs: usize) -> Growth {
    let scaling = Scaling { target: Duration::from_millis(40), factor: 8, max_bytes: 16 << 20, runs };
    growth(g, &scaling, &mut |files| {
        let (db, file) = load(files);
        let started = Instant::now();
        std::hint::black_box(file_diagnostics(&db, file).len());
        let elapsed = started.elapsed();
        drop(db);
        elapsed
    })
}

#[test]
fn checking_time_grows_linearly_for_every_generated_input() {
    let mut failures = Vec::new();
    for g in hostile::all() {
        let mut growth = measure(g, 1);
        if growth.per_doubling() > MAX_PER_DOUBLING {
            // Noise, or the real thing: the best of three decides.
            growth = measure(g, 3);
        }
        let per_doubling = growth.per_doubling();
        eprintln!(
            "{:24} {:>8} → {:>8} {:10}: {:>8.1} ms → {:>8.1} ms, ×{per_doubling:.2} per doubling",
            g.name,
            growth.small.n,
            growth.large.n,
            g.unit,
            growth.small.time.as_secs_f64() * 1e3,
            growth.large.time.as_secs_f64() * 1e3,
        );
        if per_doubling > MAX_PER_DOUBLING {
            failures.push(format!(
                "{}: ×{per_doubling:.2} per doubling ({} → {} {}: {:?} → {:?})",
                g.name, growth.small.n, growth.large.n, g.unit, growth.small.time, growth.large.time
            ));
        }
    }
    assert!(failures.is_empty(), "superlinear checking:\n{}", failures.join("\n"));
}
