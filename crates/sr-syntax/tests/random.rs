//! Bounded randomized robustness test: random token soup and mutated corpus
//! files never make the parser panic, the tree always gives back the input, and
//! parsing piece by piece gives exactly the whole-file parse.
//! (The unbounded version is the cargo-fuzz target in `fuzz/`.)

use std::path::Path;

use sr_syntax::{KEYWORDS, parse, pieces};

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

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
    let mut rng = Rng(0x5EED);
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
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/upstream/files");
    let mut files = Vec::new();
    let mut stack = vec![dir];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "sr") {
                files.push(std::fs::read_to_string(path).unwrap());
            }
        }
    }
    files.sort();
    let mut rng = Rng(0xC0FFEE);
    for round in 0..3000 {
        let text = &files[round % files.len()];
        let bytes = text.as_bytes();
        let mut mutated = Vec::with_capacity(bytes.len());
        let (a, b) = (rng.below(bytes.len()), rng.below(bytes.len()));
        let (a, b) = (a.min(b), a.max(b).min(a + 200));
        match rng.below(4) {
            0 => {
                mutated.extend_from_slice(&bytes[..a]);
                mutated.extend_from_slice(&bytes[b..]);
            }
            1 => {
                mutated.extend_from_slice(&bytes[..b]);
                mutated.extend_from_slice(&bytes[a..]);
            }
            2 => {
                mutated.extend_from_slice(&bytes[..a]);
                mutated.extend_from_slice(PIECES[rng.below(PIECES.len())].as_bytes());
                mutated.extend_from_slice(&bytes[a..]);
            }
            _ => {
                mutated.extend_from_slice(bytes);
                mutated.truncate(a);
            }
        }
        check(&String::from_utf8_lossy(&mutated));
    }
}
