//! Inline prompt: a prompt composed once (`${NAME}` in another prompt's body)
//! and declared nowhere else is written in its place and removed. Offered on
//! the prompt's name or on that `${NAME}`; a prompt with a model, an
//! `expecting`, an `inherit` or an escalation is not plain text and stays.

use sr_hir::hir::{ItemData, PromptData};
use sr_hir::{File, ItemKind, RootDatabase, item_data};
use sr_syntax::{TextRange, TextSize};

use super::{BodyString, trimmed};
use crate::code_actions::{ActionKind, removal_range};
use crate::defs::{Symbol, occurrence_at, occurrences_of_item};
use crate::namespace::analysis_program;
use crate::references::related_occurrences;
use crate::{CodeAction, FilePosition, SourceChange, TextEdit};

pub(super) fn inline_prompt(db: &RootDatabase, file: File, offset: TextSize) -> Option<CodeAction> {
    // Only the item under the cursor is read before it is known to name a prompt.
    let here = occurrences_of_item(db, sr_hir::item_at(db, file, offset)?);
    if !matches!(occurrence_at(&here, offset)?.symbol, Symbol::Item(ItemKind::Prompt, _)) {
        return None;
    }
    let position = FilePosition { path: file.path(db).clone(), offset };
    let (target, found) = related_occurrences(db, &position)?;
    let Symbol::Item(ItemKind::Prompt, name) = &target.symbol else { return None };
    let merged = analysis_program(db, file).prompts.get(name)?;
    let [definition] = merged.definitions[..] else { return None };
    let plain = matches!(
        &*item_data(db, definition),
        ItemData::Prompt(PromptData { body: Some(_), model: None, expecting: None, inherit: None, escalation: None })
    );
    if !plain {
        return None;
    }
    let uses: Vec<_> = found.iter().filter(|(_, o)| !o.def).collect();
    let [(use_file, use_at)] = uses[..] else { return None };
    // The use must be a whole `${NAME}` in a prompt's body.
    let use_text = use_file.text(db);
    let whole =
        TextRange::new(use_at.range.start().checked_sub(TextSize::from(2))?, use_at.range.end() + TextSize::from(1));
    if use_at.item.kind(db) != ItemKind::Prompt
        || use_at.item == definition
        || use_text.get(std::ops::Range::<usize>::from(whole))? != format!("${{{name}}}")
    {
        return None;
    }
    let host = BodyString::of(db, use_at.item)?;
    let body = BodyString::of(db, definition)?;
    let definition_text = definition.file(db).text(db);
    let inlined = trimmed(definition_text, body.inner()?).map_or("", |r| &definition_text[r]);
    // The text must not end the string it goes into.
    let closes = inlined.contains(host.quote()) || (host.quote().len() == 1 && inlined.contains('\n'));
    if closes || !host.inner()?.contains_range(whole) {
        return None;
    }
    let mut change = SourceChange::default();
    change.insert(use_file.path(db), TextEdit { range: whole, new_text: inlined.to_string() });
    let removal = TextEdit { range: removal_range(db, definition), new_text: String::new() };
    change.insert(definition.file(db).path(db), removal);
    Some(CodeAction {
        title: format!("Inline prompt '{name}'"),
        kind: ActionKind::Inline,
        disabled: None,
        diagnostic: None,
        change: change.sorted(),
        is_preferred: false,
    })
}
