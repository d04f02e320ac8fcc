//! Canonical spacing between two tokens on one line.

use sr_syntax::SyntaxKind::{self, *};
use sr_syntax::SyntaxToken;

fn parent(token: &SyntaxToken) -> Option<SyntaxKind> {
    token.parent().map(|p| p.kind())
}

/// Whether one space separates `a` and `b` (otherwise none). `had_space`
/// says whether the source separated them; a separate `.` keeps it.
pub(crate) fn space_between(a: &SyntaxToken, b: &SyntaxToken, had_space: bool) -> bool {
    match (a.kind(), b.kind()) {
        (DOT, _) | (_, DOT) => had_space,
        // Objects breathe, as upstream writes them: `{ a: 1 }`, but `{}`.
        (L_BRACE, R_BRACE) => false,
        (L_BRACE, _) | (_, R_BRACE) => true,
        (_, COMMA | COLON | R_PAREN | R_BRACK) => false,
        (L_PAREN | L_BRACK | DOLLAR, _) => false,
        (_, QUESTION) if parent(b) == Some(OPTIONAL_TYPE) => false,
        (MINUS, _) if parent(a) == Some(PREFIX_EXPR) => false,
        // `len(x)`: arguments in parentheses hug the function name.
        (_, L_PAREN) if parent(b) == Some(ARG_LIST) => false,
        // `list[string]`, `expecting Finding[]`.
        (LIST_KW, L_BRACK) => false,
        (_, L_BRACK) if parent(b) == Some(PROMPT_MODIFIER) => false,
        _ => true,
    }
}
