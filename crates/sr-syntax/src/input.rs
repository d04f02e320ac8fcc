//! The indentation layer between the lexer and the parser.
//!
//! Reproduces upstream's Lark `Indenter`: the first line break of a run of blank
//! lines and comments is a significant `NEWLINE`; after it, the indentation of the
//! run's last line (spaces + 4 × tabs) opens an `INDENT` or closes `DEDENT`s.
//! Inside `(`, `[` and `{` line breaks are trivia. A dedent to a column that is not
//! on the stack is E0008; the layer then carries on with that column as a silent
//! level so that one bad line yields one error.

use text_size::{TextRange, TextSize};

use crate::SyntaxKind::{self, *};
use crate::diagnostic::{Diagnostic, SyntaxError};
use crate::lexer::Token;

/// One token the parser sees.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Input {
    pub kind: SyntaxKind,
    /// Index of the lexer token, or `None` for the zero-width tokens this layer adds.
    pub raw: Option<u32>,
    /// Where to report a problem with this token. For zero-width tokens: the
    /// position of the line break that caused them, as upstream reports it.
    pub range: TextRange,
}

/// The parser's input and the indentation errors found while making it.
pub struct Inputs {
    pub tokens: Vec<Input>,
    pub errors: Vec<Diagnostic>,
}

#[derive(Clone)]
struct Level {
    column: u32,
    /// Columns of badly dedented lines that were kept in this block, so that one
    /// bad line yields one error and its neighbours at the same column none.
    aliases: Vec<u32>,
}

impl Level {
    fn at(column: u32) -> Level {
        Level { column, aliases: Vec::new() }
    }

    fn holds(&self, column: u32) -> bool {
        self.column == column || self.aliases.contains(&column)
    }
}

pub fn inputs(text: &str, tokens: &[Token]) -> Inputs {
    let mut out = Vec::with_capacity(tokens.len());
    let mut errors = Vec::new();
    let mut stack = vec![Level::at(0)];
    let mut paren_depth: u32 = 0;
    let mut i = 0;
    while i < tokens.len() {
        let token = tokens[i];
        match token.kind {
            WHITESPACE | COMMENT => i += 1,
            NEWLINE if paren_depth > 0 => i += 1,
            NEWLINE => {
                // The run: line breaks, indentation and comments up to the next token.
                let first = i;
                let mut last_newline = i;
                let mut j = i + 1;
                while j < tokens.len() && matches!(tokens[j].kind, NEWLINE | WHITESPACE | COMMENT) {
                    if tokens[j].kind == NEWLINE {
                        last_newline = j;
                    }
                    j += 1;
                }
                let at = newline_position(tokens, first);
                out.push(Input { kind: NEWLINE, raw: Some(first as u32), range: at });
                let column = match tokens.get(last_newline + 1) {
                    Some(ws) if ws.kind == WHITESPACE => indentation(&text[ws.range]),
                    _ => 0,
                };
                let indent_range = match tokens.get(last_newline + 1) {
                    Some(ws) if ws.kind == WHITESPACE => ws.range,
                    _ => TextRange::empty(tokens[last_newline].range.end()),
                };
                // At the end of the file the remaining levels close below.
                if j < tokens.len() {
                    change_level(&mut stack, column, at, indent_range, &mut out, &mut errors);
                }
                i = j;
            }
            L_PAREN | L_BRACK | L_BRACE => {
                paren_depth += 1;
                out.push(Input { kind: token.kind, raw: Some(i as u32), range: token.range });
                i += 1;
            }
            R_PAREN | R_BRACK | R_BRACE => {
                paren_depth = paren_depth.saturating_sub(1);
                out.push(Input { kind: token.kind, raw: Some(i as u32), range: token.range });
                i += 1;
            }
            kind => {
                out.push(Input { kind, raw: Some(i as u32), range: token.range });
                i += 1;
            }
        }
    }
    // Upstream appends a line break to files that do not end with one.
    let end = TextSize::of(text);
    let eof = TextRange::empty(end);
    if out.last().is_some_and(|t| t.kind != NEWLINE) && paren_depth == 0 {
        out.push(Input { kind: NEWLINE, raw: None, range: eof });
    }
    // The blocks still open close at the last line break (even one inside
    // brackets), where upstream reports them.
    let last_newline = match tokens.iter().rposition(|t| t.kind != WHITESPACE) {
        Some(last) if matches!(tokens[last].kind, NEWLINE | COMMENT) => {
            let first = (0..=last)
                .rev()
                .take_while(|&i| matches!(tokens[i].kind, NEWLINE | WHITESPACE | COMMENT))
                .last()
                .unwrap_or(last);
            let first_newline = (first..=last).find(|&i| tokens[i].kind == NEWLINE).unwrap_or(last);
            newline_position(tokens, first_newline)
        }
        _ => eof,
    };
    for _ in 1..stack.len() {
        out.push(Input { kind: DEDENT, raw: None, range: last_newline });
    }
    out.push(Input { kind: EOF, raw: None, range: eof });
    Inputs { tokens: out, errors }
}

