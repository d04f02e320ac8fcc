//! The formatter: canonical indentation (four spaces per block, one more per
//! open bracket line), canonical spacing between tokens, at most one blank
//! line in a row, one line break at the end. It never adds or joins lines and
//! never touches the inside of a string, so every comment stays where it was
//! and the formatted text parses to the same tree minus whitespace. A line
//! whose canonical spacing would lex differently keeps its own spacing.
//!
//! Files with syntax errors are not formatted.

mod cli;
mod lines;
mod spacing;

pub use crate::cli::run;
pub use sr_syntax::{TextRange, TextSize};

use sr_syntax::{Diagnostic, NodeOrToken, SyntaxKind, WalkEvent};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FormatError {
    /// The file does not parse; the first error (boxed: a diagnostic is large).
    Syntax(Box<Diagnostic>),
}

impl std::fmt::Display for FormatError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FormatError::Syntax(d) => {
                write!(f, "cannot format a file with syntax errors: {} {}", d.code(), d.message())
            }
        }
    }
}

impl std::error::Error for FormatError {}

/// Replace `range` by `new_text`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edit {
    pub range: TextRange,
    pub new_text: String,
}

/// The tree as node kinds and token texts, without whitespace and line
/// breaks: what formatting preserves (a lost or moved comment changes it).
pub fn shape(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for event in sr_syntax::parse(text).syntax().preorder_with_tokens() {
        match event {
            WalkEvent::Enter(NodeOrToken::Node(node)) => out.push(format!("{:?}", node.kind())),
            WalkEvent::Enter(NodeOrToken::Token(token))
                if !matches!(token.kind(), SyntaxKind::WHITESPACE | SyntaxKind::NEWLINE) =>
            {
                // Only the line breaks inside multi-line strings may change (CRLF).
                out.push(format!("{:?} {}", token.kind(), token.text().replace("\r\n", "\n").trim_end()))
            }
            WalkEvent::Leave(NodeOrToken::Node(_)) => out.push("<".to_string()),
            _ => {}
        }
    }
    out
}

/// The formatted text.
pub fn format(text: &str) -> Result<String, FormatError> {
    let lines = lines::format_lines(text)?;
    Ok(lines.join())
}

/// The smallest single edit that formats the whole text (none when it is formatted).
pub fn format_edits(text: &str) -> Result<Vec<Edit>, FormatError> {
    let formatted = format(text)?;
    if formatted == text {
        return Ok(Vec::new());
    }
    let prefix = common_prefix(text.as_bytes(), formatted.as_bytes(), text);
    let suffix = common_prefix_rev(
        &text.as_bytes()[prefix..],
        &formatted.as_bytes()[prefix..],
        &text[prefix..],
        &formatted[prefix..],
    );
    let range = TextRange::new(TextSize::from(prefix as u32), TextSize::from((text.len() - suffix) as u32));
    Ok(vec![Edit { range, new_text: formatted[prefix..formatted.len() - suffix].to_string() }])
}

/// Edits that format the lines `range` touches, one per changed line.
pub fn format_range(text: &str, range: TextRange) -> Result<Vec<Edit>, FormatError> {
    let lines = lines::format_lines(text)?;
    Ok(lines.edits_within(range))
}

fn common_prefix(a: &[u8], b: &[u8], text: &str) -> usize {
    let mut n = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    while !text.is_char_boundary(n) {
        n -= 1;
    }
    n
}

fn common_prefix_rev(a: &[u8], b: &[u8], a_text: &str, b_text: &str) -> usize {
    let mut n = a.iter().rev().zip(b.iter().rev()).take_while(|(x, y)| x == y).count();
    while !a_text.is_char_boundary(a_text.len() - n) || !b_text.is_char_boundary(b_text.len() - n) {
        n -= 1;
    }
    n
}
