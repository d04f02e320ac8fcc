//! Top-level definitions other than agents, prompts, flows and handlers:
//! `import`, `model`, `schema`, `tool`, `retry`, `timeout` and `policy`.

use super::expressions::{self, variable};
use super::{NameKind, colon_block, end_of_line, name_def, name_ref, plain_string, string_or_interpolated};
use crate::SyntaxKind::*;
use crate::T;
use crate::parser::Parser;
use crate::token_set::TokenSet;

/// `import SOURCE` | `import NAME from SOURCE`.
pub(super) fn import(p: &mut Parser<'_>) {
    let m = p.start();
    p.bump(IMPORT_KW);
    if p.at(NAME) && p.nth_at(1, FROM_KW) {
        name_def(p, NameKind::Name);
        p.bump(FROM_KW);
    }
    if p.at_ts(TokenSet::new(&[STREETRACE_KW, LOCAL_PATH, PIP_URI, MCP_URI])) {
        p.bump_any();
    } else {
        p.error_expected("an import source: `streetrace`, `./path.sr`, `pip://name` or `mcp://name`");
        p.skip_line();
    }
    m.complete(p, IMPORT);
}

/// `model NAME = provider/model` | `model NAME = NAME` | `model NAME:` + properties.
pub(super) fn model(p: &mut Parser<'_>) {
    let m = p.start();
    p.bump(MODEL_KW);
    name_def(p, NameKind::Name);
    if p.eat(T![=]) {
        if p.at(PROVIDER_MODEL) || p.at(NAME) {
            p.bump_any();
        } else {
            p.error_expected("a model like `anthropic/claude-sonnet` or the name of another model");
            p.skip_line();
        }
    } else if p.at(T![:]) || (p.at(NEWLINE) && p.nth_at(1, INDENT)) {
        colon_block(p, "list of model properties", model_property);
    } else {
        p.error_expected("`=` or `:`");
        p.skip_line();
    }
    m.complete(p, MODEL_DEF);
}

fn model_property(p: &mut Parser<'_>) {
    let m = p.start();
    let value = match p.current() {
        PROVIDER_KW | NAME_KW => NAME,
        TEMPERATURE_KW => NUMBER,
        MAX_TOKENS_KW | MAX_INPUT_TOKENS_KW => INT,
        _ => {
            p.error_expected("a model property: `provider`, `name`, `temperature`, `max_tokens` or `max_input_tokens`");
            p.skip_line();
            p.eat(NEWLINE);
            m.complete(p, MODEL_PROPERTY);
            return;
        }
    };
    p.bump_any();
    if p.expect(T![:]) {
        if value == NUMBER && p.at(INT) {
            p.error_here(format!("write a decimal number, e.g. `{}.0`", p.current_text()));
            p.bump_any();
        } else {
            p.expect(value);
        }
    }
    end_of_line(p);
    m.complete(p, MODEL_PROPERTY);
}

/// `schema NAME:` + `field: TYPE` lines.
pub(super) fn schema(p: &mut Parser<'_>) {
    let m = p.start();
    p.bump(SCHEMA_KW);
    name_def(p, NameKind::Name);
    colon_block(p, "list of fields", schema_field);
    m.complete(p, SCHEMA_DEF);
}

fn schema_field(p: &mut Parser<'_>) {
    let m = p.start();
    if name_def(p, NameKind::Identifier).is_some() && p.expect(T![:]) {
        type_expr(p);
    }
    end_of_line(p);
    m.complete(p, SCHEMA_FIELD);
}

/// `string | int | float | bool | NAME | list[TYPE]`, each followed by any number of `?`.
fn type_expr(p: &mut Parser<'_>) {
    if p.at_nesting_limit() {
        p.error_too_deep("this type is");
        let m = p.start();
        p.skip_expression_rest();
        m.complete(p, ERROR);
        return;
    }
    p.nested(type_here);
}

