//! Turns the parser's events into a rowan green tree. Trivia (whitespace,
//! comments, insignificant line breaks) is attached to the innermost open node
//! when the next real token (or the line break added at the end of the file) is
//! consumed; a node never starts with trivia.

use rowan::{GreenNode, GreenNodeBuilder, NodeCache};

use crate::SyntaxKind;
use crate::input::Input;
use crate::lexer::Token;
use crate::parser::Event;

/// `cache` shares equal tokens and small nodes with every tree built through it.
pub(crate) fn build_tree(
    text: &str,
    raw: &[Token],
    inputs: &[Input],
    mut events: Vec<Event>,
    cache: &mut NodeCache,
) -> GreenNode {
    let mut significant = vec![false; raw.len()];
    // `raw` may end before the inputs do (a piece's lookahead is not its own).
    for input in inputs {
        if let Some(r) = input.raw.filter(|&r| (r as usize) < raw.len()) {
            significant[r as usize] = true;
        }
    }
    let mut sink = Sink { text, raw, significant, next_raw: 0, depth: 0, builder: GreenNodeBuilder::with_cache(cache) };
    let mut parents = Vec::new();
    for i in 0..events.len() {
        match std::mem::replace(&mut events[i], Event::Tombstone) {
            Event::Start { kind, forward_parent } => {
                // A node made by `precede` starts before the node it wraps.
                parents.push(kind);
                let mut idx = i;
                let mut fp = forward_parent;
                while let Some(distance) = fp {
                    idx += distance as usize;
                    fp = match std::mem::replace(&mut events[idx], Event::Tombstone) {
                        Event::Start { kind, forward_parent } => {
                            parents.push(kind);
                            forward_parent
                        }
                        _ => unreachable!("forward parent is not a start event"),
                    };
                }
                for kind in parents.drain(..).rev() {
                    sink.start(kind);
                }
            }
            Event::Finish => sink.finish(),
            Event::Token { input } => match inputs[input as usize] {
                Input { raw: Some(r), .. } => sink.token_through(r as usize),
                // The line break added at the end of a file without one takes
                // what trails the last token, as a real one would: a comment
                // there stays in its statement when a formatter adds the break.
                Input { kind: SyntaxKind::NEWLINE, raw: None, .. } => sink.trivia(),
                Input { raw: None, .. } => {}
            },
            Event::Tombstone => {}
        }
    }
    sink.builder.finish()
}

struct Sink<'a, 'c> {
    text: &'a str,
    raw: &'a [Token],
    significant: Vec<bool>,
    next_raw: usize,
    depth: usize,
    builder: GreenNodeBuilder<'c>,
}

impl Sink<'_, '_> {
    fn start(&mut self, kind: SyntaxKind) {
        if self.depth > 0 {
            self.trivia();
        }
        self.builder.start_node(kind.into());
        self.depth += 1;
    }

    fn finish(&mut self) {
        self.depth -= 1;
        if self.depth == 0 {
            // The root keeps whatever trails the last token.
            self.token_through(self.raw.len().wrapping_sub(1));
        }
        self.builder.finish_node();
    }

    /// Emits leading trivia up to the next significant token.
    fn trivia(&mut self) {
        while self.next_raw < self.raw.len() && !self.significant[self.next_raw] {
            self.emit(self.next_raw);
            self.next_raw += 1;
        }
    }

    /// Emits every token up to and including `last`.
    fn token_through(&mut self, last: usize) {
        while self.next_raw <= last && self.next_raw < self.raw.len() {
            self.emit(self.next_raw);
            self.next_raw += 1;
        }
    }

    fn emit(&mut self, index: usize) {
        let token = self.raw[index];
        self.builder.token(token.kind.into(), &self.text[token.range]);
    }
}
