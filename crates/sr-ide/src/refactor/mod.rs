//! Refactors offered as code actions: extract a prompt from a prompt's text,
//! inline a prompt used once, move an item to a file of its own. Each keeps
//! the program's meaning and leaves text `sr fmt` would not change.

mod extract_prompt;
mod inline_prompt;
mod move_item;
#[cfg(test)]
mod tests;

use sr_hir::{File, Item, RootDatabase, file_items};
use sr_syntax::{SyntaxKind, SyntaxToken, TextRange, TextSize};

use crate::{CodeAction, FileRange};

pub(crate) fn refactors(db: &RootDatabase, frange: &FileRange) -> Vec<CodeAction> {
    let Some(file) = db.file(&frange.path) else { return Vec::new() };
    let mut out = Vec::new();
    out.extend(extract_prompt::extract_prompt(db, file, frange.range));
    out.extend(inline_prompt::inline_prompt(db, file, frange.range.start()));
    out.extend(move_item::move_item(db, file, frange.range.start()));
    out
}

/// The top-level item whose text (without trailing trivia) contains `offset`.
fn top_level_item_at(db: &RootDatabase, file: File, offset: TextSize) -> Option<Item<'_>> {
    file_items(db, file)
        .iter()
        .copied()
        .filter(|item| item.owner(db).is_none())
        // The item's text with its trivia first: no syntax node is built for the others.
        .filter(|item| TextRange::at(item.offset(db), item.green(db).text_len()).contains_inclusive(offset))
        .find(|&item| crate::defs::item_range(db, item).contains_inclusive(offset))
}

/// A prompt's body string: the token, with its range in the file.
struct BodyString {
    token: SyntaxToken,
    range: TextRange,
}

impl BodyString {
    /// The body string of prompt `item`, if it has one.
    fn of(db: &RootDatabase, item: Item<'_>) -> Option<BodyString> {
        let token = sr_hir::item_syntax(db, item)
            .descendants()
            .find(|n| n.kind() == SyntaxKind::PROMPT_BODY)?
            .descendants_with_tokens()
            .filter_map(|e| e.into_token())
            .find(|t| matches!(t.kind(), SyntaxKind::TRIPLE_STRING | SyntaxKind::STRING | SyntaxKind::INTERP_STRING))?;
        let range = token.text_range() + item.offset(db);
        Some(BodyString { token, range })
    }

    /// The quotes around the text (`"""`, `'''`, `"` or `'`).
    fn quote(&self) -> &str {
        let text = self.token.text();
        let width = if self.token.kind() == SyntaxKind::TRIPLE_STRING { 3 } else { 1 };
        &text[..width.min(text.len())]
    }

    /// The text between the quotes; an unterminated string has none.
    fn inner(&self) -> Option<TextRange> {
        let width = TextSize::of(self.quote());
        let text = self.token.text();
        if text.len() < 2 * usize::from(width) || !text.ends_with(self.quote()) {
            return None;
        }
        Some(TextRange::new(self.range.start() + width, self.range.end() - width))
    }
}

/// `range` without the whitespace at its ends; `None` when nothing is left.
fn trimmed(text: &str, range: TextRange) -> Option<TextRange> {
    let selected = &text[range];
    let lead = selected.len() - selected.trim_start().len();
    let kept = selected.trim();
    (!kept.is_empty()).then(|| TextRange::at(range.start() + TextSize::from(lead as u32), TextSize::of(kept)))
}
