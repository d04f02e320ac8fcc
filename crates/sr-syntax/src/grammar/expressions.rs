//! Expressions, loosest first: `or`, `and`, `not`, one comparison (or
//! `filter … where …`), `+ -`, `* / %`, unary `-`, atoms.
//!
//! Upstream's Earley parser resolves its ambiguities in ways this parser makes
//! explicit (`language.md` §4.3): a bare word is a variable; `f a b` is a call whose
//! juxtaposed arguments are atoms (`f 1 + 2` is `f(1) + 2`, `f -1` is `f - 1`,
//! `f g x` is `f(g(x))`); soft keywords that end the enclosing construct (`do`,
//! `with`, `to`, …) are not taken as arguments.

use super::{NameKind, name_ref};
use crate::SyntaxKind::{self, *};
use crate::T;
use crate::parser::{CompletedMarker, MAX_NESTING, Parser};
use crate::token_set::TokenSet;

pub(super) const NO_STOPS: TokenSet = TokenSet::EMPTY;
pub(super) const STOP_DO: TokenSet = TokenSet::new(&[DO_KW]);
pub(super) const STOP_HISTORY: TokenSet = TokenSet::new(&[HISTORY_KW]);
pub(super) const STOP_USING: TokenSet = TokenSet::new(&[USING_KW]);
pub(super) const STOP_AS_TO: TokenSet = TokenSet::new(&[AS_KW, TO_KW]);
pub(super) const STOP_IF: TokenSet = TokenSet::new(&[IF_KW]);
const STOP_WHERE: TokenSet = TokenSet::new(&[WHERE_KW]);

const LITERALS: TokenSet = TokenSet::new(&[STRING, INTERP_STRING, INT, NUMBER, TRUE_KW, FALSE_KW, NULL_KW]);
const COMPARISON_OPS: TokenSet = TokenSet::new(&[T![>], T![<], T![>=], T![<=], T![==], T![!=], CONTAINS_KW, T![~]]);

/// Tokens that can start an atom (and so a juxtaposed call argument).
fn starts_atom(kind: SyntaxKind) -> bool {
    LITERALS.contains(kind)
        || kind.is_identifier()
        || matches!(kind, T![$] | DOTTED_NAME | T!['('] | T!['['] | T!['{'] | T![.])
}

pub(super) fn starts_expr(kind: SyntaxKind) -> bool {
    starts_atom(kind) || kind == T![-]
}

pub(super) fn expr(p: &mut Parser<'_>) -> Option<CompletedMarker> {
    binary(p, and_expr, TokenSet::new(&[OR_KW]))
}

/// An expression, or an error if there is none here.
pub(super) fn expr_or_error(p: &mut Parser<'_>) {
    if expr(p).is_none() {
        p.error_expected("an expression");
    }
}

fn and_expr(p: &mut Parser<'_>) -> Option<CompletedMarker> {
    binary(p, not_expr, TokenSet::new(&[AND_KW]))
}

