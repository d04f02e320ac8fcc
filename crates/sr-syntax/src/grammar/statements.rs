//! Flows, event handlers and the statements in their bodies.

use super::expressions::{self, STOP_AS_TO, STOP_DO, STOP_HISTORY, STOP_IF, STOP_USING, variable};
use super::{NameKind, colon_block, end_of_line, indented_block, name_ref, plain_string, string_or_interpolated};
use crate::SyntaxKind::{self, *};
use crate::T;
use crate::parser::{Marker, Parser};

/// Which statements a body accepts. Blocks nested in a handler (`if`, `for`, …)
/// are flow bodies, as in upstream's grammar.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Ctx {
    Flow,
    Handler,
}

/// `flow NAME…:` + statements. Upstream allows several words as a flow name.
pub(super) fn flow(p: &mut Parser<'_>) {
    let m = p.start();
    p.bump(FLOW_KW);
    if p.current().is_identifier() {
        let name = p.start();
        while p.current().is_identifier() {
            p.bump_any();
        }
        name.complete(p, NAME_DEF);
    } else {
        p.error_expected("a flow name");
    }
    if !p.at(T![:]) && !p.at(NEWLINE) {
        p.error_here("flows take no parameters; read inputs from variables such as `$input_prompt`");
        let m = p.start();
        while !matches!(p.current(), T![:] | NEWLINE | EOF) {
            p.bump_any();
        }
        m.complete(p, ERROR);
    }
    colon_block(p, "flow body", |p| statement(p, Ctx::Flow));
    m.complete(p, FLOW_DEF);
}

/// `on|after EVENT do` + statements + `end`.
pub(super) fn event_handler(p: &mut Parser<'_>) {
    let m = p.start();
    p.bump_any(); // `on` or `after`
    match p.current() {
        kind if kind.is_identifier() => p.bump_any(),
        TOOL_CALL_KW | TOOL_RESULT_KW => p.bump_any(),
        _ => p.error_expected("an event: `start`, `input`, `output`, `tool-call` or `tool-result`"),
    }
    if p.expect(DO_KW) {
        body(p, Ctx::Handler, "handler body");
        end_keyword(p);
    } else {
        p.skip_line();
    }
    m.complete(p, EVENT_HANDLER);
}

fn body(p: &mut Parser<'_>, ctx: Ctx, what: &str) -> bool {
    indented_block(p, what, |p| statement(p, ctx))
}

/// `end` closing a `do` block or a `match`.
fn end_keyword(p: &mut Parser<'_>) {
    if !p.eat(END_KW) {
        p.error_expected("`end` closing the block");
    }
}

/// A statement. When it fails, it is parsed once more with wide bare-call
/// arguments (see `Parser::wide_args`), and kept if that reading has no error;
/// this reproduces upstream's Earley parser on rare ambiguous inputs.
///
/// Errors inside a nested statement that already failed both ways are settled:
/// the enclosing statement's wide reading would meet them again, so it is not
/// tried for them. Without this, every enclosing block would parse its whole
/// body once more, and an error under N nested blocks would cost N² parsing.
fn statement(p: &mut Parser<'_>, ctx: Ctx) {
    let start = p.checkpoint();
    let settled_before = p.settled_errors;
    statement_once(p, ctx);
    if p.wide_args {
        return;
    }
    let errors = p.errors_since(&start);
    if errors == 0 {
        return;
    }
    if errors > p.settled_errors - settled_before {
        let narrow = p.rewind(&start);
        p.wide_args = true;
        statement_once(p, ctx);
        p.wide_args = false;
        if !p.has_errors_since(&start) {
            p.settled_errors = settled_before;
            return;
        }
        p.rewind(&start);
        p.restore(narrow);
    }
    p.settled_errors = settled_before + errors;
}

