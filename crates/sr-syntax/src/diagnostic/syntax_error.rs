//! E0007 `syntax-error`: the input is not StreetRace.
//!
//! The lexer found a character no token starts with, or the parser found a token,
//! a line end or the end of the file where the grammar expects something else.
//! Every syntax error is reported (upstream reports the first), with what was
//! expected there. A `"""` (or `'''`) that is never closed is `invalid character`
//! at its third quote, where upstream's lexer fails; the string runs to the line
//! before the next line that starts a definition, so the definitions after it are
//! still checked. A YAML agent file that cannot be loaded is E0007 too, with the
//! loader's explanation.
//!
//! Our language extensions are syntax errors to upstream, and `--compat upstream`
//! reports them as upstream does: `executor` definitions and properties
//! (`unexpected token 'executor'`), calls of `int`, `float`, `bool` (`unexpected
//! token 'int'`) and `max` (`unexpected token '('`), `break` (`unexpected end
//! of line`), and `a2a` tools (`unexpected token 'a2a'`). An `a2a` tool whose
//! card URL is not an `http(s)://HOST…` URL is an E0007 in the default mode, at
//! the URL.
//!
//! ```sr
//! model fast = anthropic/claude-sonnet
//! agent helper
//!     instruction greet
//! ```
//!
//! `unexpected end of line` after `helper`, with help "expected `:` at the end of
//! the line". Fix: write what the help expects (here `agent helper:`).

use super::{Code, Describe, Severity, mismatched_indentation, nesting_too_deep};

/// What the lexer and parser find: the syntax errors, which every later layer
/// reports as they are.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum SyntaxError {
    /// E0007, from the parser: what it found, and what it expected there.
    Syntax { found: Found, help: Option<SyntaxHelp> },
    /// E0007, from the lexer: a character no token starts with.
    InvalidCharacter { character: String },
    /// E0007, from the lexer: a triple-quoted string that is never closed
    /// (reported at its third quote, where upstream's lexer fails); it runs to
    /// the next line that starts a definition.
    UnclosedString { delimiter: &'static str },
    /// E0007: a YAML agent file that cannot be loaded; `problem` is the loader's explanation.
    InvalidYamlAgent { problem: String },
    /// E0008: a line at `column` (1-based) between the enclosing blocks' columns.
    MismatchedIndentation { column: u32, block_columns: Vec<u32> },
    /// SR111: `what` is the construct, e.g. "this expression is".
    TooDeep { what: String },
}

/// What the parser found where it expected something else.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Found {
    EndOfInput,
    EndOfLine,
    Indentation,
    EndOfBlock,
    InvalidCharacter,
    Token(String),
}

/// The parser's explanation of a syntax error.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum SyntaxHelp {
    /// What the grammar accepts here, e.g. "`=` or `:`".
    Expected(String),
    /// A sentence of its own.
    Explain(String),
}

impl Describe for SyntaxError {
    fn code(&self) -> Code {
        match self {
            SyntaxError::Syntax { .. }
            | SyntaxError::InvalidCharacter { .. }
            | SyntaxError::UnclosedString { .. }
            | SyntaxError::InvalidYamlAgent { .. } => Code::E0007,
            SyntaxError::MismatchedIndentation { .. } => Code::E0008,
            SyntaxError::TooDeep { .. } => Code::SR111,
        }
    }

    fn severity(&self) -> Severity {
        self.code().severity()
    }

    fn message(&self) -> String {
        match self {
            SyntaxError::Syntax { found, .. } => match found {
                Found::EndOfInput => "unexpected end of input".to_string(),
                Found::EndOfLine => "unexpected end of line".to_string(),
                Found::Indentation => "unexpected indentation".to_string(),
                Found::EndOfBlock => "unexpected end of block".to_string(),
                Found::InvalidCharacter => "invalid character".to_string(),
                Found::Token(text) => format!("unexpected token '{text}'"),
            },
            SyntaxError::InvalidCharacter { .. } | SyntaxError::UnclosedString { .. } => {
                "invalid character".to_string()
            }
            SyntaxError::InvalidYamlAgent { problem } => problem.clone(),
            SyntaxError::MismatchedIndentation { .. } => mismatched_indentation::message(),
            SyntaxError::TooDeep { what } => nesting_too_deep::message(what),
        }
    }

    fn help(&self) -> Option<String> {
        match self {
            SyntaxError::Syntax { help, .. } => Some(match help.as_ref()? {
                SyntaxHelp::Expected(expected) => format!("expected {expected}"),
                SyntaxHelp::Explain(text) => text.clone(),
            }),
            SyntaxError::InvalidCharacter { character } => Some(format!("unexpected character '{character}'")),
            SyntaxError::UnclosedString { delimiter } => Some(format!(
                "this `{delimiter}` is never closed: the string runs to the next line that starts a definition"
            )),
            SyntaxError::InvalidYamlAgent { .. } => None,
            SyntaxError::MismatchedIndentation { column, block_columns } => {
                Some(mismatched_indentation::help(*column, block_columns))
            }
            SyntaxError::TooDeep { .. } => Some(nesting_too_deep::help()),
        }
    }
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use super::*;

    #[test]
    fn the_parser_says_what_it_found_and_what_it_expected() {
        let errors = [
            SyntaxError::Syntax { found: Found::EndOfLine, help: Some(SyntaxHelp::Expected("`:`".into())) },
            SyntaxError::Syntax { found: Found::Token("=".into()), help: None },
            SyntaxError::InvalidCharacter { character: "§".into() },
            SyntaxError::UnclosedString { delimiter: "\"\"\"" },
        ];
        let out: Vec<String> = errors
            .iter()
            .map(|e| {
                format!("{} {}: {} | {}", e.code(), e.severity().as_str(), e.message(), e.help().unwrap_or_default())
            })
            .collect();
        expect![[r#"
            E0007 error: unexpected end of line | expected `:`
            E0007 error: unexpected token '=' | 
            E0007 error: invalid character | unexpected character '§'
            E0007 error: invalid character | this `"""` is never closed: the string runs to the next line that starts a definition"#]]
        .assert_eq(&out.join("\n"));
    }
}
