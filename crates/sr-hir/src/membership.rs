//! Which programs a file belongs to. A program is a root file (one no other
//! workspace file imports) and everything it imports; a file is analysed as
//! part of each program that includes it, and alone only when it is a root.
//! Files only import cycles reach are judged with one file of their cycle as
//! the root, so that a cycle is one program.

use std::collections::{BTreeSet, HashMap};
use std::path::PathBuf;

use crate::hir::{ImportSource, ItemData};
use crate::items::{ItemKind, file_items};
use crate::resolve::resolve_import;
use crate::{Db, File, item_data, program};

/// The roots of the programs `file` belongs to, in path order; `[file]` when
/// no program includes it.
#[salsa::tracked(returns(ref))]
pub fn programs_of(db: &dyn Db, file: File) -> Vec<File> {
    match memberships(db).get(&file) {
        Some(roots) => roots.clone(),
        None => vec![file],
    }
}

/// For every file some root's program includes, those roots in path order.
/// Files that only import cycles reach (every one is imported) get roots of
/// their own: the one whose program is largest first (in path order among
/// equals), so the files of a cycle are judged as one program.
#[salsa::tracked(returns(ref))]
fn memberships(db: &dyn Db) -> HashMap<File, Vec<File>> {
    let imported = imported_paths(db);
    let mut out: HashMap<File, Vec<File>> = HashMap::new();
    for (path, &root) in db.workspace().files(db) {
        if imported.contains(path) {
            continue;
        }
        for &file in &program(db, root).files {
            out.entry(file).or_default().push(root);
        }
    }
    let mut unreached: Vec<File> =
        db.workspace().files(db).values().copied().filter(|file| !out.contains_key(file)).collect();
    // Stable: equal sizes keep path order.
    unreached.sort_by_key(|&file| std::cmp::Reverse(program(db, file).files.len()));
    for root in unreached {
        if out.contains_key(&root) {
            continue;
        }
        for &file in &program(db, root).files {
            out.entry(file).or_default().push(root);
        }
    }
    out
}

/// Files some other workspace file imports: libraries, not workloads.
#[salsa::tracked(returns(ref))]
pub fn imported_paths(db: &dyn Db) -> BTreeSet<PathBuf> {
    let mut out = BTreeSet::new();
    for &file in db.workspace().files(db).values() {
        for &item in file_items(db, file) {
            if item.kind(db) != ItemKind::Import {
                continue;
            }
            if let ItemData::Import(import) = &*item_data(db, item)
                && let ImportSource::Local(relative) = &import.source
            {
                out.insert(resolve_import(db, file, relative));
            }
        }
    }
    out
}
