//! Which programs a file belongs to. A program is a root file (one no other
//! workspace file imports) and everything it imports; a file is analysed as
//! part of each program that includes it, and alone only when it is a root.
//! Files only import cycles reach are judged with one file of their cycle as
//! the root, so that a cycle is one program.
//!
//! The roots of a file are found by walking up from it through its importers
//! ([`importers`], built from each file's own imports), so an edit re-reads
//! the edited file's imports and nothing of the files outside its programs.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;

use crate::hir::{ImportSource, ItemData};
use crate::items::{ItemKind, file_items};
use crate::resolve::resolve_import;
use crate::{Db, File, item_data, program};

/// The roots of the programs `file` belongs to, in path order; `[file]` when
/// no other file imports it.
#[salsa::tracked(returns(ref))]
pub fn programs_of(db: &dyn Db, file: File) -> Vec<File> {
    let importers = importers(db);
    let mut ancestors = vec![file];
    let mut seen: HashSet<File> = HashSet::from([file]);
    let mut roots = Vec::new();
    let mut i = 0;
    while i < ancestors.len() {
        let at = ancestors[i];
        match importers.get(at.path(db)) {
            Some(by) => {
                for &importer in by {
                    if seen.insert(importer) {
                        ancestors.push(importer);
                    }
                }
            }
            None => roots.push(at),
        }
        i += 1;
    }
    if roots.is_empty() {
        // Only cycles reach it: the ancestor whose program is largest, the
        // first by path among equals (every file of the cycle chooses the same).
        let largest = ancestors.iter().copied().max_by(|a, b| {
            let size = |f: &File| program(db, *f).files.len();
            size(a).cmp(&size(b)).then_with(|| b.path(db).cmp(a.path(db)))
        });
        roots.extend(largest);
    }
    roots.sort_by(|a, b| a.path(db).cmp(b.path(db)));
    roots
}

/// For each imported path, the workspace files that import it, in path order.
#[salsa::tracked(returns(ref))]
fn importers(db: &dyn Db) -> HashMap<PathBuf, Vec<File>> {
    let mut out: HashMap<PathBuf, Vec<File>> = HashMap::new();
    for &file in db.workspace().files(db).values() {
        for path in file_imports(db, file) {
            let by = out.entry(path.clone()).or_default();
            if by.last() != Some(&file) {
                by.push(file);
            }
        }
    }
    out
}

/// The local paths a file imports (`import ./x.sr`), resolved, in the order
/// written (whether the database has those files or not).
#[salsa::tracked(returns(ref))]
pub fn file_imports(db: &dyn Db, file: File) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for &item in file_items(db, file) {
        if item.kind(db) != ItemKind::Import {
            continue;
        }
        if let ItemData::Import(import) = &*item_data(db, item)
            && let ImportSource::Local(relative) = &import.source
        {
            out.push(resolve_import(db, file, relative));
        }
    }
    out
}

/// Whether some workspace file imports `path`: a library, not a workload.
pub fn is_imported(db: &dyn Db, path: &std::path::Path) -> bool {
    importers(db).contains_key(path)
}
