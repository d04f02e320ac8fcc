//! Where pieces may start, and finding them again after an edit by lexing
//! only around it.
//!
//! The lexer is context-free, but a token can depend on text far after it: a
//! quote scans on for its closing quote, to the end of the file when there is
//! none. So the starts before an edit stay only where every quoted token
//! before them was decided by text the edit left alone; lexing resumes at the
//! last such start, and stops at the first start past the edit that was a
//! start before (the rest of the text lexes as it did).

use text_size::{TextRange, TextSize};

use crate::SyntaxKind::*;
use crate::lexer::Spans;
use crate::pieces::SharedEnds;

/// Where pieces after the first may start: the range of each line's first token
/// at column 1 outside brackets that can begin an item, except the file's first
/// token (the first piece holds the version declaration). Other lines at column
/// 1 (`end`, or text that is no definition) stay with the piece before them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PieceStarts {
    starts: Vec<TextRange>,
    /// For each start, then for the end of the text: how far into the text
    /// (exclusive) the quoted tokens since the previous start were decided, 0
    /// when there were none, `u32::MAX` when by the rest of the text.
    decided_by: Vec<u32>,
}

impl PieceStarts {
    pub fn new(text: &str) -> PieceStarts {
        let mut out = PieceStarts::default();
        scan(text, 0, 0, &mut out, |_, _, _| false);
        out
    }

    pub fn ranges(&self) -> &[TextRange] {
        &self.starts
    }

    /// The starts of `new`, given those of `old` (`self`) and what the two
    /// texts share. Equal to `PieceStarts::new(new)`.
    pub fn edited(&self, old: &str, new: &str, shared: SharedEnds) -> PieceStarts {
        let SharedEnds { prefix, suffix } = shared;
        // The last start at or before the edit with every quote before it
        // decided within the shared prefix. Other tokens depend on no more than
        // the rest of their line (see `Spans::take_read`), and a start is at a
        // line start, so the tokens before it are the same in `new`.
        let mut restart = None;
        let mut decided = 0;
        for (j, range) in self.starts.iter().enumerate() {
            decided = decided.max(self.decided_by[j]);
            if usize::from(range.start()) > prefix || decided as usize > prefix {
                break;
            }
            restart = Some(j);
        }
        let Some(j) = restart else { return PieceStarts::new(new) };
        let delta = new.len() as i64 - old.len() as i64;
        let suffix_start = new.len() - suffix;
        let mut out = PieceStarts { starts: self.starts[..j].to_vec(), decided_by: self.decided_by[..j].to_vec() };
        scan(new, self.starts[j].start().into(), self.decided_by[j], &mut out, |range, decided, out| {
            // A start in the shared suffix that was a start before: from
            // here on the text lexes as it did, `delta` bytes further on.
            let start = usize::from(range.start());
            if start < suffix_start {
                return false;
            }
            let old_start = TextSize::from((start as i64 - delta) as u32);
            let Ok(k) = self.starts.binary_search_by_key(&old_start, |r| r.start()) else { return false };
            let shift = |offset: u32| (i64::from(offset) + delta) as u32;
            out.starts.push(range);
            out.decided_by.push(decided);
            out.starts.extend(
                self.starts[k + 1..]
                    .iter()
                    .map(|r| TextRange::new(shift(r.start().into()).into(), shift(r.end().into()).into())),
            );
            out.decided_by.extend(self.decided_by[k + 1..].iter().map(|&d| match d {
                0 | u32::MAX => d,
                d => shift(d),
            }));
            true
        });
        out
    }
}

