//! The syntax layer of the StreetRace toolchain: lexer, indentation layer,
//! recursive-descent parser and the lossless rowan tree with typed accessors.
//!
//! Parsing never fails: [`parse`] returns a tree whose text equals the input byte
//! for byte, plus every syntax error found, each with an exact range. This crate
//! knows nothing of salsa, the language server or the runtime.

pub mod ast;
mod build;
pub mod diagnostic;
mod grammar;
mod input;
mod item_kind;
pub mod lexer;
pub mod line_index;
mod parser;
pub mod pieces;
mod syntax_kind;
mod token_set;

use std::sync::Arc;

use rowan::GreenNode;

pub use crate::diagnostic::{
    Code, DefinitionKind, Describe, Diagnostic, Fix, Related, Reported, Severity, SyntaxError,
};
pub use crate::item_kind::ItemKind;
pub use crate::line_index::{LineCol, LineIndex};
pub use crate::parser::MAX_NESTING;
pub use crate::syntax_kind::{KEYWORDS, SyntaxKind};
pub use rowan::{Direction, NodeOrToken, TextRange, TextSize, WalkEvent};

/// The rowan language tag of StreetRace trees.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum StreetRace {}

impl rowan::Language for StreetRace {
    type Kind = SyntaxKind;

    fn kind_from_raw(raw: rowan::SyntaxKind) -> SyntaxKind {
        assert!(raw.0 < SyntaxKind::__LAST as u16, "unknown syntax kind {}", raw.0);
        // SAFETY: `SyntaxKind` is `repr(u16)` with contiguous discriminants below `__LAST`.
        unsafe { std::mem::transmute::<u16, SyntaxKind>(raw.0) }
    }

    fn kind_to_raw(kind: SyntaxKind) -> rowan::SyntaxKind {
        kind.into()
    }
}

pub type SyntaxNode = rowan::SyntaxNode<StreetRace>;
pub type SyntaxToken = rowan::SyntaxToken<StreetRace>;
pub type SyntaxElement = rowan::SyntaxElement<StreetRace>;

/// The result of parsing one file: a green tree (cheap to clone, hashable, so it
/// can be stored in salsa) and the syntax errors in source order.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Parse {
    green: GreenNode,
    errors: Arc<[Diagnostic]>,
}

impl Parse {
    pub(crate) fn new(green: GreenNode, errors: Vec<Diagnostic>) -> Parse {
        Parse { green, errors: errors.into() }
    }

    pub fn syntax(&self) -> SyntaxNode {
        SyntaxNode::new_root(self.green.clone())
    }

    pub fn tree(&self) -> ast::SourceFile {
        ast::SourceFile { syntax: self.syntax() }
    }

    pub fn green(&self) -> &GreenNode {
        &self.green
    }

    pub fn errors(&self) -> &[Diagnostic] {
        &self.errors
    }
}

/// Parses a whole file. [`pieces::parse_pieces`] gives the same result and
/// lets a caller reuse the pieces an edit left alone.
pub fn parse(text: &str) -> Parse {
    pieces::parse_whole(text)
}

/// `node`'s range without leading and trailing trivia and line breaks (the
/// whole range when it has nothing else). Walks in from both ends, so nested
/// nodes cost their edges, not their subtrees.
pub fn significant_range(node: &SyntaxNode) -> TextRange {
    let range = node.text_range();
    let significant = |t: &SyntaxToken| !t.kind().is_trivia() && t.kind() != SyntaxKind::NEWLINE;
    // A zero-width token on the boundary may belong to a neighbour.
    let inside = |t: &SyntaxToken| {
        let r = t.text_range();
        range.contains_range(r) && (!r.is_empty() || t.parent_ancestors().any(|a| &a == node))
    };
    let first = std::iter::successors(node.first_token(), |t| t.next_token()).take_while(inside).find(significant);
    let last = std::iter::successors(node.last_token(), |t| t.prev_token()).take_while(inside).find(significant);
    match (first, last) {
        (Some(first), Some(last)) => TextRange::new(first.text_range().start(), last.text_range().end()),
        _ => range,
    }
}

/// An indented dump of the tree, one element per line (`KIND@start..end "text"`).
pub fn debug_tree(node: &SyntaxNode) -> String {
    let mut out = String::new();
    let _ = write_debug_tree(node, &mut out);
    out
}

/// [`debug_tree`] written as it is made: the dump is the tree's tokens times
/// its depth, far more than the tree (`sr dump syntax` streams it).
pub fn write_debug_tree(node: &SyntaxNode, out: &mut impl std::fmt::Write) -> std::fmt::Result {
    let mut indent = 0;
    for event in node.preorder_with_tokens() {
        match event {
            WalkEvent::Enter(element) => {
                write_indent(out, 2 * indent)?;
                match &element {
                    NodeOrToken::Node(n) => writeln!(out, "{:?}@{:?}", n.kind(), n.text_range())?,
                    NodeOrToken::Token(t) => writeln!(out, "{:?}@{:?} {:?}", t.kind(), t.text_range(), t.text())?,
                }
                indent += 1;
            }
            WalkEvent::Leave(_) => indent -= 1,
        }
    }
    Ok(())
}

/// `width` spaces, a slice at a time: at the depths of hostile input the
/// indentation is most of the dump, and padding through `{:width$}` writes
/// it one character at a time.
fn write_indent(out: &mut impl std::fmt::Write, mut width: usize) -> std::fmt::Result {
    const SPACES: &str = "                                                                ";
    while width > 0 {
        let n = width.min(SPACES.len());
        out.write_str(&SPACES[..n])?;
        width -= n;
    }
    Ok(())
}
