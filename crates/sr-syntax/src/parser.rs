//! Parser machinery: a cursor over the indentation layer's tokens that records
//! events (start node, token, finish node, error). The grammar lives in
//! `grammar/`; `build.rs` turns the events into a rowan tree.

use std::cell::Cell;

use text_size::TextRange;

use crate::SyntaxKind::{self, *};
use crate::T;
use crate::diagnostic::{Diagnostic, Found, SyntaxError, SyntaxHelp};
use crate::input::Input;
use crate::token_set::TokenSet;

#[derive(Debug)]
pub(crate) enum Event {
    /// Starts a node. `forward_parent` points at a later `Start` that must wrap this
    /// one (made by `CompletedMarker::precede`).
    Start {
        kind: SyntaxKind,
        forward_parent: Option<u32>,
    },
    Finish,
    /// Consumes one parser token (zero-width tokens emit no tree token).
    Token {
        input: u32,
    },
    Tombstone,
}

/// How many levels expressions, operator chains, types and blocks may nest,
/// counted together: a bracket, a prefix operator, a juxtaposed call argument,
/// each further operand of a binary operator chain and each indented block is
/// one level. Deeper input becomes an `ERROR` node with an SR111 diagnostic, so
/// no tree is deeper than a small multiple of this and every recursive walk
/// over trees and HIR is bounded.
pub const MAX_NESTING: u32 = 256;

pub(crate) struct Parser<'t> {
    text: &'t str,
    tokens: &'t [Input],
    raw: &'t [crate::lexer::Token],
    pos: usize,
    pub(crate) events: Vec<Event>,
    pub(crate) errors: Vec<Diagnostic>,
    /// Soft keywords that end an expression here (`do` in `for x in y do`), so that
    /// juxtaposed call arguments do not swallow them.
    stops: Vec<TokenSet>,
    /// Consecutive `progress_guard` calls without the position moving.
    stalled: u32,
    /// The position at the last `progress_guard` call.
    guarded_pos: usize,
    /// How many nesting levels enclose the current token (see [`MAX_NESTING`]).
    depth: u32,
    /// Errors already kept by a statement after both readings failed (see
    /// `statements::statement`); an enclosing statement need not retry for them.
    pub(crate) settled_errors: usize,
    /// Bare-call arguments are full expressions (`f a + b` is `f(a + b)`), the
    /// reading upstream's Earley parser falls back to when the narrow one fails.
    pub(crate) wide_args: bool,
    /// The furthest token the parser has looked at: a piece's parse is valid
    /// only if it never looked past its lookahead (see `pieces`).
    furthest: Cell<usize>,
}

/// A point to which the parser can rewind (see `statements::statement`).
pub(crate) struct Checkpoint {
    pos: usize,
    events: usize,
    errors: usize,
}

impl<'t> Parser<'t> {
    pub(crate) fn new(text: &'t str, raw: &'t [crate::lexer::Token], tokens: &'t [Input]) -> Self {
        Parser {
            text,
            tokens,
            raw,
            pos: 0,
            events: Vec::new(),
            errors: Vec::new(),
            stops: Vec::new(),
            stalled: 0,
            guarded_pos: usize::MAX,
            depth: 0,
            settled_errors: 0,
            wide_args: false,
            furthest: Cell::new(0),
        }
    }

    /// Index of the current token in the parser's input.
    pub(crate) fn position(&self) -> usize {
        self.pos
    }

    /// The furthest token index looked at so far.
    pub(crate) fn furthest(&self) -> usize {
        self.furthest.get()
    }

    pub(crate) fn current(&self) -> SyntaxKind {
        self.nth(0)
    }

    pub(crate) fn nth(&self, n: usize) -> SyntaxKind {
        self.furthest.set(self.furthest.get().max(self.pos + n));
        self.tokens.get(self.pos + n).map_or(EOF, |t| t.kind)
    }

    pub(crate) fn at(&self, kind: SyntaxKind) -> bool {
        self.current() == kind
    }

    pub(crate) fn at_ts(&self, set: TokenSet) -> bool {
        set.contains(self.current())
    }

    pub(crate) fn nth_at(&self, n: usize, kind: SyntaxKind) -> bool {
        self.nth(n) == kind
    }

