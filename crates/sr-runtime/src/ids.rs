//! The one rule for ids that become file or directory names (sessions, runs,
//! eval cases, forks): 1 to [`MAX_LEN`] of the letters `A-Z` `a-z`, the digits,
//! `.`, `_` and `-`, not starting with `.`. Such an id is one path component
//! that is neither `.` nor `..` nor hidden, so joining it to a directory stays
//! in that directory.

use std::fmt;

/// The longest id.
pub const MAX_LEN: usize = 128;

/// What an id names, for messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdKind {
    Session,
    Run,
    Case,
    Fork,
}

impl fmt::Display for IdKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            IdKind::Session => "session",
            IdKind::Run => "run",
            IdKind::Case => "case",
            IdKind::Fork => "fork",
        })
    }
}

/// An id that breaks the rule; its message names the rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadId {
    pub kind: IdKind,
    /// The id as given, escaped and cut to a readable length.
    pub shown: String,
}

impl fmt::Display for BadId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} id {} is not an id: {RULE}", self.kind, self.shown)
    }
}

impl std::error::Error for BadId {}

/// The rule, as messages state it.
pub const RULE: &str =
    "an id is 1 to 128 of the letters A-Z and a-z, the digits, '.', '_' and '-', not starting with '.'";

fn allowed(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')
}

/// `id` if it follows the rule.
pub fn check(kind: IdKind, id: &str) -> Result<(), BadId> {
    if !id.is_empty() && id.len() <= MAX_LEN && !id.starts_with('.') && id.chars().all(allowed) {
        return Ok(());
    }
    const SHOWN: usize = 40;
    let cut: String = id.chars().take(SHOWN).collect();
    let more = if id.chars().nth(SHOWN).is_some() { format!("… ({} bytes)", id.len()) } else { String::new() };
    Err(BadId { kind, shown: format!("{cut:?}{more}") })
}

/// `name` made an id: characters the rule does not allow become `_`, a
/// leading `.` too, and a name longer than [`MAX_LEN`] keeps its start and
/// ends with a hash of the whole, so different long names stay different.
pub fn safe_name(name: &str) -> String {
    let mut out: String = name.chars().map(|c| if allowed(c) { c } else { '_' }).collect();
    if out.is_empty() || out.starts_with('.') {
        out.insert(0, '_');
    }
    if out.len() > MAX_LEN {
        let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
        for byte in name.bytes() {
            hash ^= u64::from(byte);
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
        // Every character is ASCII here, so any byte index is a boundary.
        out.truncate(MAX_LEN - 17);
        out.push_str(&format!("-{hash:016x}"));
    }
    out
}

/// Ids every entry point must refuse, made from the rule: each ASCII
/// character it does not allow (NUL and `/` among them) inside an otherwise
/// good id and alone, a leading `.`, `.` and `..`, paths, the empty id, one
/// byte too long and 10 kB, and non-ASCII letters.
#[cfg(any(test, feature = "testing"))]
pub fn hostile() -> Vec<String> {
    let mut ids: Vec<String> =
        (0u8..128).map(char::from).filter(|c| !allowed(*c)).flat_map(|c| [format!("a{c}b"), c.to_string()]).collect();
    let paths = ["", ".", "..", ".hidden", "../x", "../../x", "/abs", "/", "a/b", "a/../b", "x/..", "\\..\\x"];
    let letters = ["é", "café", "ａ", "a\u{202e}b", "日本"];
    ids.extend(paths.into_iter().chain(letters).map(String::from));
    ids.push("a".repeat(MAX_LEN + 1));
    ids.push("a".repeat(10_000));
    ids
}

#[cfg(test)]
mod tests;