/// Left-associative binary operators over `operand`.
fn binary(
    p: &mut Parser<'_>,
    operand: fn(&mut Parser<'_>) -> Option<CompletedMarker>,
    ops: TokenSet,
) -> Option<CompletedMarker> {
    let mut lhs = operand(p)?;
    // Each operator wraps the chain so far in one more node, so each counts as
    // a nesting level until the chain ends.
    let mut levels = 0;
    while p.at_ts(ops) {
        let m = lhs.precede(p);
        if p.at_nesting_limit() {
            p.error_too_deep("this operator chain is");
            p.skip_expression_rest();
            lhs = m.complete(p, ERROR);
            break;
        }
        p.enter();
        levels += 1;
        p.bump_any();
        if operand(p).is_none() {
            p.error_expected("an expression after the operator");
        }
        lhs = m.complete(p, BIN_EXPR);
    }
    p.leave(levels);
    Some(lhs)
}

/// An `ERROR` node over the rest of an expression that nests too deeply here.
fn too_deep(p: &mut Parser<'_>, what: &str) -> CompletedMarker {
    p.error_too_deep(what);
    let m = p.start();
    p.skip_expression_rest();
    m.complete(p, ERROR)
}

fn not_expr(p: &mut Parser<'_>) -> Option<CompletedMarker> {
    if p.at(NOT_KW) && starts_expr(p.nth(1)) && !p.at_stop_kind(p.nth(1)) {
        if p.at_nesting_limit() {
            return Some(too_deep(p, "this expression is"));
        }
        let m = p.start();
        p.bump(NOT_KW);
        p.nested(not_expr);
        return Some(m.complete(p, PREFIX_EXPR));
    }
    comparison(p)
}

/// At most one comparison per level: `1 < 2 < 3` is an error, as upstream.
fn comparison(p: &mut Parser<'_>) -> Option<CompletedMarker> {
    let filter_of_where = p.nth_at(1, WHERE_KW) && p.nth_at(2, WHERE_KW);
    if p.at(FILTER_KW)
        && starts_atom(p.nth(1))
        && (!p.nth_at(1, WHERE_KW) || filter_of_where)
        && !p.at_stop_kind(p.nth(1))
    {
        if p.at_nesting_limit() {
            return Some(too_deep(p, "this expression is"));
        }
        return Some(p.nested(filter));
    }
    let lhs = additive(p)?;
    if !p.at_ts(COMPARISON_OPS) {
        return Some(lhs);
    }
    let m = lhs.precede(p);
    p.bump_any();
    if additive(p).is_none() {
        p.error_expected("an expression after the comparison");
    }
    let done = m.complete(p, BIN_EXPR);
    if p.at_ts(COMPARISON_OPS) && !p.wide_args {
        p.error_here("comparisons cannot be chained; combine them with `and`");
    }
    Some(done)
}

/// `filter LIST where CONDITION`; inside the condition `.field` reads the item.
fn filter(p: &mut Parser<'_>) -> CompletedMarker {
    let m = p.start();
    p.bump(FILTER_KW);
    p.with_stops(STOP_WHERE, atom);
    if p.expect(WHERE_KW) {
        binary(p, and_expr, TokenSet::new(&[OR_KW]));
    }
    m.complete(p, FILTER_EXPR)
}

fn additive(p: &mut Parser<'_>) -> Option<CompletedMarker> {
    binary(p, multiplicative, TokenSet::new(&[T![+], T![-]]))
}

fn multiplicative(p: &mut Parser<'_>) -> Option<CompletedMarker> {
    binary(p, unary, TokenSet::new(&[T![*], T![/], T![%]]))
}

fn unary(p: &mut Parser<'_>) -> Option<CompletedMarker> {
    if p.at(T![-]) {
        if p.at_nesting_limit() {
            return Some(too_deep(p, "this expression is"));
        }
        let m = p.start();
        p.bump(T![-]);
        if p.nested(unary).is_none() {
            p.error_expected("an expression after `-`");
        }
        return Some(m.complete(p, PREFIX_EXPR));
    }
    atom(p)
}

/// An atom, one nesting level deeper than its context: brackets, call
/// arguments and juxtaposed arguments nest through here.
fn atom(p: &mut Parser<'_>) -> Option<CompletedMarker> {
    if p.at_nesting_limit() {
        return starts_atom(p.current()).then(|| too_deep(p, "this expression is"));
    }
    p.nested(atom_here)
}

fn atom_here(p: &mut Parser<'_>) -> Option<CompletedMarker> {
    let kind = p.current();
    let done = match kind {
        _ if LITERALS.contains(kind) => {
            let m = p.start();
            p.bump_any();
            m.complete(p, LITERAL)
        }
        INITIAL_KW if p.nth_at(1, USER_KW) && p.nth_at(2, PROMPT_KW) => {
            let m = p.start();
            p.bump(INITIAL_KW);
            p.bump(USER_KW);
            p.bump(PROMPT_KW);
            m.complete(p, INITIAL_PROMPT)
        }
        T!['['] => list(p),
        T!['{'] => object(p),
        T!['('] => paren(p),
        T![.] => implicit_property(p)?,
        T![$] => {
            let var = variable(p);
            property_chain(p, var)
        }
        DOTTED_NAME if p.nth_at(1, T!['(']) => {
            let m = p.start();
            name_ref(p, NameKind::NameOrDotted);
            arg_list(p);
            m.complete(p, CALL_EXPR)
        }
        DOTTED_NAME => variable(p),
        NAME => name_atom(p),
        // `int(x)`, `float(x)`, `bool(x)`, `max(x)`: standard library functions whose
        // names upstream lexes as keywords (our extension; upstream rejects the call).
        INT_KW | FLOAT_KW | BOOL_KW | MAX_KW if p.nth_at(1, T!['(']) => {
            let m = p.start();
            let callee = p.start();
            p.bump_any();
            callee.complete(p, NAME_REF);
            arg_list(p);
            m.complete(p, CALL_EXPR)
        }
        PROCESS_KW if starts_expr(p.nth(1)) && !p.at_stop_kind(p.nth(1)) => {
            let m = p.start();
            let callee = p.start();
            p.bump(PROCESS_KW);
            callee.complete(p, NAME_REF);
            let args = p.start();
            expr(p);
            args.complete(p, ARG_LIST);
            m.complete(p, CALL_EXPR)
        }
        _ if kind.is_soft_keyword() => {
            let var = variable(p);
            property_chain(p, var)
        }
        _ => return None,
    };
    Some(done)
}

/// A `NAME`: a call `f(x)`, a property access `f.x`, a bare call `f x y`, or a variable.
fn name_atom(p: &mut Parser<'_>) -> CompletedMarker {
    if p.wide_args && starts_argument_at(p, 1) {
        let m = p.start();
        name_ref(p, NameKind::Name);
        let args = p.start();
        while starts_argument(p) {
            p.progress_guard();
            if expr(p).is_none() {
                break;
            }
        }
        args.complete(p, ARG_LIST);
        return m.complete(p, CALL_EXPR);
    }
    if p.nth_at(1, T!['(']) {
        let m = p.start();
        name_ref(p, NameKind::Name);
        let count = arg_list(p);
        if count == 1 && starts_argument(p) {
            // `f (x) (y)`: upstream reads a bare call with parenthesised arguments.
            bare_args(p);
        }
        return m.complete(p, CALL_EXPR);
    }
    if p.nth_at(1, T![.]) && is_field_name(p.nth(2)) {
        let var = variable(p);
        return property_chain(p, var);
    }
    if starts_argument_at(p, 1) {
        let m = p.start();
        name_ref(p, NameKind::Name);
        bare_args(p);
        return m.complete(p, CALL_EXPR);
    }
    variable(p)
}

/// Whether the token `n` ahead can start a juxtaposed argument here.
fn starts_argument_at(p: &Parser<'_>, n: usize) -> bool {
    let kind = p.nth(n);
    starts_atom(kind) && !p.at_stop_kind(kind)
}

fn starts_argument(p: &Parser<'_>) -> bool {
    starts_argument_at(p, 0)
}

/// Juxtaposed arguments `x y z` of a bare call.
fn bare_args(p: &mut Parser<'_>) {
    let m = p.start();
    while starts_argument(p) {
        p.progress_guard();
        if atom(p).is_none() {
            break;
        }
    }
    m.complete(p, ARG_LIST);
}

/// `( [E (, E)*] )`; returns the number of arguments.
fn arg_list(p: &mut Parser<'_>) -> usize {
    let m = p.start();
    p.bump(T!['(']);
    let count = p.with_stops(NO_STOPS, |p| comma_separated(p, T![')'], expr_or_error));
    p.expect(T![')']);
    m.complete(p, ARG_LIST);
    count
}

/// Items up to `close` (not consumed), separated by commas, without a trailing comma.
fn comma_separated(p: &mut Parser<'_>, close: SyntaxKind, mut item: impl FnMut(&mut Parser<'_>)) -> usize {
    if p.at(close) {
        return 0;
    }
    let mut count = 0;
    loop {
        p.progress_guard();
        item(p);
        count += 1;
        if !p.eat(T![,]) {
            break;
        }
        if p.at(close) {
            p.error_here("remove the trailing comma");
            break;
        }
    }
    count
}

