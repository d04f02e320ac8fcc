//! The pieces of each file's last parse, by position. Interning a piece's text
//! (to find its memoized parse) hashes and compares the whole text, piece by
//! piece; after an edit, the pieces before and after the edited span are known
//! to be the same text at known positions, so [`parse`](crate::parse) takes
//! them from here instead. A cache only: a piece found here is the one
//! interning would find, so the parse does not depend on what is here.

use std::any::Any;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use sr_syntax::pieces::{PieceStarts, SharedEnds};
use sr_syntax::{TextRange, TextSize};

use crate::File;

/// The last parse's pieces of every file parsed, as [`Pieces`] of the parse's
/// piece type (opaque here: this module knows positions, not parses).
#[derive(Default)]
pub struct LastPieces(Mutex<HashMap<File, Arc<dyn Any + Send + Sync>>>);

/// A text, where its pieces may start, and the pieces its parse used, in order.
#[derive(Debug)]
pub(crate) struct Pieces<P> {
    text: Arc<str>,
    starts: PieceStarts,
    pieces: Vec<(Key, Arc<P>)>,
}

/// A piece's place: its range, where its lookahead ends, and whether it is
/// the file's first (its parse depends on those and on the text only).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Key {
    pub range: TextRange,
    pub lookahead_end: TextSize,
}

impl LastPieces {
    /// The pieces of `file`'s last parse, when they are of type `P`.
    pub(crate) fn get<P: Send + Sync + 'static>(&self, file: File) -> Option<Arc<Pieces<P>>> {
        let last = self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).get(&file).cloned()?;
        last.downcast().ok()
    }

    /// Drops `file`'s pieces (and the text they hold): it left the workspace.
    pub(crate) fn forget(&self, file: File) {
        self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).remove(&file);
    }

    pub(crate) fn set<P: Send + Sync + 'static>(&self, file: File, pieces: Arc<Pieces<P>>) {
        self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).insert(file, pieces);
    }
}

impl<P> Pieces<P> {
    pub(crate) fn new(text: Arc<str>, starts: PieceStarts, pieces: Vec<(Key, Arc<P>)>) -> Pieces<P> {
        Pieces { text, starts, pieces }
    }

    /// The pieces in order, with where each starts.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (TextSize, &Arc<P>)> {
        self.pieces.iter().map(|(key, parsed)| (key.range.start(), parsed))
    }
}

/// Finds, for a piece of a new text, the last parse's piece with the same
/// text, lookahead and firstness; and the new text's piece starts from the
/// last text's.
pub(crate) struct Reuse<'a, P> {
    last: &'a Pieces<P>,
    /// The new text.
    text: &'a str,
    shared: SharedEnds,
}

impl<'a, P> Reuse<'a, P> {
    pub(crate) fn new(last: &'a Pieces<P>, text: &'a str) -> Reuse<'a, P> {
        Reuse { last, text, shared: SharedEnds::between(&last.text, text) }
    }

    /// Where the pieces of the new text may start.
    pub(crate) fn starts(&self) -> PieceStarts {
        self.last.starts.edited(&self.last.text, self.text, self.shared)
    }

    /// The old piece for the new `key`, if its text and lookahead lie in the
    /// shared prefix or the shared suffix.
    pub(crate) fn find(&self, key: Key) -> Option<Arc<P>> {
        let (start, end) = (usize::from(key.range.start()), usize::from(key.lookahead_end));
        let old = if end <= self.shared.prefix {
            key
        } else if start >= self.text.len() - self.shared.suffix {
            let delta = self.text.len() as i64 - self.last.text.len() as i64;
            let shift = |offset: TextSize| TextSize::from((i64::from(u32::from(offset)) - delta) as u32);
            Key {
                range: TextRange::new(shift(key.range.start()), shift(key.range.end())),
                lookahead_end: shift(key.lookahead_end),
            }
        } else {
            return None;
        };
        // The first piece's parse differs from the same text's elsewhere.
        if (old.range.start() == 0.into()) != (key.range.start() == 0.into()) {
            return None;
        }
        let i = self.last.pieces.binary_search_by_key(&old.range.start(), |(k, _)| k.range.start()).ok()?;
        let (found, parsed) = &self.last.pieces[i];
        (*found == old).then(|| parsed.clone())
    }
}

#[cfg(test)]
mod tests {
    /// A file that leaves the workspace does not keep its last text alive here.
    #[test]
    fn a_removed_file_is_forgotten() {
        use crate::items::ParsedPiece;
        use crate::{Db, RootDatabase};
        let mut db = RootDatabase::default();
        let file = db.set_file("/w/a.sr", "flow main:\n    return 1\n");
        let _ = crate::items::parse(&db, file);
        assert!(db.last_pieces().get::<ParsedPiece>(file).is_some());
        db.remove_file("/w/a.sr");
        assert!(db.last_pieces().get::<ParsedPiece>(file).is_none());
    }
}