    /// The text of the current token (empty for zero-width tokens).
    pub(crate) fn current_text(&self) -> &'t str {
        self.nth(0);
        match self.tokens.get(self.pos).and_then(|t| t.raw) {
            Some(raw) => &self.text[self.raw[raw as usize].range],
            None => "",
        }
    }

    pub(crate) fn current_range(&self) -> TextRange {
        self.nth(0);
        self.tokens.get(self.pos).map_or_else(|| TextRange::empty(self.text_len()), |t| t.range)
    }

    fn text_len(&self) -> text_size::TextSize {
        text_size::TextSize::of(self.text)
    }

    pub(crate) fn start(&mut self) -> Marker {
        let pos = self.events.len() as u32;
        self.events.push(Event::Tombstone);
        Marker { pos, completed: false }
    }

    pub(crate) fn bump_any(&mut self) {
        if self.at(EOF) {
            return;
        }
        self.events.push(Event::Token { input: self.pos as u32 });
        self.pos += 1;
    }

    pub(crate) fn bump(&mut self, kind: SyntaxKind) {
        assert!(self.eat(kind), "expected {kind:?}, found {:?}", self.current());
    }

    pub(crate) fn eat(&mut self, kind: SyntaxKind) -> bool {
        if !self.at(kind) {
            return false;
        }
        self.bump_any();
        true
    }

    /// Eats `kind` or reports what was expected.
    pub(crate) fn expect(&mut self, kind: SyntaxKind) -> bool {
        if self.eat(kind) {
            return true;
        }
        self.error_expected(&kind.describe());
        false
    }

    /// Reports an unexpected current token, saying what was expected instead.
    pub(crate) fn error_expected(&mut self, expected: &str) {
        let diagnostic = self.unexpected_here(Some(SyntaxHelp::Expected(expected.to_string())));
        self.push_error(diagnostic);
    }

    /// Reports the current token with a custom explanation.
    pub(crate) fn error_here(&mut self, help: impl Into<String>) {
        let diagnostic = self.unexpected_here(Some(SyntaxHelp::Explain(help.into())));
        self.push_error(diagnostic);
    }

    fn push_error(&mut self, diagnostic: Diagnostic) {
        // One error per position: recovery must not stack messages on one token.
        if self.errors.last().is_some_and(|e| e.range == diagnostic.range) {
            return;
        }
        self.errors.push(diagnostic);
    }

    fn unexpected_here(&self, help: Option<SyntaxHelp>) -> Diagnostic {
        let range = self.current_range();
        let found = match self.current() {
            EOF => Found::EndOfInput,
            NEWLINE => Found::EndOfLine,
            INDENT => Found::Indentation,
            DEDENT => Found::EndOfBlock,
            ERROR_TOKEN => Found::InvalidCharacter,
            _ => Found::Token(self.current_text().to_string()),
        };
        let diagnostic = Diagnostic::new(SyntaxError::Syntax { found, help }, range);
        if self.at(EOF) { diagnostic.at_upstream(-1, -1) } else { diagnostic }
    }

    /// Skips the rest of the line (and any block nested under it) into an `ERROR`
    /// node. The line break itself is left for the caller.
    pub(crate) fn skip_line(&mut self) {
        if matches!(self.current(), EOF | NEWLINE | DEDENT) {
            return;
        }
        let m = self.start();
        while !matches!(self.current(), EOF | NEWLINE | DEDENT) {
            if self.at(INDENT) {
                self.skip_block();
            } else {
                self.bump_any();
            }
        }
        m.complete(self, ERROR);
    }

    /// Skips an `INDENT … DEDENT` block the grammar does not expect.
    pub(crate) fn skip_block(&mut self) {
        let mut depth = 0u32;
        loop {
            match self.current() {
                EOF => break,
                INDENT => depth += 1,
                DEDENT => {
                    depth -= 1;
                    if depth == 0 {
                        self.bump_any();
                        break;
                    }
                }
                _ => {}
            }
            self.bump_any();
        }
    }

    /// Skips the lines of a block whose `INDENT` was just eaten, up to (not
    /// including) its `DEDENT`.
    pub(crate) fn skip_block_rest(&mut self) {
        let mut depth = 0u32;
        loop {
            match self.current() {
                EOF => break,
                INDENT => depth += 1,
                DEDENT if depth == 0 => break,
                DEDENT => depth -= 1,
                _ => {}
            }
            self.bump_any();
        }
    }

    /// Soft keywords in `stops` end juxtaposed expressions while `f` runs, in
    /// addition to the enclosing construct's; an empty set (inside brackets)
    /// clears them.
    pub(crate) fn with_stops<T>(&mut self, stops: TokenSet, f: impl FnOnce(&mut Self) -> T) -> T {
        let outer = self.stops.last().copied().unwrap_or(TokenSet::EMPTY);
        let set = if stops == TokenSet::EMPTY { stops } else { outer.union(stops) };
        self.stops.push(set);
        let result = f(self);
        self.stops.pop();
        result
    }

    pub(crate) fn at_stop_kind(&self, kind: SyntaxKind) -> bool {
        self.stops.last().is_some_and(|s| s.contains(kind))
    }

    pub(crate) fn checkpoint(&self) -> Checkpoint {
        Checkpoint { pos: self.pos, events: self.events.len(), errors: self.errors.len() }
    }

    pub(crate) fn has_errors_since(&self, checkpoint: &Checkpoint) -> bool {
        self.errors.len() > checkpoint.errors
    }

    pub(crate) fn errors_since(&self, checkpoint: &Checkpoint) -> usize {
        self.errors.len() - checkpoint.errors
    }

    /// Removes everything parsed since `checkpoint` and returns it.
    pub(crate) fn rewind(&mut self, checkpoint: &Checkpoint) -> (usize, Vec<Event>, Vec<Diagnostic>) {
        let pos = std::mem::replace(&mut self.pos, checkpoint.pos);
        (pos, self.events.split_off(checkpoint.events), self.errors.split_off(checkpoint.errors))
    }

    /// Puts back what `rewind` removed.
    pub(crate) fn restore(&mut self, (pos, events, errors): (usize, Vec<Event>, Vec<Diagnostic>)) {
        self.pos = pos;
        self.events.extend(events);
        self.errors.extend(errors);
    }

    /// Guards against a grammar bug looping without consuming input: the
    /// position must move at least every 10,000 calls (nesting is bounded by
    /// [`MAX_NESTING`], so a correct grammar calls this far fewer times per token).
    pub(crate) fn progress_guard(&mut self) {
        if self.pos == self.guarded_pos {
            self.stalled += 1;
            assert!(self.stalled < 10_000, "the parser is stuck at {:?}", self.current());
        } else {
            self.guarded_pos = self.pos;
            self.stalled = 0;
        }
    }

    /// Nesting levels entered so far.
    pub(crate) fn depth(&self) -> u32 {
        self.depth
    }

    /// Whether one more nesting level would exceed [`MAX_NESTING`].
    pub(crate) fn at_nesting_limit(&self) -> bool {
        self.depth >= MAX_NESTING
    }

    /// Runs `f` one nesting level deeper. Callers check [`Self::at_nesting_limit`]
    /// first, so the depth never exceeds [`MAX_NESTING`].
    pub(crate) fn nested<T>(&mut self, f: impl FnOnce(&mut Self) -> T) -> T {
        self.enter();
        let result = f(self);
        self.leave(1);
        result
    }

    /// One nesting level deeper (checked with [`Self::at_nesting_limit`] first).
    pub(crate) fn enter(&mut self) {
        self.depth += 1;
    }

    /// Back out of `levels` levels entered with [`Self::enter`].
    pub(crate) fn leave(&mut self, levels: u32) {
        self.depth -= levels;
    }

    /// Skips what is left of an expression nested too deeply, brackets balanced:
    /// everything up to a `,`, `:`, closing bracket, line break or soft keyword
    /// that ends the enclosing construct at this bracket level.
    pub(crate) fn skip_expression_rest(&mut self) {
        let mut brackets = 0u32;
        loop {
            match self.current() {
                EOF | NEWLINE | INDENT | DEDENT => break,
                T!['('] | T!['['] | T!['{'] => brackets += 1,
                T![')'] | T![']'] | T!['}'] if brackets == 0 => break,
                T![')'] | T![']'] | T!['}'] => brackets -= 1,
                T![,] | T![:] if brackets == 0 => break,
                kind if brackets == 0 && self.at_stop_kind(kind) => break,
                _ => {}
            }
            self.bump_any();
        }
    }

    /// Reports that nesting exceeds [`MAX_NESTING`] at the current token.
    pub(crate) fn error_too_deep(&mut self, what: &str) {
        let diagnostic = Diagnostic::new(SyntaxError::TooDeep { what: what.to_string() }, self.current_range());
        self.push_error(diagnostic);
    }
}

