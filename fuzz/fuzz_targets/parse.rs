//! `cargo xtask fuzz` (or `cargo fuzz run parse`): any input parses without
//! panicking, the tree gives back exactly the input, every error's range lies
//! on character boundaries of the input, the piecewise parse the language
//! server uses equals the whole-file parse, and the piece starts it finds
//! again after an edit (one picked by a hash of the input) equal a fresh scan.
#![no_main]

use sr_syntax::pieces::{PieceStarts, SharedEnds};

/// What the edit puts in: text that opens or closes strings, brackets and items.
const INSERTS: [&str; 12] = ["\"", "\"\"\"", "'", "'''", "${", "}", "\n", "(", ")", "agent a:\n", "#", ""];

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let parse = sr_syntax::parse(text);
    assert_eq!(parse.syntax().text().to_string(), text);
    for error in parse.errors() {
        for range in std::iter::once(error.range).chain(error.related.iter().map(|r| r.range)) {
            let range = std::ops::Range::<usize>::from(range);
            assert!(text.get(range.clone()).is_some(), "{error:?}: {range:?} is not a range of the input");
        }
    }
    let piecewise = sr_syntax::pieces::parse_pieces(text, sr_syntax::pieces::parse_piece);
    assert_eq!(piecewise, parse, "the piecewise parse differs from the whole-file parse");

    let hash = data.iter().fold(0u64, |h, &b| h.wrapping_mul(31).wrapping_add(u64::from(b)));
    let boundary = |mut at: usize| {
        while !text.is_char_boundary(at) {
            at -= 1;
        }
        at
    };
    let start = boundary((hash % (text.len() as u64 + 1)) as usize);
    let end = boundary((start + ((hash >> 20) % 16) as usize).min(text.len())).max(start);
    let new = format!("{}{}{}", &text[..start], INSERTS[((hash >> 40) % 12) as usize], &text[end..]);
    let edited = PieceStarts::new(text).edited(text, &new, SharedEnds::between(text, &new));
    assert_eq!(edited, PieceStarts::new(&new), "piece starts found again after {text:?} -> {new:?}");
});
