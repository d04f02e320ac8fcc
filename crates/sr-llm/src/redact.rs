//! One redaction for every place a run writes or sends text: every occurrence
//! of every secret value, and of its usual encodings, is replaced by
//! `[redacted]`.
//!
//! The encodings are the ones a command hands on without meaning to: base64
//! (standard and URL-safe, padded or not, and inside a longer base64 text at
//! each of its three alignments, where only the characters made of the
//! secret's bits alone are the secret's), hex (lower and upper case) and
//! percent-encoding (any mix of escaped and plain characters, escapes in
//! either case). One Aho-Corasick automaton holds every form of every secret,
//! and finds overlapping matches, so two secrets that overlap are both
//! covered; text holding a `%` is searched a second time percent-decoded,
//! and text whose lines break between two characters of base64 or hex (what
//! `base64`, `xxd -p`, PEM and MIME print) a second time with those line
//! breaks taken out, so an encoding wrapped at any width is found whole.
//! Each pass is linear in the text.

use std::sync::RwLock;

use aho_corasick::{AhoCorasick, AhoCorasickKind, MatchKind};
use serde_json::Value;

/// What replaces a secret.
pub const REDACTED: &str = "[redacted]";

/// Secret values known to a run. Shared by the event emitter, the cassettes
/// and the tool-result path, and filled as secrets become known.
#[derive(Default)]
pub struct Redactor {
    state: RwLock<State>,
}

#[derive(Default)]
struct State {
    secrets: Vec<String>,
    /// Every form of every secret, sorted and without repeats.
    forms: Vec<Vec<u8>>,
    /// Over `forms`; `None` until there is a secret.
    automaton: Option<AhoCorasick>,
}

/// A value too short to be redacted without mangling every message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TooShort {
    pub len: usize,
}

impl Redactor {
    /// Values shorter than this are refused as secrets.
    pub const MIN_LEN: usize = 4;

    pub fn new() -> Redactor {
        Redactor::default()
    }

    /// Adds a secret. An empty value is ignored; a value shorter than
    /// `MIN_LEN` characters is refused (the caller warns).
    pub fn add(&self, value: &str) -> Result<(), TooShort> {
        let len = value.chars().count();
        if len == 0 {
            return Ok(());
        }
        if len < Self::MIN_LEN {
            return Err(TooShort { len });
        }
        let mut state = self.state.write().unwrap_or_else(|p| p.into_inner());
        if state.secrets.iter().any(|s| s == value) {
            return Ok(());
        }
        state.secrets.push(value.to_string());
        let mut forms: Vec<Vec<u8>> = state.secrets.iter().flat_map(|s| forms(s.as_bytes())).collect();
        forms.sort();
        forms.dedup();
        let automaton = AhoCorasick::builder()
            .match_kind(MatchKind::Standard)
            // Most bytes of base64 text begin some form, so a prefilter
            // skips nothing and costs its false starts. Every run builds
            // this: a contiguous NFA builds in about 50 µs per secret, a DFA
            // in about 260 µs (and searches about 2.5 times as fast).
            .kind(Some(AhoCorasickKind::ContiguousNFA))
            .prefilter(false)
            .build(&forms)
            .expect("an automaton of a few thousand short patterns fits the default size limits");
        state.forms = forms;
        state.automaton = Some(automaton);
        Ok(())
    }

    pub fn is_empty(&self) -> bool {
        self.state.read().unwrap_or_else(|p| p.into_inner()).secrets.is_empty()
    }

    /// `text` with every occurrence of every form of every secret replaced;
    /// `None` if it holds none.
    pub fn redact_str(&self, text: &str) -> Option<String> {
        let state = self.state.read().unwrap_or_else(|p| p.into_inner());
        let automaton = state.automaton.as_ref()?;
        let mut spans = matches(automaton, text.as_bytes());
        if let Some(unwrapped) = Unwrapped::of(text.as_bytes(), false) {
            spans.extend(matches(automaton, &unwrapped.bytes).into_iter().map(|(s, e)| unwrapped.span(s, e)));
        }
        if memchr::memchr(b'%', text.as_bytes()).is_some() {
            let (decoded, escapes) = percent_decoded(text.as_bytes());
            if !escapes.is_empty() {
                // Decoded byte d starts after the two extra bytes of each escape before it.
                let at = |d: usize| d + 2 * escapes.partition_point(|&e| e < d);
                spans.extend(matches(automaton, &decoded).into_iter().map(|(s, e)| (at(s), at(e))));
            }
        }
        if spans.is_empty() {
            return None;
        }
        spans.sort_unstable();
        let mut out = String::with_capacity(text.len());
        let mut done = 0;
        let mut spans = spans.into_iter().peekable();
        while let Some((start, mut end)) = spans.next() {
            while let Some(&(next, next_end)) = spans.peek()
                && next < end
            {
                end = end.max(next_end);
                spans.next();
            }
            // Always char boundaries for UTF-8 secrets; rounded outwards
            // anyway, so that nothing can slice inside a character.
            let (start, end) = (text.floor_char_boundary(start.max(done)), text.ceil_char_boundary(end));
            out.push_str(&text[done..start]);
            out.push_str(REDACTED);
            done = end;
        }
        out.push_str(&text[done..]);
        Some(out)
    }

