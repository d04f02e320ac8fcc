//! Move item to file: a top-level item (with its documentation comments)
//! goes to `NAME.sr` beside its file, which imports the new file. The new
//! file imports the files that define what the item uses. Refused, saying
//! why, when the item uses a definition of its own file or of a file that
//! imports it: the new file would have to import a file that imports it.

use std::path::{Path, PathBuf};

use sr_hir::{File, Item, ItemKind, RootDatabase, file_items};
use sr_syntax::{TextRange, TextSize};

use super::top_level_item_at;
use crate::auto_import::{import_insertion_point, relative_import};
use crate::code_actions::{ActionKind, removal_range};
use crate::defs::{Symbol, item_range, occurrences_of_item, resolve_item};
use crate::namespace::analysis_program;
use crate::{CodeAction, SourceChange, TextEdit};

pub(super) fn move_item(db: &RootDatabase, file: File, offset: TextSize) -> Option<CodeAction> {
    let item = top_level_item_at(db, file, offset)?;
    if matches!(item.kind(db), ItemKind::Import | ItemKind::Handler) || !on_first_line(db, item, offset) {
        return None;
    }
    let name = item.name(db).to_string();
    let path = file.path(db);
    let target = path.with_file_name(format!("{name}.sr"));
    let title = format!("Move {} '{name}' to {name}.sr", item.kind(db).describe());
    let refused = |reason: String| CodeAction {
        title: title.clone(),
        kind: ActionKind::Move,
        disabled: Some(reason),
        diagnostic: None,
        change: SourceChange::default(),
        is_preferred: false,
    };
    if db.file(&target).is_some() {
        return Some(refused(format!("{name}.sr exists already")));
    }
    if sr_hir::entry::entry_point(db, file).is_some_and(|e| e.item == item && !e.upstream) {
        return Some(refused("it is the entry point because it is the first agent of this file".to_string()));
    }
    let dir = path.parent().unwrap_or(Path::new(""));
    let imports = match imports_needed(db, file, item, dir) {
        Ok(imports) => imports,
        Err(reason) => return Some(refused(reason)),
    };
    let Some(import) = relative_import(dir, &target) else {
        return Some(refused(format!("{name}.sr cannot be written as an import path")));
    };
    let text = file.text(db);
    let removal = removal_range(db, item);
    // The item with its documentation, without the blank line removal takes.
    let moved = text[TextRange::new(removal.start(), item_range(db, item).end())].trim_start_matches('\n');
    let head: String = imports.iter().flat_map(|i| ["import ", i, "\n"]).collect();
    let separator = if head.is_empty() { "" } else { "\n" };
    let mut change = SourceChange::default();
    let at = import_insertion_point(db, file);
    change.insert(path, TextEdit { range: at, new_text: format!("import {import}\n") });
    change.insert(path, TextEdit { range: removal, new_text: String::new() });
    change.new_files.push((target, format!("{head}{separator}{moved}\n")));
    Some(CodeAction {
        title,
        kind: ActionKind::Move,
        disabled: None,
        diagnostic: None,
        change: change.sorted(),
        is_preferred: false,
    })
}

fn on_first_line(db: &RootDatabase, item: Item<'_>, offset: TextSize) -> bool {
    let text = item.file(db).text(db);
    let start = usize::from(item_range(db, item).start());
    let end = text[start..].find('\n').map_or(text.len(), |i| start + i);
    (start..=end).contains(&usize::from(offset))
}

/// The import paths (from `dir`) of the files defining what `item` and its
/// handlers use, or why the new file cannot import one of them.
fn imports_needed(db: &RootDatabase, file: File, item: Item<'_>, dir: &Path) -> Result<Vec<String>, String> {
    let program = analysis_program(db, file);
    let own_imports = &sr_hir::program(db, file).files;
    let range = item_range(db, item);
    let parts = file_items(db, file).iter().copied().filter(|i| range.contains_range(item_range(db, *i)));
    let mut files: Vec<PathBuf> = Vec::new();
    for part in parts {
        for occurrence in occurrences_of_item(db, part) {
            let Symbol::Item(kind, name) = &occurrence.symbol else { continue };
            if occurrence.def {
                continue;
            }
            let Some(definition) = resolve_item(program, *kind, name) else { continue };
            let defined_in = definition.file(db);
            let what = format!("{} '{name}'", kind.describe());
            if defined_in == file {
                if range.contains_range(item_range(db, definition)) {
                    continue;
                }
                return Err(format!("it uses {what}, which stays in this file (the files would import each other)"));
            }
            if !own_imports.contains(&defined_in) {
                let other = defined_in.path(db).display();
                return Err(format!("it uses {what} from {other}, which imports this file (an import cycle)"));
            }
            let path = defined_in.path(db).clone();
            if !files.contains(&path) {
                files.push(path);
            }
        }
    }
    files.iter().map(|f| relative_import(dir, f).ok_or_else(|| format!("{} cannot be imported", f.display()))).collect()
}