fn statement_once(p: &mut Parser<'_>, ctx: Ctx) {
    p.progress_guard();
    if at_assignment(p) {
        let m = p.start();
        variable(p);
        p.bump(T![=]);
        assignment_value(p, m);
        return;
    }
    let kind = p.current();
    match kind {
        RUN_KW => {
            let m = p.start();
            run(p, m)
        }
        CALL_KW if p.nth_at(1, LLM_KW) => {
            let m = p.start();
            call(p, m)
        }
        RETURN_KW => {
            not_in(p, ctx, Ctx::Handler, "`return` is not allowed directly in an event handler");
            let m = p.start();
            p.bump(RETURN_KW);
            expressions::expr_or_error(p);
            end_of_line(p);
            m.complete(p, RETURN_STMT);
        }
        FOR_KW => for_stmt(p),
        PARALLEL_KW => do_block(p, PARALLEL_STMT, |p| p.bump(PARALLEL_KW)),
        LOOP_KW => do_block(p, LOOP_STMT, |p| {
            p.bump(LOOP_KW);
            if p.eat(MAX_KW) {
                p.expect(INT);
            }
        }),
        MATCH_KW => {
            not_in(p, ctx, Ctx::Handler, "`match` is not allowed directly in an event handler");
            match_stmt(p);
        }
        IF_KW => if_stmt(p),
        ON_KW if p.nth_at(1, FAILURE_KW) => {
            not_in(p, ctx, Ctx::Handler, "`on failure:` is not allowed directly in an event handler");
            failure_block(p);
        }
        INDENT => {
            p.error_here("this line is indented more than the statement before it");
            let m = p.start();
            p.skip_block();
            m.complete(p, ERROR);
        }
        MASK_KW | BLOCK_KW | WARN_KW => {
            not_in(p, ctx, Ctx::Flow, "guardrail actions (`mask`, `block`, `warn`) belong in event handlers");
            simple_statement(p);
        }
        RETRY_KW if p.nth_at(1, WITH_KW) => {
            not_in(p, ctx, Ctx::Flow, "`retry with … if …` belongs in event handlers");
            simple_statement(p);
        }
        NAME if at_break(p) => simple_statement(p),
        NAME | DOTTED_NAME | T![$] | PROCESS_KW => {
            not_in(p, ctx, Ctx::Handler, "expression statements are not allowed directly in an event handler");
            expression_statement(p);
        }
        _ if starts_simple_statement(p) => simple_statement(p),
        END_KW => {
            p.error_here("`end` closes `do` blocks and `match`; an `if:` block ends where its indentation ends");
            p.skip_line();
            p.eat(NEWLINE);
        }
        _ => {
            p.error_expected("a statement");
            p.skip_line();
            p.eat(NEWLINE);
        }
    }
}

/// Reports a statement that upstream's grammar rejects in this kind of body.
fn not_in(p: &mut Parser<'_>, ctx: Ctx, forbidden: Ctx, message: &str) {
    if ctx == forbidden {
        p.error_here(message);
    }
}

/// `$x =`, `$a.b =`, `x =` (soft keywords are variable names too).
fn at_assignment(p: &Parser<'_>) -> bool {
    if p.at(T![$]) {
        return (p.nth(1).is_identifier() || p.nth_at(1, DOTTED_NAME)) && p.nth_at(2, T![=]);
    }
    p.current().is_identifier() && p.nth_at(1, T![=])
}

/// After `TARGET =`: a `run`, a `call llm` or an expression.
fn assignment_value(p: &mut Parser<'_>, m: Marker) {
    if p.at(RUN_KW) && p.nth(1).is_identifier() {
        run(p, m);
    } else if p.at(CALL_KW) && p.nth_at(1, LLM_KW) {
        call(p, m);
    } else {
        expressions::expr_or_error(p);
        end_of_line(p);
        m.complete(p, ASSIGN_STMT);
    }
}

/// `run agent X [with E] [history V] [, on escalate A]` or `run F [with E] [, on escalate A]`.
fn run(p: &mut Parser<'_>, m: Marker) {
    p.bump(RUN_KW);
    // `run agent with X` runs a flow named `agent` with X, unless what follows
    // `with` could only continue a `run agent with …` statement.
    let flow_named_agent = p.nth_at(1, WITH_KW) && !matches!(p.nth(2), WITH_KW | HISTORY_KW | NEWLINE | EOF | T![,]);
    let agent = p.at(AGENT_KW) && p.nth(1).is_identifier() && !flow_named_agent;
    if agent {
        p.bump(AGENT_KW);
    }
    if name_ref(p, NameKind::Identifier).is_some() {
        if p.at(WITH_KW) {
            let stops = if agent { STOP_HISTORY } else { expressions::NO_STOPS };
            with_clause(p, stops);
        }
        if agent && p.at(HISTORY_KW) {
            let h = p.start();
            p.bump(HISTORY_KW);
            variable(p);
            h.complete(p, HISTORY_CLAUSE);
        }
        if p.at(T![,]) {
            on_escalate(p);
        }
    }
    end_of_line(p);
    m.complete(p, RUN_STMT);
}

fn with_clause(p: &mut Parser<'_>, stops: crate::token_set::TokenSet) {
    let w = p.start();
    p.bump(WITH_KW);
    p.with_stops(stops, expressions::expr_or_error);
    w.complete(p, WITH_CLAUSE);
}

