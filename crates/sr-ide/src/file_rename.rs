//! Imports kept right when files move (`workspace/willRenameFiles`): every
//! local import that names a moving file is rewritten from its importer's
//! directory, and a moving file's own imports from its new directory. The
//! edits are made on the files as they are before the move.

use std::path::{Path, PathBuf};

use sr_hir::hir::{ImportSource, ItemData};
use sr_hir::resolve::resolve_import;
use sr_hir::{ItemKind, RootDatabase, file_items, item_data, source_map};

use crate::auto_import::relative_import;
use crate::{SourceChange, TextEdit};

pub(crate) fn will_rename_files(db: &RootDatabase, renames: &[(PathBuf, PathBuf)]) -> SourceChange {
    let mut change = SourceChange::default();
    let mut files = db.files();
    files.sort_by_key(|f| f.path(db).clone());
    for file in files {
        let path = file.path(db);
        let moved_importer = moved(renames, path);
        let new_path = moved_importer.clone().unwrap_or_else(|| path.clone());
        let Some(dir) = new_path.parent() else { continue };
        for &item in file_items(db, file).iter().filter(|i| i.kind(db) == ItemKind::Import) {
            let ItemData::Import(import) = &*item_data(db, item) else { continue };
            let ImportSource::Local(relative) = &import.source else { continue };
            let target = resolve_import(db, file, relative);
            let moved_target = moved(renames, &target);
            if moved_importer.is_none() && moved_target.is_none() {
                continue;
            }
            let new_target = moved_target.unwrap_or(target);
            // A path an import cannot spell is left for the user to fix.
            let Some(new_relative) = relative_import(dir, &new_target) else { continue };
            if &new_relative != relative {
                let range = source_map(db, item).part(import.source_part) + item.offset(db);
                change.insert(path, TextEdit { range, new_text: new_relative });
            }
        }
    }
    change.sorted()
}

/// Where `path` goes: renamed itself, or inside a renamed directory.
fn moved(renames: &[(PathBuf, PathBuf)], path: &Path) -> Option<PathBuf> {
    renames.iter().find_map(|(old, new)| match path.strip_prefix(old) {
        Ok(rest) if rest.as_os_str().is_empty() => Some(new.clone()),
        Ok(rest) => Some(new.join(rest)),
        Err(_) => None,
    })
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use expect_test::{Expect, expect};

    use crate::tests::{analysis, applied};

    /// The files the renames edit, as they read after the edits.
    fn check(fixture: &str, renames: &[(&str, &str)], expect: Expect) {
        let (analysis, fixture) = analysis(fixture);
        let renames: Vec<_> = renames.iter().map(|(a, b)| (PathBuf::from(a), PathBuf::from(b))).collect();
        let change = analysis.will_rename_files(&renames).unwrap();
        expect.assert_eq(&applied(&fixture, &change));
    }

    #[test]
    fn importers_follow_a_renamed_file() {
        check(
            r#"
            //- /w/main.sr
            import ./agents.sr
            import ./lib/tools.sr
            flow main:
                return 1
            //- /w/lib/tools.sr
            import ./../agents.sr
            //- /w/agents.sr
            prompt p: """x"""
            "#,
            &[("/w/agents.sr", "/w/lib/writers.sr")],
            expect![[r#"
                //- /w/lib/tools.sr
                import ./writers.sr
                //- /w/main.sr
                import ./lib/writers.sr
                import ./lib/tools.sr
                flow main:
                    return 1
            "#]],
        );
    }

    #[test]
    fn a_moved_file_keeps_its_own_imports() {
        check(
            r#"
            //- /w/main.sr
            import ./lib/a.sr
            //- /w/lib/a.sr
            import ./b.sr
            import ./../c.sr
            //- /w/lib/b.sr
            prompt b: """x"""
            //- /w/c.sr
            prompt c: """y"""
            "#,
            &[("/w/lib/a.sr", "/w/a.sr")],
            expect![[r#"
                //- /w/lib/a.sr
                import ./lib/b.sr
                import ./c.sr
                //- /w/main.sr
                import ./a.sr
            "#]],
        );
    }

    #[test]
    fn a_renamed_directory_moves_every_file_in_it() {
        check(
            r#"
            //- /w/main.sr
            import ./lib/a.sr
            import ./lib/deep/b.sr
            //- /w/lib/a.sr
            import ./deep/b.sr
            import ./../other.sr
            //- /w/lib/deep/b.sr
            prompt b: """x"""
            //- /w/other.sr
            prompt o: """y"""
            //- /w/unrelated.sr
            import ./other.sr
            "#,
            &[("/w/lib", "/w/src/library")],
            expect![[r#"
                //- /w/lib/a.sr
                import ./deep/b.sr
                import ./../../other.sr
                //- /w/main.sr
                import ./src/library/a.sr
                import ./src/library/deep/b.sr
            "#]],
        );
    }

    #[test]
    fn a_name_an_import_cannot_spell_is_left_alone() {
        check(
            r#"
            //- /w/main.sr
            import ./a.sr
            import ./b.sr
            //- /w/a.sr
            prompt a: """x"""
            //- /w/b.sr
            prompt b: """x"""
            "#,
            &[("/w/a.sr", "/w/my agents.sr"), ("/w/b.sr", "/w/bee.sr")],
            expect![[r#"
                //- /w/main.sr
                import ./a.sr
                import ./bee.sr
            "#]],
        );
    }
}
