//! Incremental reparsing by top-level piece.
//!
//! A token that starts a line at column 1 outside brackets begins a new piece:
//! the indentation layer has closed every block before it and the grammar's top
//! level starts afresh there. Each piece is lexed and parsed on its own, with the
//! first token of the next piece as lookahead so that errors name it as the
//! whole-file parse does. A piece whose parse looked past that lookahead, or
//! whose text lexes differently on its own, is merged with the next one, so the
//! result is always exactly the whole-file parse. `sr-hir` memoizes pieces by
//! text: an edit reparses one piece and shares every other piece's green nodes.

use std::borrow::{Borrow, Cow};

use rowan::{GreenNode, GreenToken, NodeCache, NodeOrToken};
use text_size::{TextRange, TextSize};

use crate::SyntaxKind::*;
use crate::diagnostic::{Diagnostic, SyntaxError};
use crate::{Parse, build, grammar, input, lexer, parser};

mod shared;
mod starts;

pub use shared::SharedEnds;
pub use starts::PieceStarts;

/// One piece of a file, parsed: the top-level elements it contributes to the
/// file's root and its errors, with ranges relative to the piece's start.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Piece {
    children: Vec<NodeOrToken<GreenNode, GreenToken>>,
    /// Lexer and indentation errors.
    token_errors: Vec<Diagnostic>,
    parser_errors: Vec<Diagnostic>,
}

impl Piece {
    /// The top-level elements the piece contributes to the file's root.
    pub fn children(&self) -> &[NodeOrToken<GreenNode, GreenToken>] {
        &self.children
    }
}

/// Parses one piece followed by `lookahead`, the next piece's first token (empty
/// for the last piece). `None` when the piece cannot be parsed apart from what
/// follows it.
pub fn parse_piece(text: &str, lookahead: &str, first: bool) -> Option<Piece> {
    parse_piece_with(text, lookahead, first, &mut NodeCache::default())
}

/// [`parse_piece`], sharing equal tokens and small nodes with every other
/// piece parsed through `cache`: a file's pieces parsed through one cache hold
/// one `fs` token, one four-space indent, … instead of one per piece.
pub fn parse_piece_with(text: &str, lookahead: &str, first: bool, cache: &mut NodeCache) -> Option<Piece> {
    let source: Cow<'_, str> = if lookahead.is_empty() { text.into() } else { format!("{text}{lookahead}").into() };
    let tokens = lexer::tokenize(&source);
    let own = if lookahead.is_empty() {
        tokens.len()
    } else {
        let last = tokens.last()?;
        if last.range != TextRange::new(TextSize::of(text), TextSize::of(&*source)) {
            return None;
        }
        tokens.len() - 1
    };
    let inputs = input::inputs(&source, &tokens);
    let stop =
        if lookahead.is_empty() { usize::MAX } else { inputs.tokens.iter().position(|t| t.raw == Some(own as u32))? };
    let mut p = parser::Parser::new(&source, &tokens, &inputs.tokens);
    grammar::source_file(&mut p, first, stop);
    if !lookahead.is_empty() && (p.position() != stop || p.furthest() > stop) {
        return None;
    }
    let root = build::build_tree(&source, &tokens[..own], &inputs.tokens, std::mem::take(&mut p.events), cache);

    let mut token_errors = inputs.errors;
    for t in &tokens[..own] {
        let text = &source[t.range];
        match t.kind {
            ERROR_TOKEN => token_errors
                .push(Diagnostic::new(SyntaxError::InvalidCharacter { character: text.to_string() }, t.range)),
            TRIPLE_STRING if lexer::unterminated(text) => {
                // Where upstream's lexer fails: `""` is an empty string, the third quote nothing.
                let third = TextRange::at(t.range.start() + TextSize::from(2), TextSize::from(1));
                let delimiter = if text.starts_with('\'') { "'''" } else { "\"\"\"" };
                token_errors.push(Diagnostic::new(SyntaxError::UnclosedString { delimiter }, third));
            }
            _ => {}
        }
    }
    let children = root.children().map(|c| c.to_owned()).collect();
    Some(Piece { children, token_errors, parser_errors: p.errors })
}

/// Parses `text` piece by piece, taking each piece from `piece` (`parse_piece`
/// or a memoized version of it). The result equals [`crate::parse`]'s.
pub fn parse_pieces<P: Borrow<Piece>>(text: &str, mut piece: impl FnMut(&str, &str, bool) -> Option<P>) -> Parse {
    let pieces = select_pieces(text, &PieceStarts::new(text), |start, piece_text, lookahead| {
        piece(piece_text, lookahead, start == 0.into())
    });
    assemble(pieces.iter().map(|(start, piece)| (*start, piece.borrow())))
}

/// The pieces of `text` (whose starts are `starts`), with where each starts,
/// taken from `piece` (given a piece's start, text and lookahead; the piece
/// at 0 is the file's first): each starts where the one before it ends, and
/// the pieces `piece` returns (`Some`) are exactly these, in order.
/// [`assemble`] makes them the file's parse; [`errors`] its errors alone,
/// without building the file's tree.
pub fn select_pieces<P>(
    text: &str,
    starts: &PieceStarts,
    mut piece: impl FnMut(TextSize, &str, &str) -> Option<P>,
) -> Vec<(TextSize, P)> {
    let starts = starts.ranges();
    let mut pieces = Vec::new();
    let mut start = TextSize::from(0);
    let mut next = 0;
    loop {
        // Grow the piece until it parses apart from what follows; the last
        // piece, with nothing after it, always does.
        let (end, parsed) = loop {
            let (end, lookahead) = match starts.get(next) {
                Some(&range) => (range.start(), &text[range]),
                None => (TextSize::of(text), ""),
            };
            next += 1;
            if let Some(parsed) = piece(start, &text[TextRange::new(start, end)], lookahead) {
                break (end, parsed);
            }
        };
        pieces.push((start, parsed));
        if end == TextSize::of(text) {
            return pieces;
        }
        start = end;
    }
}

