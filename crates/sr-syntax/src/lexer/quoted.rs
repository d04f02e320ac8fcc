//! Quoted strings, decided as upstream's terminals are: `"""…"""` (to the
//! first `"""`), then `INTERPOLATED_STRING` (`"[^"]*\$\{[^}]+\}[^"]*"`), then
//! `"…"`; `'''…'''`, then `'…'`. None matching leaves the quote an invalid
//! character.
//!
//! Strings span lines, so a quote can read far ahead. Each callback notes how
//! far its decision read (for [`Spans::take_read`](super::Spans::take_read)),
//! and the searches for `}` and `"` that the interpolated pattern makes
//! remember what they found: a file of quotes with unclosed `${` lexes in
//! linear time (the `regex` crate took a minute on 40,000 such lines, each
//! quote scanning to the end of the file).

use memchr::{memchr, memrchr};

use super::Raw;

/// The quoted-string terminal that matched, in upstream's order of preference.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Quoted {
    Triple,
    Interpolated,
    Plain,
}

/// What the lexer keeps between tokens (its logos `extras`).
#[derive(Debug, Default)]
pub(super) struct Scans {
    /// How far (exclusive) the text decided the quoted tokens since the last
    /// [`Scans::take_decided`]; `u32::MAX`: to its end.
    decided: u32,
    braces: NextByte,
    quotes: NextByte,
}

impl Scans {
    pub(super) fn take_decided(&mut self) -> u32 {
        std::mem::take(&mut self.decided)
    }

    /// Notes that a quoted token was decided by the text up to `end`
    /// (exclusive; `None`: all of the rest).
    fn decided_by(&mut self, end: Option<usize>) {
        let end = end.and_then(|end| u32::try_from(end).ok()).unwrap_or(u32::MAX);
        self.decided = self.decided.max(end);
    }
}

/// The next position of a byte at or after a point, remembered: no such byte
/// lies in `from..found` (`None`: to the end), so a later search from inside
/// that span needs no scan. Tokens move forward, so searches mostly do too.
#[derive(Debug, Default)]
struct NextByte {
    known: Option<(usize, Option<usize>)>,
}

impl NextByte {
    fn find(&mut self, text: &[u8], byte: u8, at: usize) -> Option<usize> {
        match self.known {
            Some((from, found)) if at >= from && found.is_none_or(|found| at <= found) => found,
            // Before the remembered span: only the gap is new.
            Some((from, found)) if at < from => match memchr(byte, &text[at..from]) {
                Some(i) => Some(at + i),
                None => {
                    self.known = Some((at, found));
                    found
                }
            },
            _ => {
                let found = memchr(byte, &text[at..]).map(|i| at + i);
                self.known = Some((at, found));
                found
            }
        }
    }
}

/// `"` starts, in order: a triple-quoted string (ending at the first `"""`), an
/// interpolated string, or a plain string.
pub(super) fn double_quoted(lex: &mut logos::Lexer<Raw>) -> Option<Quoted> {
    if triple(lex, "\"\"\"") {
        return Some(Quoted::Triple);
    }
    let (start, after) = (lex.span().start, lex.span().end);
    let text = lex.source().as_bytes();
    let close = memchr(b'"', &text[after..]).map(|i| after + i);
    let (interpolated, read) = interpolated(text, start, close, &mut lex.extras);
    lex.extras.decided_by(read);
    if let Some(end) = interpolated {
        lex.bump(end - after);
        return Some(Quoted::Interpolated);
    }
    lex.bump(close? + 1 - after);
    Some(Quoted::Plain)
}

/// Upstream's `INTERPOLATED_STRING` (`"[^"]*\$\{[^}]+\}[^"]*"`) at the quote
/// at `start`, matched as a backtracking engine does (Python's `re`, and the
/// `regex` crate's leftmost-first search, which the tests compare against):
/// `[^"]*` stops before `close`, the next `"`, and each `${` before it is tried
/// from the last one back; `[^}]+` runs to the first `}` after the `${` and
/// must take a character, and `[^"]*"` ends at the first `"` after the `}`.
/// Returns where the match ends, and how far the text was read to decide
/// (both exclusive; `None` for the reach: to the end of the text).
fn interpolated(text: &[u8], start: usize, close: Option<usize>, scans: &mut Scans) -> (Option<usize>, Option<usize>) {
    // Without a later `"` the final `"` cannot match, and `[^"]*` read to the end.
    let Some(close) = close else { return (None, None) };
    let mut read = Some(close + 1);
    let mut end = close;
    while let Some(dollar) = memrchr(b'$', &text[start + 1..end]).map(|i| start + 1 + i) {
        end = dollar;
        if text[dollar + 1] != b'{' {
            continue;
        }
        let Some(brace) = scans.braces.find(text, b'}', dollar + 2) else {
            read = None;
            continue;
        };
        read = read.map(|read| read.max(brace + 1));
        if brace == dollar + 2 {
            continue;
        }
        let quote = if brace < close { Some(close) } else { scans.quotes.find(text, b'"', brace + 1) };
        match quote {
            Some(quote) => return (Some(quote + 1), read.map(|read| read.max(quote + 1))),
            None => read = None,
        }
    }
    (None, read)
}

