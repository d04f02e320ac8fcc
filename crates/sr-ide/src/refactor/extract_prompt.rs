//! Extract prompt: text selected in a prompt's body becomes a prompt of its
//! own, written right after, and the selection becomes `${NAME}`, which
//! composes it back (the runtime renders a composed prompt's body in its
//! place). The selection loses the whitespace at its ends, because a prompt's
//! body is its text without them; it may hold whole `${…}`s, never part of one.

use sr_hir::{File, ItemKind, RootDatabase};
use sr_syntax::TextRange;

use super::{BodyString, top_level_item_at, trimmed};
use crate::code_actions::ActionKind;
use crate::defs::{Symbol, item_range, occurrences_of_item};
use crate::namespace::{analysis_program, variable_scope};
use crate::{CodeAction, SourceChange, TextEdit};

pub(super) fn extract_prompt(db: &RootDatabase, file: File, selection: TextRange) -> Option<CodeAction> {
    if selection.is_empty() {
        return None;
    }
    let item = top_level_item_at(db, file, selection.start()).filter(|i| i.kind(db) == ItemKind::Prompt)?;
    let body = BodyString::of(db, item)?;
    let inner = body.inner()?;
    if !inner.contains_range(selection) {
        return None;
    }
    let text = file.text(db);
    let range = trimmed(text, selection)?;
    if cuts_an_interpolation(&text[inner], range - inner.start()) {
        return None;
    }
    let name = fresh_name(db, file, item, &format!("{}_part", item.name(db)));
    let quote = if body.quote().len() == 3 { body.quote() } else { "\"\"\"" };
    let definition = format!("\n\nprompt {name}: {quote}{}{quote}", &text[range]);
    let mut change = SourceChange::default();
    change.insert(file.path(db), TextEdit { range, new_text: format!("${{{name}}}") });
    change
        .insert(file.path(db), TextEdit { range: TextRange::empty(item_range(db, item).end()), new_text: definition });
    Some(CodeAction {
        title: format!("Extract prompt '{name}'"),
        kind: ActionKind::Extract,
        disabled: None,
        diagnostic: None,
        change,
        is_preferred: false,
    })
}

/// Whether `range` (in `body`) holds part of a `${…}` but not all of it.
fn cuts_an_interpolation(body: &str, range: TextRange) -> bool {
    let (start, end) = (usize::from(range.start()), usize::from(range.end()));
    let mut from = 0;
    while let Some(open) = body[from..].find("${").map(|i| from + i) {
        let close = body[open..].find('}').map_or(body.len(), |i| open + i + 1);
        let overlaps = start < close && end > open;
        if overlaps && !(start <= open && end >= close) {
            return true;
        }
        from = close;
    }
    false
}

/// `base`, or `base_2`, `base_3`, …: the first that names no item of the
/// program and no variable `item` shares (a `${NAME}` would read it first).
fn fresh_name(db: &RootDatabase, file: File, item: sr_hir::Item<'_>, base: &str) -> String {
    let program = analysis_program(db, file);
    let variables: Vec<_> = variable_scope(db, item)
        .into_iter()
        .flat_map(|i| occurrences_of_item(db, i))
        .filter_map(|o| match o.symbol {
            Symbol::Variable(name) => Some(name),
            _ => None,
        })
        .collect();
    let taken = |name: &str| {
        program.items.iter().any(|i| i.name(db).as_str() == name) || variables.iter().any(|v| v.as_str() == name)
    };
    let mut name = base.to_string();
    let mut n = 2;
    while taken(&name) {
        name = format!("{base}_{n}");
        n += 1;
    }
    name
}

#[cfg(test)]
mod tests {
    use super::cuts_an_interpolation;
    use crate::TextRange;

    #[test]
    fn a_selection_takes_whole_interpolations_only() {
        let body = "Hi ${who}, about ${topic}.";
        let cuts = |start: u32, end: u32| cuts_an_interpolation(body, TextRange::new(start.into(), end.into()));
        assert!(!cuts(0, 2));
        assert!(!cuts(0, 9));
        assert!(cuts(0, 6));
        assert!(cuts(5, 12));
        assert!(!cuts(3, 25));
    }
}