pub(crate) struct Marker {
    pos: u32,
    completed: bool,
}

impl Marker {
    pub(crate) fn complete(mut self, p: &mut Parser<'_>, kind: SyntaxKind) -> CompletedMarker {
        self.completed = true;
        match &mut p.events[self.pos as usize] {
            Event::Start { kind: slot, .. } => *slot = kind,
            slot @ Event::Tombstone => *slot = Event::Start { kind, forward_parent: None },
            _ => unreachable!(),
        }
        p.events.push(Event::Finish);
        CompletedMarker { pos: self.pos, kind }
    }
}

impl Drop for Marker {
    fn drop(&mut self) {
        if !self.completed && !std::thread::panicking() {
            panic!("a marker was dropped without being completed");
        }
    }
}

#[derive(Clone, Copy)]
pub(crate) struct CompletedMarker {
    pos: u32,
    kind: SyntaxKind,
}

impl CompletedMarker {
    pub(crate) fn kind(self) -> SyntaxKind {
        self.kind
    }

    /// Starts a node that will wrap this completed one (`a + b` wraps `a`).
    pub(crate) fn precede(self, p: &mut Parser<'_>) -> Marker {
        let m = p.start();
        match &mut p.events[self.pos as usize] {
            Event::Start { forward_parent, .. } => *forward_parent = Some(m.pos - self.pos),
            _ => unreachable!(),
        }
        m
    }
}