/// Lexes `text` from `from` (0, or a start: a line start outside brackets),
/// adding the starts it finds to `out`; `carried` is what decided the quoted
/// tokens since the start before `from`. At each start, `rejoin` may finish
/// `out` instead (it returns `true`).
fn scan(
    text: &str,
    from: usize,
    carried: u32,
    out: &mut PieceStarts,
    mut rejoin: impl FnMut(TextRange, u32, &mut PieceStarts) -> bool,
) {
    let base = from as u32;
    let mut lexer = Spans::new(&text[from..]);
    let mut depth: u32 = 0;
    let mut first = from == 0;
    let mut decided = carried;
    // Runs of invalid characters as one token each: none starts an item.
    while let Some(token) = lexer.next() {
        let read = lexer.take_read();
        if read != 0 {
            decided = decided.max(read.saturating_add(base));
        }
        if matches!(token.kind, WHITESPACE | COMMENT | NEWLINE) {
            continue;
        }
        let range = token.range + TextSize::from(base);
        let start = usize::from(range.start());
        let line_start = start > 0 && text.as_bytes()[start - 1] == b'\n';
        if depth == 0 && line_start && !first && crate::item_kind::starts_item(token.kind, &text[range]) {
            if rejoin(range, decided, out) {
                return;
            }
            out.starts.push(range);
            out.decided_by.push(decided);
            decided = 0;
        }
        first = false;
        match token.kind {
            L_PAREN | L_BRACK | L_BRACE => depth += 1,
            R_PAREN | R_BRACK | R_BRACE => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    out.decided_by.push(decided);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn starts(text: &str) -> Vec<&str> {
        PieceStarts::new(text).ranges().iter().map(|&r| &text[r]).collect()
    }

    #[test]
    fn pieces_start_at_items_at_column_one_outside_brackets() {
        let text = "streetrace v1\n# c\nmodel m = a/b\nx = [\nagent]\nflow f:\n    y\nend\n  agent\nexecutor e\n";
        assert_eq!(starts(text), ["model", "flow", "executor"]);
    }

    /// Edits `old` by replacing `from` with `to` and checks the incremental
    /// starts against a fresh scan.
    fn check_edit(old: &str, from: &str, to: &str) -> PieceStarts {
        let new = old.replacen(from, to, 1);
        let edited = PieceStarts::new(old).edited(old, &new, SharedEnds::between(old, &new));
        assert_eq!(edited, PieceStarts::new(&new), "{old:?} -> {new:?}");
        edited
    }

    #[test]
    fn an_edit_after_a_quote_that_scanned_to_the_end_lexes_from_before_the_quote() {
        let old = "model m = a/b\nflow f:\n    log \"open\nagent a:\n    x\nagent b:\n    y\n";
        assert_eq!(starts(old), ["flow", "agent", "agent"]);
        // Closing the quote later swallows the first agent into the string.
        let edited = check_edit(old, "    y\n", "    y\"\n");
        assert_eq!(edited.ranges().len(), 1);
    }

    #[test]
    fn a_quote_with_an_open_interpolation_depends_on_the_next_brace() {
        // `"a ${x"` is a plain string until a `}` and a `"` follow: then it
        // is an interpolated string to that `"`, across lines.
        let old = "flow f:\n    log \"a ${x\" \nagent b:\n    y\nagent c:\n    z\n";
        assert_eq!(starts(old), ["agent", "agent"]);
        let edited = check_edit(old, "z\n", "z}\"\n");
        assert!(edited.ranges().is_empty());
    }

    #[test]
    fn an_edit_inside_a_string_that_spans_lines_moves_starts_on_both_sides() {
        let old = "flow f:\n    log \"\"\"a\nagent x\"\"\"\nagent b:\n    y\nflow g:\n    z\n";
        assert_eq!(starts(old), ["agent", "flow"]);
        check_edit(old, "\"\"\"a", "\"a");
        check_edit(old, "y\n", "\"\"\"\n");
        check_edit(old, "log ", "log \"${x\" } \"");
    }

    #[test]
    fn edits_of_starts_and_brackets_are_found_again() {
        let old = "model m = a/b\nagent a:\n    x\nagent b:\n    y = [1,\n    2]\nflow c:\n    z\n";
        check_edit(old, "agent b", "agentx b");
        check_edit(old, "2]", "2");
        check_edit(old, "\nflow c", "flow c");
        check_edit(old, "    x\n", "");
        check_edit(old, "model", "# model");
    }
}
