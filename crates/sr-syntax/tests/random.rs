//! Bounded randomized robustness test: random token soup and mutated corpus
//! files never make the parser panic, the tree always gives back the input, and
//! parsing piece by piece gives exactly the whole-file parse.
//! (The unbounded version is the cargo-fuzz target in `fuzz/`.)

use sr_syntax::{KEYWORDS, parse, pieces};
use sr_testing::random::{Rng, mutate};

const PIECES: &[&str] = &[
    " ",
    "  ",
    "\t",
    "\n",
    "\r\n",
    "\n    ",
    "\n        ",
    "#c",
    "x",
    "$",
    ".",
    ":",
    "=",
    "==",
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    ",",
    "\"",
    "'",
    "\"\"\"",
    "${",
    "}",
    "a/b",
    "v1",
    "1",
    "2.5",
    "-",
    "+",
    "->",
    "~",
    "é",
    "\u{a0}",
    "@",
    "\\",
    "./x.sr",
    "mcp://m",
];

fn check(text: &str) {
    let parse = parse(text);
    assert_eq!(parse.syntax().text().to_string(), text);
    let piecewise = pieces::parse_pieces(text, pieces::parse_piece);
    assert_eq!(piecewise, parse, "piecewise and whole-file parses differ for {text:?}");
    for error in parse.errors() {
        assert!(usize::from(error.range.end()) <= text.len());
        assert!(text.is_char_boundary(error.range.start().into()) && text.is_char_boundary(error.range.end().into()));
    }
}

#[test]
fn token_soup_never_panics() {
    let mut rng = Rng::new(0x5EED);
    for _ in 0..3000 {
        let mut text = String::new();
        for _ in 0..rng.below(60) {
            if rng.below(3) == 0 {
                text.push_str(KEYWORDS[rng.below(KEYWORDS.len())].0);
            } else {
                text.push_str(PIECES[rng.below(PIECES.len())]);
            }
            if rng.below(2) == 0 {
                text.push(' ');
            }
        }
        check(&text);
    }
}

#[test]
fn mutated_corpus_files_never_panic() {
    let files = sr_testing::upstream_files();
    let mut rng = Rng::new(0xC0FFEE);
    for round in 0..3000 {
        check(&mutate(&files[round % files.len()].1, &mut rng, PIECES));
    }
}

/// An editing session: each mutation's piece starts, found again from the
/// last text's, equal a fresh scan of the new text.
#[test]
fn piece_starts_found_again_after_edits_equal_a_fresh_scan() {
    let files = sr_testing::upstream_files();
    let mut rng = Rng::new(0x57A27);
    for session in 0..300 {
        let mut text = files[session % files.len()].1.clone();
        let mut starts = pieces::PieceStarts::new(&text);
        for _ in 0..10 {
            let new = mutate(&text, &mut rng, PIECES);
            let edited = starts.edited(&text, &new, pieces::SharedEnds::between(&text, &new));
            assert_eq!(edited, pieces::PieceStarts::new(&new), "{text:?} -> {new:?}");
            (text, starts) = (new, edited);
        }
    }
}
