//! Parsing bodies that are almost JSON the way editors send them: invalid
//! UTF-8 (a lone surrogate encoded directly) and `\u` escapes of lone
//! surrogates (JavaScript strings hold them) become U+FFFD.

use std::borrow::Cow;

use serde_json::Value;

/// Parses `body`, repairing it only if it does not parse as it is.
pub(crate) fn parse(body: &[u8]) -> serde_json::Result<Value> {
    let error = match serde_json::from_slice(body) {
        Ok(value) => return Ok(value),
        Err(error) => error,
    };
    let text = String::from_utf8_lossy(body);
    let repaired = replace_lone_surrogate_escapes(&text);
    if matches!((&text, &repaired), (Cow::Borrowed(_), Cow::Borrowed(_))) {
        return Err(error);
    }
    serde_json::from_str(&repaired)
}

/// Replaces each `\uD800`–`\uDFFF` escape that is not part of a high–low pair
/// with `\uFFFD`. Escaped backslashes (`\\u…`) are left alone.
fn replace_lone_surrogate_escapes(text: &str) -> Cow<'_, str> {
    let bytes = text.as_bytes();
    let surrogate_at = |i: usize| -> Option<u16> {
        let hex = bytes.get(i..i + 6)?;
        if hex[0] != b'\\' || hex[1] != b'u' {
            return None;
        }
        let code = u16::from_str_radix(std::str::from_utf8(&hex[2..]).ok()?, 16).ok()?;
        (0xD800..=0xDFFF).contains(&code).then_some(code)
    };
    let mut out: Option<String> = None;
    let mut copied = 0;
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'\\' {
            i += 1;
            continue;
        }
        match surrogate_at(i) {
            Some(0xD800..=0xDBFF) if surrogate_at(i + 6).is_some_and(|low| low >= 0xDC00) => i += 12,
            Some(_) => {
                let out = out.get_or_insert_with(String::new);
                out.push_str(&text[copied..i]);
                out.push_str("\\uFFFD");
                i += 6;
                copied = i;
            }
            // Any other escape: skip the backslash and the character it escapes.
            None => i += 2,
        }
    }
    match out {
        None => Cow::Borrowed(text),
        Some(mut out) => {
            out.push_str(&text[copied..]);
            Cow::Owned(out)
        }
    }
}