    /// How many bytes at the end of `text` could be the start of a secret
    /// (in any of its forms) that the next piece of a stream completes: a
    /// stream holds them back.
    pub fn held_back(&self, text: &str) -> usize {
        let state = self.state.read().unwrap_or_else(|p| p.into_inner());
        let longest = state.forms.iter().map(Vec::len).max().unwrap_or(0);
        let begins_a_form = |rest: &[u8]| {
            let next = state.forms.partition_point(|form| form.as_slice() < rest);
            state.forms.get(next).is_some_and(|form| form.starts_with(rest))
        };
        let bytes = text.as_bytes();
        let earliest = bytes.len().saturating_sub(longest.saturating_sub(1));
        // The earliest start whose rest begins some form is the longest
        // held back; forms are sorted, so one binary search per start.
        let plain = (earliest..bytes.len())
            .filter(|&at| text.is_char_boundary(at))
            .find(|&at| begins_a_form(&bytes[at..]))
            .map_or(0, |at| bytes.len() - at);
        // A wrapped form's start may hold line breaks: the tail is looked at
        // unwrapped too, over as many lines as a form can span (one byte
        // each, at the narrowest wrap, plus a break of two bytes).
        let tail = bytes.len().saturating_sub(longest.saturating_mul(3));
        let tail = (tail..bytes.len()).find(|&at| text.is_char_boundary(at)).unwrap_or(bytes.len());
        let wrapped = Unwrapped::of(&bytes[tail..], true).map_or(0, |unwrapped| {
            let earliest = unwrapped.bytes.len().saturating_sub(longest.saturating_sub(1));
            (earliest..unwrapped.bytes.len())
                .find(|&at| begins_a_form(&unwrapped.bytes[at..]))
                .map_or(0, |at| bytes.len() - (tail + unwrapped.span(at, at + 1).0))
        });
        plain.max(wrapped)
    }

    /// `text` redacted.
    pub fn redact(&self, text: &str) -> String {
        self.redact_str(text).unwrap_or_else(|| text.to_string())
    }

    /// Redacts every string (and object key) inside `value`; whether anything changed.
    pub fn redact_value(&self, value: &mut Value) -> bool {
        if self.is_empty() {
            return false;
        }
        match value {
            Value::String(text) => match self.redact_str(text) {
                Some(redacted) => {
                    *text = redacted;
                    true
                }
                None => false,
            },
            Value::Array(items) => items.iter_mut().fold(false, |changed, item| self.redact_value(item) | changed),
            Value::Object(map) => {
                let mut changed = false;
                let entries = std::mem::take(map);
                for (key, mut item) in entries {
                    changed |= self.redact_value(&mut item);
                    let key = match self.redact_str(&key) {
                        Some(redacted) => {
                            changed = true;
                            redacted
                        }
                        None => key,
                    };
                    map.insert(key, item);
                }
                changed
            }
            _ => false,
        }
    }
}

impl std::fmt::Debug for Redactor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Redactor({} secrets)", self.state.read().map_or(0, |s| s.secrets.len()))
    }
}

/// Every (start, end) where a form occurs in `haystack`, overlaps included.
fn matches(automaton: &AhoCorasick, haystack: &[u8]) -> Vec<(usize, usize)> {
    automaton
        .try_find_overlapping_iter(haystack)
        .expect("the automaton is built with MatchKind::Standard, which searches for overlapping matches")
        .map(|m| (m.start(), m.end()))
        .collect()
}

/// A text with the line breaks (`\n`, `\r\n`, `\r`) that stand between two
/// characters of base64 or hex taken out: a wrapped encoding, whole.
struct Unwrapped {
    bytes: Vec<u8>,
    /// For each break taken out: where in `bytes` the byte after it is, and
    /// how many bytes of the text were taken out up to it, in all.
    breaks: Vec<(usize, usize)>,
}