fn type_here(p: &mut Parser<'_>) {
    let mut lhs = match p.current() {
        STRING_KW | INT_KW | FLOAT_KW | BOOL_KW => {
            let m = p.start();
            p.bump_any();
            m.complete(p, NAMED_TYPE)
        }
        NAME => {
            let m = p.start();
            name_ref(p, NameKind::Name);
            m.complete(p, NAMED_TYPE)
        }
        LIST_KW => {
            let m = p.start();
            p.bump(LIST_KW);
            if p.expect(T!['[']) {
                type_expr(p);
                p.expect(T![']']);
            }
            m.complete(p, LIST_TYPE)
        }
        _ => {
            p.error_expected("a type: `string`, `int`, `float`, `bool`, `list[T]` or a schema name");
            return;
        }
    };
    // Each `?` wraps the type in one more node: one nesting level each.
    let mut levels = 0;
    while p.at(T![?]) {
        let m = lhs.precede(p);
        if p.at_nesting_limit() {
            p.error_too_deep("this type is");
            while p.eat(T![?]) {}
            m.complete(p, ERROR);
            break;
        }
        p.enter();
        levels += 1;
        p.bump(T![?]);
        lhs = m.complete(p, OPTIONAL_TYPE);
    }
    p.leave(levels);
}

/// `tool NAME = mcp "URL" [with OPTIONS]` | `= a2a "URL" [with OPTIONS]` (our
/// extension; `a2a` is contextual) | `= builtin a.b` | `= a.b` | `tool NAME:` + properties.
pub(super) fn tool(p: &mut Parser<'_>) {
    let m = p.start();
    p.bump(TOOL_KW);
    name_def(p, NameKind::Name);
    if p.eat(T![=]) {
        match p.current() {
            kind @ (MCP_KW | NAME) if kind == MCP_KW || p.current_text() == crate::item_kind::A2A => {
                p.bump_any();
                plain_string(p);
                if p.eat(WITH_KW) {
                    tool_option(p);
                    while p.eat(T![,]) {
                        tool_option(p);
                    }
                }
            }
            BUILTIN_KW => {
                p.bump(BUILTIN_KW);
                p.expect(DOTTED_NAME);
            }
            DOTTED_NAME => p.bump(DOTTED_NAME),
            _ => {
                p.error_expected("`mcp \"URL\"`, `a2a \"URL\"`, `builtin streetrace.fs` or a dotted tool reference");
                p.skip_line();
            }
        }
    } else if p.at(T![:]) || (p.at(NEWLINE) && p.nth_at(1, INDENT)) {
        colon_block(p, "list of tool properties", tool_property);
    } else {
        p.error_expected("`=` or `:`");
        p.skip_line();
    }
    m.complete(p, TOOL_DEF);
}

/// `auth bearer "…"` | `auth basic "…"` | `NAME "…"`.
fn tool_option(p: &mut Parser<'_>) {
    let m = p.start();
    if p.eat(AUTH_KW) {
        if p.at(BEARER_KW) || p.at(BASIC_KW) {
            p.bump_any();
            string_or_interpolated(p);
        } else {
            p.error_expected("`bearer` or `basic`");
        }
    } else if p.at(NAME) {
        p.bump(NAME);
        string_or_interpolated(p);
    } else {
        p.error_expected("`auth bearer \"…\"`, `auth basic \"…\"` or `NAME \"value\"`");
    }
    m.complete(p, TOOL_OPTION);
}

fn tool_property(p: &mut Parser<'_>) {
    let m = p.start();
    match p.current() {
        TYPE_KW => {
            p.bump(TYPE_KW);
            if p.expect(T![:]) {
                if matches!(p.current(), NAME | MCP_KW | BUILTIN_KW) {
                    p.bump_any();
                } else {
                    p.error_expected("a tool type: `mcp`, `builtin` or a name");
                }
            }
            end_of_line(p);
        }
        URL_KW => {
            p.bump(URL_KW);
            if p.expect(T![:]) {
                plain_string(p);
            }
            end_of_line(p);
        }
        HEADERS_KW => {
            p.bump(HEADERS_KW);
            colon_block(p, "list of headers", header_entry);
        }
        _ => {
            p.error_expected("a tool property: `type`, `url` or `headers`");
            p.skip_line();
            p.eat(NEWLINE);
        }
    }
    m.complete(p, TOOL_PROPERTY);
}

fn header_entry(p: &mut Parser<'_>) {
    let m = p.start();
    if p.expect(NAME) && p.expect(T![:]) {
        string_or_interpolated(p);
    }
    end_of_line(p);
    m.complete(p, HEADER_ENTRY);
}

/// `retry NAME = N times [, exponential|linear|fixed backoff]`.
pub(super) fn retry_policy(p: &mut Parser<'_>) {
    let m = p.start();
    p.bump(RETRY_KW);
    name_def(p, NameKind::Identifier);
    if p.expect(T![=]) && p.expect(INT) && p.expect(TIMES_KW) && p.eat(T![,]) {
        if matches!(p.current(), EXPONENTIAL_KW | LINEAR_KW | FIXED_KW) {
            p.bump_any();
            p.expect(BACKOFF_KW);
        } else {
            p.error_expected("`exponential backoff`, `linear backoff` or `fixed backoff`");
        }
    }
    m.complete(p, RETRY_POLICY_DEF);
}

