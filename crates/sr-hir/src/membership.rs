//! Which programs a file belongs to. A program is a root file (one no other
//! workspace file imports) and everything it imports; a file is analysed as
//! part of each program that includes it, and alone only when none does (a
//! root, or a file only an import cycle reaches).

use std::collections::HashMap;

use crate::diagnostics::imported_paths;
use crate::{Db, File, program};

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
    out
}