/// `, on escalate return E | continue | abort`.
fn on_escalate(p: &mut Parser<'_>) {
    let m = p.start();
    p.bump(T![,]);
    if p.expect(ON_KW) && p.expect(ESCALATE_KW) {
        match p.current() {
            RETURN_KW => {
                p.bump(RETURN_KW);
                expressions::expr_or_error(p);
            }
            CONTINUE_KW | ABORT_KW => p.bump_any(),
            _ => p.error_expected("`return …`, `continue` or `abort`"),
        }
    }
    m.complete(p, ON_ESCALATE);
}

/// `call llm P [with E] [using model "m"]`.
fn call(p: &mut Parser<'_>, m: Marker) {
    p.bump(CALL_KW);
    if p.expect(LLM_KW) && name_ref(p, NameKind::Identifier).is_some() {
        if p.at(WITH_KW) {
            with_clause(p, STOP_USING);
        }
        if p.at(USING_KW) {
            let u = p.start();
            p.bump(USING_KW);
            if p.expect(MODEL_KW) {
                string_or_interpolated(p);
            }
            u.complete(p, USING_CLAUSE);
        }
    }
    end_of_line(p);
    m.complete(p, CALL_STMT);
}

/// `for VAR in E do` + statements + `end`.
fn for_stmt(p: &mut Parser<'_>) {
    do_block(p, FOR_STMT, |p| {
        p.bump(FOR_KW);
        variable(p);
        if p.expect(IN_KW) {
            p.with_stops(STOP_DO, expressions::expr_or_error);
        }
    });
}

/// A header (parsed by `header`), then `do`, an indented flow body and `end`.
fn do_block(p: &mut Parser<'_>, kind: SyntaxKind, header: impl FnOnce(&mut Parser<'_>)) {
    let m = p.start();
    header(p);
    if p.expect(DO_KW) {
        if body(p, Ctx::Flow, "block") {
            end_keyword(p);
        }
    } else {
        p.skip_line();
    }
    p.eat(NEWLINE);
    m.complete(p, kind);
}

/// `match E` + `when "v" -> STATEMENT` arms + optional `else -> STATEMENT` + `end`.
fn match_stmt(p: &mut Parser<'_>) {
    let m = p.start();
    p.bump(MATCH_KW);
    expressions::expr_or_error(p);
    let mut seen_else = false;
    let has_block = indented_block(p, "list of `when` arms", |p| {
        let arm = p.start();
        match p.current() {
            WHEN_KW => {
                if seen_else {
                    p.error_here("`when` arms must come before `else`");
                }
                p.bump(WHEN_KW);
                plain_string(p);
            }
            ELSE_KW => {
                if seen_else {
                    p.error_here("a `match` has at most one `else` arm");
                }
                seen_else = true;
                p.bump(ELSE_KW);
            }
            _ => {
                p.error_expected("`when \"value\" -> …` or `else -> …`");
                p.skip_line();
                p.eat(NEWLINE);
                arm.complete(p, MATCH_ARM);
                return;
            }
        }
        if p.expect(T![->]) {
            statement(p, Ctx::Flow);
        } else {
            p.skip_line();
            p.eat(NEWLINE);
        }
        arm.complete(p, MATCH_ARM);
    });
    if has_block {
        end_keyword(p);
    }
    p.eat(NEWLINE);
    m.complete(p, MATCH_STMT);
}

/// `if C:` + indented flow body, or `if C: STATEMENT` on one line.
fn if_stmt(p: &mut Parser<'_>) {
    let m = p.start();
    p.bump(IF_KW);
    expressions::expr_or_error(p);
    if p.expect(T![:]) {
        if p.at(NEWLINE) {
            body(p, Ctx::Flow, "block");
        } else if starts_inline_statement(p) {
            simple_statement(p);
        } else {
            p.error_expected(
                "a line break and an indented block, or one of `run`, `call`, `push`, `escalate`, `log`, `notify`, `continue`, `abort`, `retry`, `mask`, `block`, `warn` after `if …:`",
            );
            p.skip_line();
            p.eat(NEWLINE);
        }
    } else {
        p.skip_line();
        p.eat(NEWLINE);
    }
    m.complete(p, IF_STMT);
}

/// What may follow `if C:` on the same line (upstream's `statement_body`).
fn starts_inline_statement(p: &Parser<'_>) -> bool {
    if at_assignment(p) {
        return p.nth(2) == RUN_KW || p.nth(2) == CALL_KW || p.nth(3) == RUN_KW || p.nth(3) == CALL_KW;
    }
    matches!(p.current(), RUN_KW | MASK_KW | BLOCK_KW | WARN_KW)
        || (p.at(CALL_KW) && p.nth_at(1, LLM_KW))
        || (p.at(RETRY_KW) && p.nth_at(1, WITH_KW))
        || starts_simple_statement(p)
}