fn list(p: &mut Parser<'_>) -> CompletedMarker {
    let m = p.start();
    p.bump(T!['[']);
    p.with_stops(NO_STOPS, |p| comma_separated(p, T![']'], expr_or_error));
    p.expect(T![']']);
    m.complete(p, LIST_EXPR)
}

/// `{ key: E, … }`; keys are names or soft keywords.
fn object(p: &mut Parser<'_>) -> CompletedMarker {
    let m = p.start();
    p.bump(T!['{']);
    p.with_stops(NO_STOPS, |p| {
        comma_separated(p, T!['}'], |p| {
            let entry = p.start();
            if super::name_def(p, NameKind::Identifier).is_some() && p.expect(T![:]) {
                expr_or_error(p);
            }
            entry.complete(p, OBJECT_ENTRY);
        })
    });
    p.expect(T!['}']);
    m.complete(p, OBJECT_EXPR)
}

fn paren(p: &mut Parser<'_>) -> CompletedMarker {
    let m = p.start();
    p.bump(T!['(']);
    p.with_stops(NO_STOPS, expr_or_error);
    p.expect(T![')']);
    m.complete(p, PAREN_EXPR)
}

/// `.field` or `.a.b`: a field of the current item inside `filter … where`.
fn implicit_property(p: &mut Parser<'_>) -> Option<CompletedMarker> {
    if !(is_field_name(p.nth(1)) || p.nth_at(1, DOTTED_NAME)) {
        return None;
    }
    let m = p.start();
    p.bump(T![.]);
    if p.at(DOTTED_NAME) {
        field(p);
    } else {
        field(p);
        while p.at(T![.]) && is_field_name(p.nth(1)) {
            p.bump(T![.]);
            field(p);
        }
    }
    Some(m.complete(p, IMPLICIT_PROPERTY))
}

