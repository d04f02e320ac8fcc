//! Whether a new name is taken. Renaming onto an existing name would merge two
//! things silently: two agents become a duplicate (E0003), two prompts merge,
//! two variables of one namespace become one. Each refusal names what has the
//! name already and where.

use sr_hir::{Item, ItemKind, RootDatabase, program};

use super::{RenameError, is_builtin};
use crate::defs::{Occurrence, Symbol, occurrences_of_item, resolve_item};
use crate::namespace::{describe, variable_scope};

pub(super) fn check(db: &RootDatabase, target: &Occurrence<'_>, new_name: &str) -> Result<(), RenameError> {
    let taken = |what: String| Err(RenameError::Conflict(format!("'{new_name}' is already {what}")));
    match &target.symbol {
        Symbol::Item(_, old) | Symbol::Variable(old) if old.as_str() == new_name => Ok(()),
        Symbol::Item(kind, old) => {
            let file = target.item.file(db);
            let Some(definition) = resolve_item(program(db, file), *kind, old) else { return Ok(()) };
            for root in db.files() {
                let program = program(db, root);
                if !program.items.contains(&definition) {
                    continue;
                }
                if let Some(existing) = program.lookup(*kind, new_name) {
                    return taken(located(db, existing));
                }
                // `${name}` reads a variable before a prompt of that name.
                if *kind == ItemKind::Prompt
                    && let Some(item) = program.items.iter().find(|&&i| has_variable(db, i, new_name))
                {
                    return taken(format!("a variable in {}", located(db, *item)));
                }
            }
            Ok(())
        }
        Symbol::Variable(_) => {
            if is_builtin(new_name) {
                return taken("a built-in variable".to_string());
            }
            let scope = variable_scope(db, target.item);
            if let Some(item) = scope.iter().find(|&&i| has_variable(db, i, new_name)) {
                return taken(format!("a variable in {}", located(db, *item)));
            }
            for item in scope {
                if let Some(prompt) = program(db, item.file(db)).lookup(ItemKind::Prompt, new_name) {
                    return taken(located(db, prompt));
                }
            }
            Ok(())
        }
        Symbol::Import(_) => Ok(()),
    }
}

fn has_variable(db: &RootDatabase, item: Item<'_>, name: &str) -> bool {
    occurrences_of_item(db, item).iter().any(|o| matches!(&o.symbol, Symbol::Variable(n) if n.as_str() == name))
}

/// `agent 'helper' (/lib.sr:3)`, lines counted from 1.
pub(super) fn located(db: &RootDatabase, item: Item<'_>) -> String {
    let file = item.file(db);
    let line = sr_hir::line_index(db, file).line_col(crate::defs::item_focus(db, item).start()).line + 1;
    format!("{} ({}:{line})", describe(db, item), file.path(db).display())
}
