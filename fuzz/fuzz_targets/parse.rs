//! `cargo xtask fuzz` (or `cargo fuzz run parse`): any input parses without
//! panicking, the tree gives back exactly the input, every error's range lies
//! on character boundaries of the input, and the piecewise parse the language
//! server uses equals the whole-file parse.
#![no_main]

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
});