/// Field names after a dot may be any name or soft keyword.
fn is_field_name(kind: SyntaxKind) -> bool {
    kind.is_identifier()
}

fn field(p: &mut Parser<'_>) {
    let m = p.start();
    p.bump_any();
    m.complete(p, NAME_REF);
}

/// `.a.b` after a variable: property access.
/// Each `.field` wraps the chain in one more node, so it counts as a nesting
/// level until the chain ends.
fn property_chain(p: &mut Parser<'_>, mut lhs: CompletedMarker) -> CompletedMarker {
    let mut levels = 0;
    while p.at(T![.]) && is_field_name(p.nth(1)) {
        let m = lhs.precede(p);
        if p.at_nesting_limit() {
            p.error_too_deep("this property chain is");
            while p.at(T![.]) && is_field_name(p.nth(1)) {
                p.bump(T![.]);
                p.bump_any();
            }
            lhs = m.complete(p, ERROR);
            break;
        }
        p.enter();
        levels += 1;
        p.bump(T![.]);
        field(p);
        lhs = m.complete(p, PROPERTY_EXPR);
    }
    p.leave(levels);
    lhs
}

/// `$name`, `$a.b.c`, or a bare `name` (soft keywords included). Each dot of
/// `a.b.c` is a property access, so it counts against the nesting limit.
pub(super) fn variable(p: &mut Parser<'_>) -> CompletedMarker {
    let m = p.start();
    if p.eat(T![$]) {
        if p.current().is_identifier() || p.at(DOTTED_NAME) {
            dots_within_limit(p);
            p.bump_any();
        } else if p.current().is_hard_keyword() {
            p.error_here(format!("`{}` is a keyword and cannot name a variable", p.current_text()));
        } else {
            p.error_expected("a variable name after `$`");
        }
    } else if p.current().is_identifier() || p.at(DOTTED_NAME) {
        dots_within_limit(p);
        p.bump_any();
    } else {
        p.error_expected("a variable");
    }
    m.complete(p, VAR)
}

/// Reports a `DOTTED_NAME` with more dots than nesting levels are left.
fn dots_within_limit(p: &mut Parser<'_>) {
    let dots = p.current_text().bytes().filter(|&b| b == b'.').count();
    if dots > (MAX_NESTING - p.depth()) as usize {
        p.error_too_deep("this dotted name is");
    }
}

/// An expression statement: returns whether what was parsed is a call.
pub(super) fn statement_call(p: &mut Parser<'_>) -> bool {
    let Some(lhs) = unary(p) else { return false };
    if p.at(T!['(']) && lhs.kind() == PROPERTY_EXPR {
        // `$a . b(x)`: a call on a property written with a separate dot, allowed
        // only as a statement (`$a.b(x)` is a syntax error upstream).
        let m = lhs.precede(p);
        arg_list(p);
        m.complete(p, CALL_EXPR);
        return true;
    }
    lhs.kind() == CALL_EXPR
}