/// `timeout NAME = N seconds|minutes|hours`.
pub(super) fn timeout_policy(p: &mut Parser<'_>) {
    let m = p.start();
    p.bump(TIMEOUT_KW);
    name_def(p, NameKind::Name);
    if p.expect(T![=]) {
        time_span(p);
    }
    m.complete(p, TIMEOUT_POLICY_DEF);
}

/// `N seconds|minutes|hours`.
pub(super) fn time_span(p: &mut Parser<'_>) {
    let m = p.start();
    if p.expect(INT) {
        if matches!(p.current(), SECONDS_KW | MINUTES_KW | HOURS_KW) {
            p.bump_any();
        } else {
            p.error_expected("`seconds`, `minutes` or `hours`");
        }
    }
    m.complete(p, TIME_SPAN);
}

/// `policy NAME:` + `trigger:`, `strategy:`, `preserve:`, `use model:` or custom properties.
pub(super) fn policy(p: &mut Parser<'_>) {
    let m = p.start();
    p.bump(POLICY_KW);
    name_def(p, NameKind::Identifier);
    colon_block(p, "list of policy properties", policy_property);
    m.complete(p, POLICY_DEF);
}

fn policy_property(p: &mut Parser<'_>) {
    let m = p.start();
    if p.at(USE_KW) && p.nth_at(1, MODEL_KW) {
        p.bump(USE_KW);
        p.bump(MODEL_KW);
        if p.expect(T![:]) {
            string_or_interpolated(p);
        }
    } else if p.at(PRESERVE_KW) && p.nth_at(1, T![:]) && p.nth_at(2, T!['[']) {
        p.bump(PRESERVE_KW);
        p.bump(T![:]);
        preserve_list(p);
    } else if p.current().is_identifier() {
        // `trigger: tokens > 0.8`, `strategy: summarize` and custom properties all
        // take an expression; upstream's narrower forms are a subset of it.
        p.bump_any();
        if p.expect(T![:]) {
            expressions::expr_or_error(p);
        }
    } else {
        p.error_expected("a policy property such as `trigger:`, `strategy:` or `preserve:`");
        p.skip_line();
    }
    end_of_line(p);
    m.complete(p, POLICY_PROPERTY);
}

/// `executor NAME:` + `key: value` lines: the sandbox a coding agent's code runs
/// in. Our extension: upstream accepts no line that starts this way.
pub(super) fn executor(p: &mut Parser<'_>) {
    let m = p.start();
    p.bump(NAME);
    name_def(p, NameKind::Name);
    colon_block(p, "list of executor properties", executor_property);
    m.complete(p, EXECUTOR_DEF);
}

fn executor_property(p: &mut Parser<'_>) {
    let m = p.start();
    if p.current().is_identifier() && p.nth_at(1, T![:]) {
        p.bump_any();
        p.bump(T![:]);
        expressions::expr_or_error(p);
    } else {
        p.error_expected("an executor property such as `backend:`, `allow:` or `timeout:`");
        p.skip_line();
    }
    end_of_line(p);
    m.complete(p, EXECUTOR_PROPERTY);
}

/// `[ITEM, …]` where ITEM is `$var`, `last N messages`, `tool results`, `"text"` or
/// (as a custom property) any expression.
fn preserve_list(p: &mut Parser<'_>) {
    let m = p.start();
    p.bump(T!['[']);
    p.with_stops(TokenSet::EMPTY, |p| {
        if !p.at(T![']']) {
            preserve_item(p);
            while p.eat(T![,]) {
                preserve_item(p);
            }
        }
    });
    p.expect(T![']']);
    m.complete(p, PRESERVE_LIST);
}

fn preserve_item(p: &mut Parser<'_>) {
    let m = p.start();
    if p.at(LAST_KW) && p.nth_at(1, INT) {
        p.bump(LAST_KW);
        p.bump(INT);
        p.expect(MESSAGES_KW);
    } else if p.at(TOOL_KW) && p.nth_at(1, RESULTS_KW) {
        p.bump(TOOL_KW);
        p.bump(RESULTS_KW);
    } else if p.at(T![$]) || p.current().is_identifier() {
        variable(p);
    } else {
        expressions::expr(p);
    }
    m.complete(p, PRESERVE_ITEM);
}
