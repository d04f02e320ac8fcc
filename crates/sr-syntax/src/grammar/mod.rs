//! The grammar: hand-written recursive descent over the indentation layer's
//! tokens, following upstream's Lark grammar (`streetrace.lark`) with its Earley
//! ambiguities replaced by the explicit rules of `language.md` §4.3.

mod agent;
mod definitions;
mod expressions;
mod prompt;
mod statements;

use crate::SyntaxKind::{self, *};
use crate::T;
use crate::parser::{CompletedMarker, Parser};

/// Top-level items up to the end of the input or the token at `stop`, the first
/// token of the next piece (see `pieces`). Only the first piece may declare the
/// version.
pub(crate) fn source_file(p: &mut Parser<'_>, first: bool, stop: usize) {
    let m = p.start();
    if first {
        skip_newlines(p);
        if p.at(STREETRACE_KW) {
            version_decl(p);
        }
    }
    loop {
        skip_newlines(p);
        if p.position() >= stop {
            break;
        }
        match p.current() {
            EOF => break,
            DEDENT => p.bump_any(),
            _ => top_level_item(p, stop),
        }
    }
    m.complete(p, SOURCE_FILE);
}

fn skip_newlines(p: &mut Parser<'_>) {
    while p.eat(NEWLINE) {}
}

fn version_decl(p: &mut Parser<'_>) {
    let m = p.start();
    p.bump(STREETRACE_KW);
    if !p.expect(VERSION) {
        p.skip_line();
    }
    end_of_line(p);
    m.complete(p, VERSION_DECL);
}

fn top_level_item(p: &mut Parser<'_>, stop: usize) {
    p.progress_guard();
    match p.current() {
        IMPORT_KW => definitions::import(p),
        MODEL_KW => definitions::model(p),
        SCHEMA_KW => definitions::schema(p),
        TOOL_KW => definitions::tool(p),
        RETRY_KW => definitions::retry_policy(p),
        TIMEOUT_KW => definitions::timeout_policy(p),
        POLICY_KW => definitions::policy(p),
        ON_KW | AFTER_KW => statements::event_handler(p),
        FLOW_KW => statements::flow(p),
        AGENT_KW => agent::agent(p),
        PROMPT_KW => prompt::prompt(p),
        NAME if p.current_text() == crate::item_kind::EXECUTOR && p.nth_at(1, NAME) => definitions::executor(p),
        STREETRACE_KW => {
            p.error_here("the version declaration `streetrace v1` must be the first statement of the file");
            p.skip_line();
        }
        INDENT => {
            p.error_here("top-level definitions start at column 1");
            skip_to_next_item(p, stop);
        }
        _ => {
            p.error_expected(
                "a top-level definition (`model`, `schema`, `tool`, `retry`, `timeout`, `policy`, `on`, `after`, `flow`, `agent`, `prompt`, `import` or `executor`)",
            );
            skip_to_next_item(p, stop);
        }
    }
}

/// Skips lines up to the next line that can begin an item: a run of lines that
/// are not definitions is one mistake with one error, not one per line.
fn skip_to_next_item(p: &mut Parser<'_>, stop: usize) {
    loop {
        match p.current() {
            EOF => break,
            NEWLINE | DEDENT => p.bump_any(),
            INDENT => {
                let m = p.start();
                p.skip_block();
                m.complete(p, ERROR);
            }
            _ => p.skip_line(),
        }
        while p.at(NEWLINE) {
            p.bump_any();
        }
        if p.position() >= stop || p.at(EOF) || crate::item_kind::starts_item(p.current(), p.current_text()) {
            break;
        }
    }
}

/// Ends a line-based construct: eats the line break, or reports and skips what is
/// left of the line.
pub(crate) fn end_of_line(p: &mut Parser<'_>) {
    if p.eat(NEWLINE) {
        return;
    }
    if matches!(p.current(), EOF | DEDENT) {
        return;
    }
    p.error_expected("the end of the line");
    p.skip_line();
    p.eat(NEWLINE);
}

