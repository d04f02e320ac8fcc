//! `cargo +nightly fuzz run parse`: any input parses without panicking and the
//! tree gives back exactly the input.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let parse = sr_syntax::parse(text);
        assert_eq!(parse.syntax().text().to_string(), text);
    }
});
