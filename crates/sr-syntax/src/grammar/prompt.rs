//! `prompt NAME [modifiers] [: """body""" [escalate if …]]`.

use super::expressions::variable;
use super::{NameKind, end_of_line, name_def, name_ref, plain_string, string_or_interpolated};
use crate::SyntaxKind::*;
use crate::T;
use crate::parser::Parser;

pub(super) fn prompt(p: &mut Parser<'_>) {
    let m = p.start();
    p.bump(PROMPT_KW);
    name_def(p, NameKind::Identifier);
    while matches!(p.current(), USING_KW | EXPECTING_KW | INHERIT_KW) {
        modifier(p);
    }
    if p.eat(T![:]) {
        if p.at(TRIPLE_STRING) {
            let body = p.start();
            p.bump(TRIPLE_STRING);
            body.complete(p, PROMPT_BODY);
            if p.at(NEWLINE) && p.nth_at(1, INDENT) {
                escalation_clause(p);
            }
        } else if p.at(NEWLINE) {
            p.error_here("the prompt body must start on the same line: `prompt name: \"\"\"…\"\"\"`");
        } else {
            p.error_expected("a triple-quoted prompt body `\"\"\"…\"\"\"`");
            p.skip_line();
        }
    } else if p.at(NEWLINE) && p.nth_at(1, INDENT) {
        p.error_here("a prompt body follows `:` on the same line: `prompt name: \"\"\"…\"\"\"`");
        p.bump(NEWLINE);
        let e = p.start();
        p.skip_block();
        e.complete(p, ERROR);
    } else if !matches!(p.current(), NEWLINE | EOF) && !crate::item_kind::DEFINITION_KEYWORDS.contains(p.current()) {
        p.error_expected("`:` and a prompt body, or a modifier (`using model`, `expecting`, `inherit`)");
        p.skip_line();
    }
    m.complete(p, PROMPT_DEF);
}

/// `using model "m"` | `expecting S` | `expecting S[]` | `inherit $var`.
fn modifier(p: &mut Parser<'_>) {
    let m = p.start();
    match p.current() {
        USING_KW => {
            p.bump(USING_KW);
            if p.expect(MODEL_KW) {
                string_or_interpolated(p);
            }
        }
        EXPECTING_KW => {
            p.bump(EXPECTING_KW);
            if name_ref(p, NameKind::Identifier).is_some() && p.eat(T!['[']) {
                p.expect(T![']']);
            }
        }
        _ => {
            p.bump(INHERIT_KW);
            variable(p);
        }
    }
    m.complete(p, PROMPT_MODIFIER);
}

/// `NEWLINE INDENT escalate if (~|==|!=|contains) "V" NEWLINE DEDENT`.
fn escalation_clause(p: &mut Parser<'_>) {
    p.bump(NEWLINE);
    let m = p.start();
    p.bump(INDENT);
    if !p.eat(ESCALATE_KW) {
        p.error_expected("`escalate if …` (the only clause allowed under a prompt)");
    } else if p.expect(IF_KW) {
        if matches!(p.current(), T![~] | T![==] | T![!=] | CONTAINS_KW) {
            p.bump_any();
            plain_string(p);
        } else {
            p.error_expected("`~`, `==`, `!=` or `contains` followed by a string");
        }
    }
    end_of_line(p);
    while !matches!(p.current(), DEDENT | EOF) {
        p.error_here("a prompt takes a single `escalate if …` line");
        p.skip_line();
        p.eat(NEWLINE);
    }
    p.eat(DEDENT);
    m.complete(p, ESCALATION_CLAUSE);
}