/// The file's parse from its pieces (as [`select_pieces`] gives them).
pub fn assemble<'a>(pieces: impl IntoIterator<Item = (TextSize, &'a Piece)>) -> Parse {
    let mut children = Vec::new();
    let mut errors = Errors::default();
    for (start, piece) in pieces {
        children.extend(piece.children.iter().cloned());
        errors.push(piece, start);
    }
    Parse::new(GreenNode::new(SOURCE_FILE.into(), children), errors.finish())
}

/// The errors of [`assemble`]'s parse, without the tree.
pub fn errors<'a>(pieces: impl IntoIterator<Item = (TextSize, &'a Piece)>) -> Vec<Diagnostic> {
    let mut errors = Errors::default();
    for (start, piece) in pieces {
        errors.push(piece, start);
    }
    errors.finish()
}

/// The whole file as one piece.
pub(crate) fn parse_whole(text: &str) -> Parse {
    let whole = parse_piece(text, "", true).expect("a piece without lookahead always parses");
    assemble([(0.into(), &whole)])
}

/// The errors of a file's pieces put together.
#[derive(Default)]
struct Errors {
    token_errors: Vec<Diagnostic>,
    parser_errors: Vec<Diagnostic>,
}

impl Errors {
    fn push(&mut self, piece: &Piece, start: TextSize) {
        self.token_errors.extend(piece.token_errors.iter().map(|e| shifted(e, start)));
        for error in &piece.parser_errors {
            // The parser reports one error per position, across pieces too.
            if self.parser_errors.last().is_some_and(|last| last.range == error.range + start) {
                continue;
            }
            self.parser_errors.push(shifted(error, start));
        }
    }

    fn finish(self) -> Vec<Diagnostic> {
        // The lexer already explained invalid characters.
        let explained: std::collections::HashSet<TextRange> = self.token_errors.iter().map(|e| e.range).collect();
        let mut errors = self.token_errors;
        errors.extend(self.parser_errors.into_iter().filter(|e| !explained.contains(&e.range)));
        errors.sort_by_key(|e| (e.range.start(), e.range.end()));
        errors
    }
}

fn shifted(error: &Diagnostic, offset: TextSize) -> Diagnostic {
    let mut error = error.clone();
    error.range += offset;
    for related in &mut error.related {
        related.range += offset;
    }
    error
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_that_are_no_definition_are_one_error() {
        let text = "model m = a/b\nx\ny = 1\n    z\nw\nflow f:\n    log 1\n";
        let parse = parse_pieces(text, parse_piece);
        assert_eq!(parse, crate::parse(text));
        let messages: Vec<_> = parse.errors().iter().map(|e| (e.message(), &text[e.range])).collect();
        assert_eq!(messages, [("unexpected token 'x'".to_string(), "x")]);
    }

    #[test]
    fn a_piece_that_reads_its_lookahead_is_merged() {
        assert!(parse_piece("on input do\n    mask pii\n", "end", false).is_none());
        assert!(parse_piece("on input do\n    mask pii\nend\n", "agent", false).is_some());
        // `streetrace` after the first piece is an error, not a declaration.
        assert!(parse_piece("# header\n", "streetrace", true).is_none());
    }

    /// An unclosed `"""` is one token up to the next definition, which starts
    /// a piece of its own; the error is at the third quote, where upstream's
    /// lexer fails.
    #[test]
    fn an_unclosed_triple_quote_ends_before_the_next_piece() {
        let text = "prompt p: \"\"\"a\nb\n\nflow f:\n    log '''x\nagent a:\n    instruction p\n";
        let parse = parse_pieces(text, parse_piece);
        assert_eq!(parse, crate::parse(text));
        assert_eq!(PieceStarts::new(text).ranges().len(), 2);
        let errors: Vec<_> = parse.errors().iter().map(|e| (e.message(), e.range)).collect();
        assert_eq!(
            errors,
            [
                ("invalid character".to_string(), TextRange::at(12.into(), 1.into())),
                ("unexpected token ''''x'".to_string(), TextRange::at(34.into(), 4.into())),
                ("invalid character".to_string(), TextRange::at(36.into(), 1.into())),
            ]
        );
        let items: Vec<_> = parse.syntax().children().map(|node| node.kind()).collect();
        assert_eq!(items, [PROMPT_DEF, FLOW_DEF, AGENT_DEF]);
    }

    #[test]
    fn errors_name_the_next_piece_as_the_whole_file_parse_does() {
        let text = "agent a:\nflow f:\n    x = 1\n";
        let parse = parse_pieces(text, parse_piece);
        assert_eq!(parse, crate::parse(text));
        let error = &parse.errors()[0];
        assert_eq!((error.message().as_str(), &text[error.range]), ("unexpected token 'flow'", "flow"));
    }
}