impl Unwrapped {
    /// `None` when no line break stands between two such characters. With
    /// `open_end`, the text is the start of more (a stream's): a break at its
    /// end after such a character is taken out too.
    fn of(text: &[u8], open_end: bool) -> Option<Unwrapped> {
        let encoded = |byte: Option<&u8>| byte.is_some_and(|b| b.is_ascii_alphanumeric() || b"+/=-_".contains(b));
        let mut at = memchr::memchr2(b'\n', b'\r', text)?;
        let mut unwrapped = Unwrapped { bytes: Vec::new(), breaks: Vec::new() };
        let mut done = 0;
        let mut removed = 0;
        while at < text.len() {
            let width = match &text[at..] {
                [b'\r', b'\n', ..] => 2,
                _ => 1,
            };
            let next = text.get(at + width);
            if at > 0 && encoded(text.get(at - 1)) && (encoded(next) || (open_end && next.is_none())) {
                unwrapped.bytes.extend_from_slice(&text[done..at]);
                removed += width;
                unwrapped.breaks.push((unwrapped.bytes.len(), removed));
                done = at + width;
            }
            at = match memchr::memchr2(b'\n', b'\r', &text[at + width..]) {
                Some(next) => at + width + next,
                None => text.len(),
            };
        }
        if unwrapped.breaks.is_empty() {
            return None;
        }
        unwrapped.bytes.extend_from_slice(&text[done..]);
        Some(unwrapped)
    }

    /// Where the bytes `start..end` of the unwrapped text are in the text.
    fn span(&self, start: usize, end: usize) -> (usize, usize) {
        let original = |at: usize| {
            let before = self.breaks.partition_point(|&(position, _)| position <= at);
            at + before.checked_sub(1).map_or(0, |last| self.breaks[last].1)
        };
        (original(start), original(end.saturating_sub(1)) + 1)
    }
}

/// `text` with `%XX` escapes decoded, and which decoded bytes were escapes.
fn percent_decoded(text: &[u8]) -> (Vec<u8>, Vec<usize>) {
    let mut decoded = Vec::with_capacity(text.len());
    let mut escapes = Vec::new();
    let mut at = 0;
    while at < text.len() {
        let escaped = match text.get(at..at + 3) {
            Some([b'%', high, low]) => hex_value(*high).zip(hex_value(*low)).map(|(h, l)| h << 4 | l),
            _ => None,
        };
        match escaped {
            Some(byte) => {
                escapes.push(decoded.len());
                decoded.push(byte);
                at += 3;
            }
            None => {
                decoded.push(text[at]);
                at += 1;
            }
        }
    }
    (decoded, escapes)
}

fn hex_value(digit: u8) -> Option<u8> {
    (digit as char).to_digit(16).map(|d| d as u8)
}

const BASE64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Standard base64 without padding.
fn base64(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let group = chunk.iter().enumerate().fold(0u32, |group, (i, b)| group | u32::from(*b) << (16 - 8 * i));
        for i in 0..=chunk.len() {
            out.push(BASE64[(group >> (18 - 6 * i) & 63) as usize]);
        }
    }
    out
}

fn url_safe(standard: &[u8]) -> Vec<u8> {
    standard
        .iter()
        .map(|c| match c {
            b'+' => b'-',
            b'/' => b'_',
            c => *c,
        })
        .collect()
}

/// The forms a secret is redacted in: itself (unwrapped too), its hex, and its base64 alone
/// (padded and not) and inside a longer base64 text at each alignment, in
/// both alphabets. Inside a longer text the characters that mix the secret's
/// bits with its neighbours' are left out: they are not the secret's.
fn forms(secret: &[u8]) -> Vec<Vec<u8>> {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let hex: String = secret
        .iter()
        .flat_map(|b| [DIGITS[usize::from(b >> 4)], DIGITS[usize::from(b & 15)]])
        .map(char::from)
        .collect();
    let mut standard = Vec::new();
    let alone = base64(secret);
    let mut padded = alone.clone();
    padded.resize(alone.len().div_ceil(4) * 4, b'=');
    standard.push(alone);
    standard.push(padded);
    for lead in 0..3 {
        let mut shifted = vec![0; lead];
        shifted.extend_from_slice(secret);
        let encoded = base64(&shifted);
        // Character j holds bits 6j..6j+6; the secret's are 8·lead..8·(lead+n).
        let (first, last) = ((8 * lead).div_ceil(6), 8 * (lead + secret.len()) / 6);
        standard.push(encoded[first..last].to_vec());
    }
    let mut out = vec![secret.to_vec(), hex.clone().into_bytes(), hex.to_uppercase().into_bytes()];
    out.extend(standard.iter().map(|form| url_safe(form)));
    out.extend(standard);
    // A secret that is itself wrapped (a PEM key) is found with its lines
    // ending in `\n` or `\r\n` (its last line break, which ends no line
    // of it, left out).
    let trimmed = secret.trim_ascii_end();
    out.extend(Unwrapped::of(trimmed, false).map(|unwrapped| unwrapped.bytes));
    out
}

#[cfg(test)]
mod tests;