/// `: NEWLINE INDENT item+ DEDENT`. The `:` has been eaten by the caller; `item`
/// parses one line. Returns false if there was no indented block.
pub(crate) fn indented_block(p: &mut Parser<'_>, what: &str, item: impl FnMut(&mut Parser<'_>)) -> bool {
    if !p.at(NEWLINE) {
        p.error_expected(&format!("a line break and an indented {what}"));
        p.skip_line();
        p.eat(NEWLINE);
        return false;
    }
    p.bump(NEWLINE);
    if !p.at(INDENT) {
        p.error_expected(&format!("an indented {what}"));
        return false;
    }
    let m = p.start();
    if p.at_nesting_limit() {
        p.bump(INDENT);
        p.error_too_deep(&format!("this {what} is"));
        let e = p.start();
        p.skip_block_rest();
        e.complete(p, ERROR);
        m.complete(p, BLOCK);
        return true;
    }
    p.bump(INDENT);
    p.nested(|p| block_items(p, item));
    p.eat(DEDENT);
    m.complete(p, BLOCK);
    true
}

fn block_items(p: &mut Parser<'_>, mut item: impl FnMut(&mut Parser<'_>)) {
    while !matches!(p.current(), DEDENT | EOF) {
        p.progress_guard();
        match p.current() {
            NEWLINE => p.bump_any(),
            INDENT => {
                p.error_here("this line is indented more than the lines before it");
                let e = p.start();
                p.skip_block();
                e.complete(p, ERROR);
            }
            _ => item(p),
        }
    }
}

/// `: NEWLINE INDENT item+ DEDENT` after a header. A missing `:` is reported,
/// and an indented block that follows is still parsed.
pub(crate) fn colon_block(p: &mut Parser<'_>, what: &str, item: impl FnMut(&mut Parser<'_>)) {
    if p.eat(T![:]) {
        indented_block(p, what, item);
    } else if p.at(NEWLINE) && p.nth_at(1, INDENT) {
        p.error_expected("`:` at the end of the line");
        indented_block(p, what, item);
    } else {
        p.error_expected("`:`");
        p.skip_line();
        if p.at(NEWLINE) && p.nth_at(1, INDENT) {
            indented_block(p, what, item);
        }
    }
}

/// A definition's name. `accept` says which tokens may name it (upstream takes a
/// plain `NAME` in some places and any identifier in others).
pub(crate) fn name_def(p: &mut Parser<'_>, accept: NameKind) -> Option<CompletedMarker> {
    if accept.accepts(p.current()) {
        let m = p.start();
        p.bump_any();
        return Some(m.complete(p, NAME_DEF));
    }
    name_error(p);
    None
}

pub(crate) fn name_ref(p: &mut Parser<'_>, accept: NameKind) -> Option<CompletedMarker> {
    if accept.accepts(p.current()) {
        let m = p.start();
        p.bump_any();
        return Some(m.complete(p, NAME_REF));
    }
    name_error(p);
    None
}

/// Reports a token that cannot name this; a keyword in a name's place is
/// consumed so that the rest of the definition still parses.
fn name_error(p: &mut Parser<'_>) {
    let kind = p.current();
    if kind.is_keyword() {
        p.error_here(format!(
            "`{}` is a keyword and cannot be used as a name here; rename it (e.g. `{}_`)",
            p.current_text(),
            p.current_text()
        ));
        let m = p.start();
        p.bump_any();
        m.complete(p, ERROR);
    } else {
        p.error_expected("a name");
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum NameKind {
    /// Only a plain `NAME` (agent, model, schema, tool names).
    Name,
    /// A `NAME` or a soft keyword (prompts, flows, variables).
    Identifier,
    /// A `NAME` or `DOTTED_NAME` (items of `tools`, `delegate`, `use`).
    NameOrDotted,
}

impl NameKind {
    fn accepts(self, kind: SyntaxKind) -> bool {
        match self {
            NameKind::Name => kind == NAME,
            NameKind::Identifier => kind.is_identifier(),
            NameKind::NameOrDotted => matches!(kind, NAME | DOTTED_NAME),
        }
    }
}

/// `STRING` or `INTERP_STRING`, as upstream's `interpolated_string`.
pub(crate) fn string_or_interpolated(p: &mut Parser<'_>) -> bool {
    if p.at(STRING) || p.at(INTERP_STRING) {
        let m = p.start();
        p.bump_any();
        m.complete(p, LITERAL);
        return true;
    }
    p.error_expected("a quoted string");
    false
}

/// A plain `STRING` literal (no `${…}`).
pub(crate) fn plain_string(p: &mut Parser<'_>) -> bool {
    if p.at(STRING) {
        let m = p.start();
        p.bump_any();
        m.complete(p, LITERAL);
        return true;
    }
    if p.at(INTERP_STRING) {
        p.error_here("`${…}` interpolation is not allowed in this string; use single quotes for a literal `${`");
        let m = p.start();
        p.bump_any();
        m.complete(p, ERROR);
        return false;
    }
    p.error_expected("a quoted string");
    false
}