/// Whether the token's quote opens a triple-quoted string, which ends at the
/// first `delimiter` (three of that quote) after it; if so, the token is it.
/// One that is never closed (upstream's lexer fails there) runs to the line
/// break before the next line that starts with a definition, or to the end of
/// the text: what follows it stays one token, however long, and the
/// definitions after it are still read. [`unterminated`] tells such a token.
fn triple(lex: &mut logos::Lexer<Raw>, delimiter: &str) -> bool {
    let after = lex.span().end;
    let Some(body) = lex.remainder().strip_prefix(&delimiter[1..]) else { return false };
    let end = body.find(delimiter).map(|end| 2 + end + 3);
    lex.extras.decided_by(end.map(|end| after + end));
    lex.bump(end.unwrap_or_else(|| 2 + next_definition(body)));
    true
}

/// Where the line break (`\n` or `\r\n`) before the first line of `text` that
/// starts with a token that can begin a definition is, else `text`'s length.
/// Only lines that start with a letter are lexed, one token each, so no quote
/// there is looked at.
fn next_definition(text: &str) -> usize {
    for newline in memchr::memchr_iter(b'\n', text.as_bytes()) {
        let line = &text[newline + 1..];
        if !line.starts_with(|c: char| c.is_ascii_alphabetic()) {
            continue;
        }
        let mut tokens = super::Spans::new(line);
        if let Some(token) = tokens.next()
            && crate::item_kind::starts_item(token.kind, &line[token.range])
        {
            return if text[..newline].ends_with('\r') { newline - 1 } else { newline };
        }
    }
    text.len()
}

/// Whether a triple-quoted token was never closed (see [`triple`]).
pub(crate) fn unterminated(token: &str) -> bool {
    let delimiter = if token.starts_with('\'') { "'''" } else { "\"\"\"" };
    token.len() < 6 || !token.ends_with(delimiter)
}

/// `'` starts a triple-quoted string (ending at the first `'''`) or a plain string.
pub(super) fn single_quoted(lex: &mut logos::Lexer<Raw>) -> Option<Quoted> {
    if triple(lex, "'''") {
        return Some(Quoted::Triple);
    }
    let after = lex.span().end;
    let end = memchr(b'\'', lex.remainder().as_bytes());
    lex.extras.decided_by(end.map(|end| after + end + 1));
    lex.bump(end? + 1);
    Some(Quoted::Plain)
}

#[cfg(test)]
mod tests {
    use super::*;

    const PATTERN: &str = r#"\A"[^"]*\$\{[^}]+\}[^"]*""#;

    /// A small random text over the characters the pattern cares about.
    fn random_text(seed: &mut u64) -> Vec<u8> {
        let mut next = || {
            *seed ^= *seed << 13;
            *seed ^= *seed >> 7;
            *seed ^= *seed << 17;
            *seed
        };
        let len = (next() % 24) as usize;
        (0..len).map(|_| b"\"${}a\n$"[(next() % 7) as usize]).collect()
    }

    /// At every quote of thousands of random texts, the matcher agrees with
    /// the `regex` crate, with a fresh search memory and with one carried from
    /// quote to quote as the lexer carries it; and changing any text past the
    /// reach it reports leaves the regex's answer unchanged.
    #[test]
    fn interpolated_matches_as_the_regex_does_and_reads_no_further_than_it_says() {
        let regex = regex::bytes::Regex::new(PATTERN).expect("a valid pattern");
        let mut seed = 0x9E37_79B9_7F4A_7C15;
        for _ in 0..20_000 {
            let text = random_text(&mut seed);
            let mut carried = Scans::default();
            for start in (0..text.len()).filter(|&i| text[i] == b'"') {
                let close = memchr(b'"', &text[start + 1..]).map(|i| start + 1 + i);
                let expected = regex.find(&text[start..]).map(|m| start + m.end());
                let (found, read) = interpolated(&text, start, close, &mut Scans::default());
                assert_eq!(found, expected, "{:?} at {start}", String::from_utf8_lossy(&text));
                assert_eq!(interpolated(&text, start, close, &mut carried), (found, read));
                let Some(read) = read else { continue };
                for tail in 0..4 {
                    let mut changed = text[..read].to_vec();
                    changed.extend(random_text(&mut seed).into_iter().take(tail * 3));
                    let again = regex.find(&changed[start..]).map(|m| start + m.end());
                    assert_eq!(again, expected, "{:?} read to {read}", String::from_utf8_lossy(&text));
                }
            }
        }
    }
}
