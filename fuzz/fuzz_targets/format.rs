//! `cargo xtask fuzz` (or `cargo fuzz run format`): what `sr-fmt` promises, on
//! any input. A text with syntax errors is refused, never formatted; a text
//! without is formatted to one that parses without errors to the same tree
//! (node kinds and every token but whitespace and line breaks, so no comment
//! is lost or moved out of its node), formats to itself, and is what range
//! formatting of the whole text gives.
#![no_main]

use sr_syntax::{TextRange, TextSize};

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let formatted = match sr_fmt::format(text) {
        Ok(formatted) => formatted,
        Err(e) => {
            assert!(!sr_syntax::parse(text).errors().is_empty(), "refused a text without syntax errors: {e}");
            return;
        }
    };
    let errors = sr_syntax::parse(&formatted).errors().to_vec();
    assert!(errors.is_empty(), "the formatted text does not parse: {errors:?}\n{formatted}");
    let (before, after) = (sr_fmt::shape(text), sr_fmt::shape(&formatted));
    if before != after {
        let at = before.iter().zip(&after).position(|(x, y)| x != y).unwrap_or(before.len().min(after.len()));
        panic!("the tree changed at {at}: {:?} vs {:?}\n{formatted}", before.get(at), after.get(at));
    }
    assert_eq!(sr_fmt::format(&formatted).as_ref(), Ok(&formatted), "formatting is not idempotent");
    let edits = sr_fmt::format_range(text, TextRange::up_to(TextSize::of(text))).expect("the text formatted");
    let mut ranged = text.to_string();
    for edit in edits.iter().rev() {
        ranged.replace_range(std::ops::Range::<usize>::from(edit.range), &edit.new_text);
    }
    assert_eq!(ranged, formatted, "range formatting of the whole text differs from formatting");
});
