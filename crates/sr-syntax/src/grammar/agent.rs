//! `agent [NAME]:` and its properties and scoped event handlers.

use super::definitions::time_span;
use super::{NameKind, colon_block, end_of_line, name_def, name_ref, plain_string, statements};
use crate::SyntaxKind::*;
use crate::T;
use crate::parser::Parser;

pub(super) fn agent(p: &mut Parser<'_>) {
    let m = p.start();
    p.bump(AGENT_KW);
    if !p.at(T![:]) {
        name_def(p, NameKind::Name);
    }
    colon_block(p, "list of agent properties", agent_item);
    m.complete(p, AGENT_DEF);
}

fn agent_item(p: &mut Parser<'_>) {
    if p.at(ON_KW) || p.at(AFTER_KW) {
        statements::event_handler(p);
        p.eat(NEWLINE);
        return;
    }
    let m = p.start();
    match p.current() {
        TOOLS_KW | DELEGATE_KW | USE_KW => {
            p.bump_any();
            name_list(p);
        }
        INSTRUCTION_KW | PROMPT_KW | RETRY_KW => {
            p.bump_any();
            name_ref(p, NameKind::Identifier);
        }
        PRODUCES_KW => {
            p.bump(PRODUCES_KW);
            name_def(p, NameKind::Identifier);
        }
        HISTORY_KW => {
            p.bump(HISTORY_KW);
            if p.current().is_identifier() {
                p.bump_any();
            } else {
                p.error_expected("a history strategy such as `summarize` or `truncate`");
            }
        }
        TIMEOUT_KW => {
            p.bump(TIMEOUT_KW);
            if p.at(INT) {
                time_span(p);
            } else {
                name_ref(p, NameKind::Identifier);
            }
        }
        DESCRIPTION_KW => {
            p.bump(DESCRIPTION_KW);
            if p.at(T![:]) {
                p.error_here("write `description \"…\"` without a colon");
                p.bump_any();
            }
            plain_string(p);
        }
        NAME if p.current_text() == crate::item_kind::EXECUTOR => {
            p.bump(NAME);
            name_ref(p, NameKind::Name);
        }
        MODEL_KW => {
            p.error_here(
                "agents have no `model` property; put `using model \"name\"` on the agent's instruction prompt",
            );
            p.skip_line();
        }
        _ => {
            p.error_expected(
                "an agent property: `tools`, `instruction`, `prompt`, `produces`, `retry`, `timeout`, `description`, `delegate`, `use`, `history`, `executor`, or an `on`/`after` handler",
            );
            p.skip_line();
        }
    }
    end_of_line(p);
    m.complete(p, AGENT_PROPERTY);
}

/// `a, b.c, …` for `tools`, `delegate` and `use`.
fn name_list(p: &mut Parser<'_>) {
    let m = p.start();
    name_ref(p, NameKind::NameOrDotted);
    while p.eat(T![,]) {
        name_ref(p, NameKind::NameOrDotted);
    }
    m.complete(p, NAME_LIST);
}
