//! The lexer: upstream's context-free token rules, reproduced on logos.
//!
//! Upstream's Lark "basic" lexer tries terminals in a fixed order and takes the
//! *first* alternative that matches, while logos takes the *longest* match. The two
//! agree on this token set except in two places, handled here:
//! - `VERSION` (`v1`, `v1.2`) wins over names even when a name would be longer
//!   (`v1x` is `v1` + `x`), so the name patterns exclude a leading `v<digit>`;
//! - quoted strings (`"""…"""` lazily, then `"…${…}…"`, then `"…"`) are decided by a
//!   callback that applies upstream's order exactly ([`quoted`]).

use logos::Logos;
use text_size::{TextRange, TextSize};

use crate::SyntaxKind;

mod quoted;

pub(crate) use quoted::unterminated;
use quoted::{Quoted, Scans, double_quoted, single_quoted};

/// A token of the source text. Every byte of the input belongs to exactly one token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Token {
    pub kind: SyntaxKind,
    pub range: TextRange,
}

/// Splits `text` into tokens. Keywords are retyped from names; characters no
/// token accepts become `ERROR_TOKEN`s of one character.
pub fn tokenize(text: &str) -> Vec<Token> {
    let mut tokens = Vec::with_capacity(text.len() / 3);
    for token in Spans::new(text) {
        // Logos may report an error spanning several characters; upstream stops at
        // the first, and one token per character keeps messages precise.
        if token.kind == SyntaxKind::ERROR_TOKEN {
            let mut offset = token.range.start();
            for ch in text[token.range].chars() {
                let len = TextSize::of(ch);
                tokens.push(Token { kind: token.kind, range: TextRange::at(offset, len) });
                offset += len;
            }
            continue;
        }
        tokens.push(token);
    }
    tokens
}

/// The tokens of `text` as logos finds them, one at a time (nothing is
/// collected): [`tokenize`]'s, except that characters no token accepts come
/// as one `ERROR_TOKEN` per run. It also tells how far into the text its
/// tokens so far depend ([`Spans::take_read`]).
pub(crate) struct Spans<'a>(logos::Lexer<'a, Raw>);

impl<'a> Spans<'a> {
    pub(crate) fn new(text: &'a str) -> Spans<'a> {
        Spans(Raw::lexer(text))
    }

    /// Takes the furthest offset (exclusive) of text that decided a quoted
    /// token since the last call, `u32::MAX` for the end of the text (more text
    /// there could change a token), 0 when no quote was lexed.
    ///
    /// Every other token depends on no more than the rest of its line: no
    /// pattern but `\r?\n` matches a line break, and that one ends there. So
    /// the tokens before a line start are the same in any text that agrees
    /// with this one up to that line start and up to what this reports.
    pub(crate) fn take_read(&mut self) -> u32 {
        self.0.extras.take_decided()
    }
}

impl Iterator for Spans<'_> {
    type Item = Token;

    #[inline]
    fn next(&mut self) -> Option<Token> {
        let raw = self.0.next()?;
        let span = self.0.span();
        let range = TextRange::new(TextSize::from(span.start as u32), TextSize::from(span.end as u32));
        let kind = match raw {
            Ok(raw) => raw.kind(self.0.slice()),
            Err(()) => SyntaxKind::ERROR_TOKEN,
        };
        Some(Token { kind, range })
    }
}

#[derive(Logos, Debug, Clone, Copy, PartialEq, Eq)]
#[logos(extras = Scans)]
enum Raw {
    #[regex(r"[a-zA-Z][a-zA-Z0-9_-]*/[a-zA-Z][a-zA-Z0-9_.-]*")]
    ProviderModel,
    #[regex(r"v[0-9]+(\.[0-9]+)?")]
    Version,
    #[regex(r"([a-uw-zA-Z_][a-zA-Z0-9_-]*|v([a-zA-Z_-][a-zA-Z0-9_-]*)?)(\.[a-zA-Z_][a-zA-Z0-9_-]*)+")]
    DottedName,
    #[regex(r"[0-9]+\.[0-9]+")]
    Number,
    #[regex(r"mcp://[a-zA-Z_][a-zA-Z0-9_]*")]
    McpUri,
    #[regex(r"pip://[a-zA-Z_][a-zA-Z0-9_]*")]
    PipUri,
    #[regex(r"\./[a-zA-Z0-9_\-./]+\.sr")]
    LocalPath,
    #[regex(r"\r?\n")]
    Newline,
    #[regex(r"#[^\n]*", allow_greedy = true)]
    Comment,
    #[regex(r"[a-uw-zA-Z_][a-zA-Z0-9_-]*|v([a-zA-Z_-][a-zA-Z0-9_-]*)?")]
    Name,
    #[regex(r"[0-9]+")]
    Int,
    #[regex(r"[ \t]+")]
    Whitespace,
    #[token("\"", double_quoted)]
    #[token("'", single_quoted)]
    Quoted(Quoted),

