//! Bounded randomized robustness test of every IDE feature: on mutated corpus
//! files (what a user has on screen mid-edit), at cursors spread over the text,
//! nothing panics, every range lies inside the file on character boundaries,
//! and nothing an editor refuses (a symbol or completion without a name) comes
//! out.

mod common;

use common::{check_all, cursors};
use sr_testing::random::{Rng, mutate};

const INSERTS: &[&str] =
    &["\n", "\n    ", ":", "$", "${", "}", "\"", "\"\"\"", "(", ")", "do\n", "end", "agent", "run agent ", "x", "é"];

#[test]
fn every_feature_survives_mutated_corpus_files() {
    let files = sr_testing::upstream_files();
    assert!(!files.is_empty());
    let seed = std::env::var("SR_RANDOM_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(0x1DE5);
    let mut rng = Rng::new(seed);
    for round in 0..rounds() {
        let (name, text) = &files[round % files.len()];
        let mut mutated = mutate(text, &mut rng, INSERTS);
        for _ in 0..rng.below(3) {
            mutated = mutate(&mutated, &mut rng, INSERTS);
        }
        let cursors = cursors(&mutated, &mut rng, 12);
        check_all(&mutated, &cursors, format!("mutant {round} of {name}:\n{mutated}"));
    }
}

/// 240 in the test suite; `SR_RANDOM_ROUNDS` (and `SR_RANDOM_SEED`) for a longer search.
fn rounds() -> usize {
    std::env::var("SR_RANDOM_ROUNDS").ok().and_then(|n| n.parse().ok()).unwrap_or(240)
}
