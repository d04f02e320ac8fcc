//! Every IDE feature on generated hostile input, on the default 2 MiB
//! test-thread stack in whatever profile the tests are built: nesting just
//! under, at and far past the nesting limit for every construct, and the
//! other generated cases. Nothing may panic or overflow the stack.

mod common;

use common::{check_all, cursors};
use sr_syntax::MAX_NESTING;
use sr_testing::hostile::{BLOCKS, EXPRESSIONS, Generator, codes, constructs, generator};
use sr_testing::random::Rng;

fn run(g: &Generator, n: usize) {
    let text = (g.make)(n);
    let mut rng = Rng::new(n as u64);
    let cursors = cursors(&text, &mut rng, 6);
    let start = std::time::Instant::now();
    check_all(&text, &cursors, format!("{} at {n} {}", g.name, g.unit));
    eprintln!("{} at {n}: {:?}", g.name, start.elapsed());
}

/// Each generator just under, at and past the nesting limit, and at `deepest`.
fn around_the_limit(generators: &[Generator], deepest: usize) {
    let limit = MAX_NESTING as usize;
    for g in generators {
        for n in [limit - 2, limit, limit + 2, deepest] {
            run(g, n);
        }
    }
}

#[test]
fn deep_expressions() {
    around_the_limit(EXPRESSIONS, 20_000);
}

#[test]
fn deep_blocks() {
    around_the_limit(BLOCKS, 2_000);
}

#[test]
fn other_hostile_input() {
    for (name, n) in [
        ("long-line", 1_000_000),
        ("unterminated-string", 1_000_000),
        ("unterminated-triple", 200_000),
        ("unclosed-interpolations", 5_000),
        ("dotted-name", 200_000),
        ("nul-bytes", 100_000),
        ("nul-lines", 10_000),
        ("nul-line", 100_000),
        ("delegate-ring", 500),
        ("nested-if-statements", 300),
        ("prompts", 2_000),
        ("mixed-line-endings", 5_000),
        ("many-errors", 5_000),
    ] {
        run(generator(name), n);
    }
}

/// Every diagnostic code and every construct, repeated.
#[test]
fn every_code_and_construct_repeated() {
    for g in codes::CODES.iter().chain(constructs::CONSTRUCTS) {
        run(g, 500);
    }
}