/// The level of column 0 is never popped: a line at column 0 is held by it.
const BASE_LEVEL: &str = "the base level stays on the stack";

fn change_level(
    stack: &mut Vec<Level>,
    column: u32,
    at: TextRange,
    indent_range: TextRange,
    out: &mut Vec<Input>,
    errors: &mut Vec<Diagnostic>,
) {
    let top = stack.last().expect(BASE_LEVEL);
    if column > top.column && !top.holds(column) {
        stack.push(Level::at(column));
        out.push(Input { kind: INDENT, raw: None, range: at });
        return;
    }
    while !stack.last().expect(BASE_LEVEL).holds(column) {
        let below = stack[stack.len() - 2].column;
        if below < column {
            // Between two levels: report it and keep the line in the inner block.
            let block_columns = stack.iter().map(|l| l.column + 1).collect();
            let kind = SyntaxError::MismatchedIndentation { column: column + 1, block_columns };
            errors.push(Diagnostic::new(kind, indent_range).at_upstream(1, 0));
            stack.last_mut().expect(BASE_LEVEL).aliases.push(column);
            return;
        }
        stack.pop();
        out.push(Input { kind: DEDENT, raw: None, range: at });
    }
}

/// Where problems with a line break are reported: an empty range where upstream's
/// newline token starts, i.e. after the line's last token (before a trailing
/// comment), so that the line matches upstream's and the caret sits where
/// something is missing.
fn newline_position(tokens: &[Token], newline: usize) -> TextRange {
    let mut start = newline;
    while start > 0 && matches!(tokens[start - 1].kind, COMMENT | WHITESPACE) {
        start -= 1;
    }
    while start < newline && tokens[start].kind == WHITESPACE {
        start += 1;
    }
    TextRange::empty(tokens[start].range.start())
}

/// Spaces count one column, tabs four.
fn indentation(ws: &str) -> u32 {
    ws.bytes().map(|b| if b == b'\t' { 4 } else { 1 }).sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lexer::tokenize;
    use expect_test::{Expect, expect};

    fn check(text: &str, expect: Expect) {
        let tokens = tokenize(text);
        let inputs = inputs(text, &tokens);
        let mut out = String::new();
        for t in &inputs.tokens {
            match t.raw {
                Some(raw) if t.kind != NEWLINE => {
                    out.push_str(&format!("{:?}({}) ", t.kind, &text[tokens[raw as usize].range]))
                }
                _ => out.push_str(&format!("{:?} ", t.kind)),
            }
            if t.kind == NEWLINE {
                out.push('\n');
            }
        }
        for e in &inputs.errors {
            out.push_str(&format!("\nerror {:?}: {}", e.range, e.help().unwrap_or_default()));
        }
        expect.assert_eq(out.trim_end());
    }

    #[test]
    fn blocks_open_and_close() {
        check(
            "agent:\n    tools a\n\n    # note\n  # odd comment\n    use b\nflow f:\n\tx = 1",
            expect![[r#"
                AGENT_KW(agent) COLON(:) NEWLINE 
                INDENT TOOLS_KW(tools) NAME(a) NEWLINE 
                USE_KW(use) NAME(b) NEWLINE 
                DEDENT FLOW_KW(flow) NAME(f) COLON(:) NEWLINE 
                INDENT NAME(x) EQ(=) INT(1) NEWLINE 
                DEDENT EOF"#]],
        );
    }

    #[test]
    fn brackets_hide_line_breaks() {
        check(
            "x = [1,\n  2,\n      3]\ny",
            expect![[r#"
                NAME(x) EQ(=) L_BRACK([) INT(1) COMMA(,) INT(2) COMMA(,) INT(3) R_BRACK(]) NEWLINE 
                NAME(y) NEWLINE 
                EOF"#]],
        );
    }

    #[test]
    fn bad_dedent_is_reported_once() {
        check(
            "a:\n    b\n  c\n  d\ne",
            expect![[r#"
                NAME(a) COLON(:) NEWLINE 
                INDENT NAME(b) NEWLINE 
                NAME(c) NEWLINE 
                NAME(d) NEWLINE 
                DEDENT NAME(e) NEWLINE 
                EOF 
                error 9..11: this line starts at column 3, but the enclosing blocks start at columns 1, 5; align it with the lines of its block"#]],
        );
    }

    #[test]
    fn leading_indentation_of_the_first_line_is_ignored() {
        check(
            "  a\n",
            expect![[r#"
                NAME(a) NEWLINE 
                EOF"#]],
        );
    }
}