fn starts_simple_statement(p: &Parser<'_>) -> bool {
    matches!(p.current(), PUSH_KW | ESCALATE_KW | LOG_KW | NOTIFY_KW | CONTINUE_KW | ABORT_KW)
        || (p.at(RETRY_KW) && p.nth_at(1, STEP_KW))
        || at_break(p)
}

/// The contextual keyword of our `break` statement.
const BREAK: &str = "break";

/// `break` alone on its line: our extension (upstream reads a variable and then
/// fails at the end of the line). Anywhere else `break` is a plain name.
fn at_break(p: &Parser<'_>) -> bool {
    p.at(NAME) && p.current_text() == BREAK && matches!(p.nth(1), NEWLINE | EOF | DEDENT)
}

/// One-line statements: everything `if C:` accepts inline, and guardrail actions.
fn simple_statement(p: &mut Parser<'_>) {
    if at_assignment(p) {
        let m = p.start();
        variable(p);
        p.bump(T![=]);
        assignment_value(p, m);
        return;
    }
    let m = p.start();
    let kind = match p.current() {
        RUN_KW => return run(p, m),
        CALL_KW => return call(p, m),
        PUSH_KW => {
            p.bump(PUSH_KW);
            p.with_stops(STOP_AS_TO, expressions::expr_or_error);
            if p.eat(AS_KW) {
                if p.current().is_identifier() {
                    p.bump_any();
                } else {
                    p.error_expected("a role such as `user` or `assistant`");
                }
            }
            if p.expect(TO_KW) {
                variable(p);
            }
            PUSH_STMT
        }
        ESCALATE_KW => {
            p.bump(ESCALATE_KW);
            if p.expect(TO_KW) && p.expect(HUMAN_KW) && !matches!(p.current(), NEWLINE | EOF) {
                plain_string(p);
            }
            ESCALATE_STMT
        }
        LOG_KW | NOTIFY_KW => {
            let kind = if p.at(LOG_KW) { LOG_STMT } else { NOTIFY_STMT };
            p.bump_any();
            expressions::expr_or_error(p);
            kind
        }
        CONTINUE_KW => {
            p.bump(CONTINUE_KW);
            CONTINUE_STMT
        }
        NAME if at_break(p) => {
            p.bump(NAME);
            BREAK_STMT
        }
        ABORT_KW => {
            p.bump(ABORT_KW);
            ABORT_STMT
        }
        RETRY_KW if p.nth_at(1, STEP_KW) => {
            p.bump(RETRY_KW);
            p.bump(STEP_KW);
            expressions::expr_or_error(p);
            RETRY_STEP_STMT
        }
        RETRY_KW => {
            p.bump(RETRY_KW);
            p.bump(WITH_KW);
            p.with_stops(STOP_IF, expressions::expr_or_error);
            if p.expect(IF_KW) {
                expressions::expr_or_error(p);
            }
            RETRY_WITH_STMT
        }
        MASK_KW => {
            p.bump(MASK_KW);
            if p.current().is_identifier() {
                p.bump_any();
            } else {
                p.error_expected("a guardrail name such as `pii`");
            }
            MASK_STMT
        }
        BLOCK_KW => {
            p.bump(BLOCK_KW);
            if p.expect(IF_KW) {
                expressions::expr_or_error(p);
            }
            BLOCK_STMT
        }
        WARN_KW => {
            p.bump(WARN_KW);
            if p.eat(IF_KW) {
                expressions::expr_or_error(p);
            } else if p.at(STRING) || p.at(INTERP_STRING) {
                plain_string(p);
            } else {
                p.error_expected("`if CONDITION` or a message string");
            }
            WARN_STMT
        }
        _ => unreachable!("simple_statement called at {:?}", p.current()),
    };
    end_of_line(p);
    m.complete(p, kind);
}

/// `f(x)`, `f x y`, `lib.f(x)`, `$a.b(x)`, `process x` as a statement.
fn expression_statement(p: &mut Parser<'_>) {
    let m = p.start();
    let is_call = expressions::statement_call(p);
    if !is_call {
        p.error_here("only calls can be used as statements, e.g. `f(x)`; to keep a value, assign it: `$x = …`");
        p.skip_line();
    }
    end_of_line(p);
    m.complete(p, EXPR_STMT);
}

/// `on failure:` + statements; it guards the statements before it in the same body.
fn failure_block(p: &mut Parser<'_>) {
    let m = p.start();
    p.bump(ON_KW);
    p.bump(FAILURE_KW);
    colon_block(p, "block", |p| statement(p, Ctx::Flow));
    m.complete(p, FAILURE_BLOCK);
}