    #[token("==")]
    Eq2,
    #[token("!=")]
    Neq,
    #[token("->")]
    Arrow,
    #[token(">=")]
    GtEq,
    #[token("<=")]
    LtEq,
    #[token(":")]
    Colon,
    #[token(",")]
    Comma,
    #[token("$")]
    Dollar,
    #[token(".")]
    Dot,
    #[token("=")]
    Eq,
    #[token("{")]
    LBrace,
    #[token("}")]
    RBrace,
    #[token("<")]
    Lt,
    #[token(">")]
    Gt,
    #[token("(")]
    LParen,
    #[token(")")]
    RParen,
    #[token("[")]
    LBrack,
    #[token("]")]
    RBrack,
    #[token("-")]
    Minus,
    #[token("%")]
    Percent,
    #[token("+")]
    Plus,
    #[token("?")]
    Question,
    #[token("/")]
    Slash,
    #[token("*")]
    Star,
    #[token("~")]
    Tilde,
}

impl Raw {
    fn kind(self, text: &str) -> SyntaxKind {
        use SyntaxKind::*;
        match self {
            Raw::ProviderModel => PROVIDER_MODEL,
            Raw::Version => VERSION,
            Raw::DottedName => DOTTED_NAME,
            Raw::Number => NUMBER,
            Raw::McpUri => MCP_URI,
            Raw::PipUri => PIP_URI,
            Raw::LocalPath => LOCAL_PATH,
            Raw::Newline => NEWLINE,
            Raw::Comment => COMMENT,
            Raw::Name => SyntaxKind::from_keyword(text).unwrap_or(NAME),
            Raw::Int => INT,
            Raw::Whitespace => WHITESPACE,
            Raw::Quoted(Quoted::Triple) => TRIPLE_STRING,
            Raw::Quoted(Quoted::Interpolated) => INTERP_STRING,
            Raw::Quoted(Quoted::Plain) => STRING,
            Raw::Eq2 => EQ2,
            Raw::Neq => NEQ,
            Raw::Arrow => ARROW,
            Raw::GtEq => GTEQ,
            Raw::LtEq => LTEQ,
            Raw::Colon => COLON,
            Raw::Comma => COMMA,
            Raw::Dollar => DOLLAR,
            Raw::Dot => DOT,
            Raw::Eq => EQ,
            Raw::LBrace => L_BRACE,
            Raw::RBrace => R_BRACE,
            Raw::Lt => LT,
            Raw::Gt => GT,
            Raw::LParen => L_PAREN,
            Raw::RParen => R_PAREN,
            Raw::LBrack => L_BRACK,
            Raw::RBrack => R_BRACK,
            Raw::Minus => MINUS,
            Raw::Percent => PERCENT,
            Raw::Plus => PLUS,
            Raw::Question => QUESTION,
            Raw::Slash => SLASH,
            Raw::Star => STAR,
            Raw::Tilde => TILDE,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use expect_test::{Expect, expect};

    fn check(input: &str, expect: Expect) {
        let mut out = String::new();
        for token in tokenize(input) {
            if token.kind == SyntaxKind::WHITESPACE {
                continue;
            }
            out.push_str(&format!("{:?} {:?}\n", token.kind, &input[token.range]));
        }
        expect.assert_eq(&out);
    }

    #[test]
    fn version_beats_longer_names() {
        check(
            "v1 v1.2 v10_x v1x.y vx1 v v-1 v1/x",
            expect![[r#"
                VERSION "v1"
                VERSION "v1.2"
                VERSION "v10"
                NAME "_x"
                VERSION "v1"
                DOTTED_NAME "x.y"
                NAME "vx1"
                NAME "v"
                NAME "v-1"
                PROVIDER_MODEL "v1/x"
            "#]],
        );
    }

    #[test]
    fn names_keywords_and_dotted_names() {
        check(
            "x-1 tool-call tool-results agent a.b.c a.model x.1 streetrace.fs",
            expect![[r#"
                NAME "x-1"
                TOOL_CALL_KW "tool-call"
                NAME "tool-results"
                AGENT_KW "agent"
                DOTTED_NAME "a.b.c"
                DOTTED_NAME "a.model"
                NAME "x"
                DOT "."
                INT "1"
                DOTTED_NAME "streetrace.fs"
            "#]],
        );
    }

    #[test]
    fn provider_models_and_sources() {
        check(
            "anthropic/claude-3.5-sonnet x/y a.b/c mcp://srv pip://pkg ./a/b.sr ./a.srx",
            expect![[r#"
                PROVIDER_MODEL "anthropic/claude-3.5-sonnet"
                PROVIDER_MODEL "x/y"
                DOTTED_NAME "a.b"
                SLASH "/"
                NAME "c"
                MCP_URI "mcp://srv"
                PIP_URI "pip://pkg"
                LOCAL_PATH "./a/b.sr"
                LOCAL_PATH "./a.sr"
                NAME "x"
            "#]],
        );
    }

    #[test]
    fn numbers() {
        check(
            "1 1.5 1. -2 .5",
            expect![[r#"
                INT "1"
                NUMBER "1.5"
                INT "1"
                DOT "."
                MINUS "-"
                INT "2"
                DOT "."
                INT "5"
            "#]],
        );
    }

    #[test]
    fn strings_in_upstream_order() {
        check(
            r#""${a"b"}" "a" 'b' "x ${y} z" '${y}' """t "q" """ '''u''' "" """a""""#,
            expect![[r#"
                INTERP_STRING "\"${a\"b\"}\""
                STRING "\"a\""
                STRING "'b'"
                INTERP_STRING "\"x ${y} z\""
                STRING "'${y}'"
                TRIPLE_STRING "\"\"\"t \"q\" \"\"\""
                TRIPLE_STRING "'''u'''"
                STRING "\"\""
                TRIPLE_STRING "\"\"\"a\"\"\""
            "#]],
        );
    }

    #[test]
    fn strings_span_lines_and_have_no_escapes() {
        check(
            "\"a\nb\" \"c\\\" d",
            expect![[r#"
                STRING "\"a\nb\""
                STRING "\"c\\\""
                NAME "d"
            "#]],
        );
    }

    #[test]
    fn unterminated_quotes_are_invalid_characters() {
        check(
            "\"abc\n'x",
            expect![[r#"
                ERROR_TOKEN "\""
                NAME "abc"
                NEWLINE "\n"
                ERROR_TOKEN "'"
                NAME "x"
            "#]],
        );
    }

    /// A triple quote never closed runs to the line break before the next
    /// line that starts with a definition (at column 1, as the lexer reads
    /// it: `flows` and `flow.x` are names), else to the end.
    #[test]
    fn unclosed_triple_quotes_run_to_the_next_definition() {
        check(
            "prompt p: \"\"\"a ${x}\nflows\n  flow\nflow.x\r\nflow f:\n'''b\nagent\n",
            expect![[r#"
                PROMPT_KW "prompt"
                NAME "p"
                COLON ":"
                TRIPLE_STRING "\"\"\"a ${x}\nflows\n  flow\nflow.x"
                NEWLINE "\r\n"
                FLOW_KW "flow"
                NAME "f"
                COLON ":"
                NEWLINE "\n"
                TRIPLE_STRING "'''b"
                NEWLINE "\n"
                AGENT_KW "agent"
                NEWLINE "\n"
            "#]],
        );
        check(
            "\"\"\"x\n\"\"",
            expect![[r#"
                TRIPLE_STRING "\"\"\"x\n\"\""
            "#]],
        );
        assert!(quoted::unterminated("\"\"\"x\n\"\"") && quoted::unterminated("'''"));
        assert!(quoted::unterminated("\"\"\"\"\"") && !quoted::unterminated("\"\"\"\"\"\""));
        assert!(!quoted::unterminated("'''a'''"));
    }

    #[test]
    fn comments_newlines_and_invalid_characters() {
        check(
            "a # c\r\nb\t@ é!=!",
            expect![[r##"
                NAME "a"
                COMMENT "# c\r"
                NEWLINE "\n"
                NAME "b"
                ERROR_TOKEN "@"
                ERROR_TOKEN "é"
                NEQ "!="
                ERROR_TOKEN "!"
            "##]],
        );
    }

    #[test]
    fn punctuation_prefers_two_characters() {
        check(
            "== != -> >= <= = - > < ~ ? % * +",
            expect![[r#"
                EQ2 "=="
                NEQ "!="
                ARROW "->"
                GTEQ ">="
                LTEQ "<="
                EQ "="
                MINUS "-"
                GT ">"
                LT "<"
                TILDE "~"
                QUESTION "?"
                PERCENT "%"
                STAR "*"
                PLUS "+"
            "#]],
        );
    }

    #[test]
    fn tokens_cover_the_input() {
        let input = "model m = a/b # c\n\tx = \"${y}\" é";
        let tokens = tokenize(input);
        let mut offset = TextSize::from(0);
        for token in &tokens {
            assert_eq!(token.range.start(), offset);
            offset = token.range.end();
        }
        assert_eq!(offset, TextSize::of(input));
    }
}
