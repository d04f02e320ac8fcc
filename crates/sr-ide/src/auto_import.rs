//! Auto-import: a name this file's program lacks but another workspace file
//! defines is fixed by importing that file. Local imports must read
//! `./path.sr` (language.md §2.2), so only files under this file's directory
//! are offered.

use std::path::Path;

use sr_hir::{File, ItemKind, Name, RootDatabase, file_items, program};
use sr_syntax::{DefinitionKind, TextSize};

use crate::TextEdit;

/// Each local import path of `path` with the file it names (for document links).
pub(crate) fn import_links(db: &RootDatabase, path: &Path) -> Vec<(sr_syntax::TextRange, std::path::PathBuf)> {
    let Some(file) = db.file(path) else { return Vec::new() };
    crate::defs::file_occurrences(db, file)
        .into_iter()
        .filter_map(|o| match o.symbol {
            crate::defs::Symbol::Import(target) => Some((o.range, target)),
            _ => None,
        })
        .collect()
}

/// For each workspace file (other than `file` and what it imports already)
/// defining `name` as `kind`: the `./relative.sr` path and the edit that
/// imports it.
pub(crate) fn imports_defining(
    db: &RootDatabase,
    file: File,
    kind: DefinitionKind,
    name: &str,
) -> Vec<(String, TextEdit)> {
    let kind = match kind {
        DefinitionKind::Prompt => ItemKind::Prompt,
        DefinitionKind::Agent => ItemKind::Agent,
        DefinitionKind::Tool => ItemKind::Tool,
    };
    importable(db, file, kind).into_iter().filter(|i| i.name.as_str() == name).map(|i| (i.path, i.edit)).collect()
}

/// A top-level definition in a workspace file `file` does not import yet.
pub(crate) struct Importable {
    pub name: Name,
    /// `./relative.sr`, as the import names it.
    pub path: String,
    /// Adds the import to `file`.
    pub edit: TextEdit,
}

/// Every definition of `kind` that importing another workspace file (under
/// `file`'s directory, not imported yet) would bring in, by file path.
pub(crate) fn importable(db: &RootDatabase, file: File, kind: ItemKind) -> Vec<Importable> {
    let imported = &program(db, file).files;
    let Some(dir) = file.path(db).parent() else { return Vec::new() };
    let at = import_insertion_point(db, file);
    let mut out = Vec::new();
    let mut files = db.files();
    files.sort_by_key(|f| f.path(db).clone());
    for other in files {
        if imported.contains(&other) {
            continue;
        }
        let Some(relative) = local_path(dir, other.path(db)) else { continue };
        let defined = file_items(db, other).iter().filter(|i| i.kind(db) == kind && i.owner(db).is_none());
        for item in defined {
            let name = item.name(db).clone();
            if out.iter().any(|i: &Importable| i.name == name && i.path == relative) {
                continue;
            }
            let edit = TextEdit { range: at, new_text: format!("import {relative}\n") };
            out.push(Importable { name, path: relative.clone(), edit });
        }
    }
    out
}

/// `./sub/x.sr` for a `.sr` file under `dir`.
pub(crate) fn local_path(dir: &Path, target: &Path) -> Option<String> {
    let relative = target.strip_prefix(dir).ok()?;
    let text = relative.to_str()?.replace('\\', "/");
    text.ends_with(".sr").then(|| format!("./{text}"))
}

/// Where a new import goes: after the last import, else after the version
/// line, else at the start.
pub(crate) fn import_insertion_point(db: &RootDatabase, file: File) -> sr_syntax::TextRange {
    let text = file.text(db);
    let items = file_items(db, file);
    let after =
        items.iter().filter(|i| i.kind(db) == ItemKind::Import).last().map(|&i| crate::defs::item_range(db, i).end());
    let after = after.or_else(|| {
        let first = text.lines().next()?;
        first.trim_start().starts_with("streetrace").then(|| TextSize::of(first))
    });
    let at = match after {
        // The start of the next line.
        Some(end) => {
            text[usize::from(end)..].find('\n').map_or(TextSize::of(&**text), |i| end + TextSize::from(i as u32 + 1))
        }
        None => TextSize::from(0),
    };
    sr_syntax::TextRange::empty(at)
}

/// How a file in `dir` imports `target`: `./x.sr`, `./sub/x.sr`, or
/// `./../x.sr` for a file outside `dir`. `None` when the path has a character
/// an import path cannot hold (the lexer takes `./[a-zA-Z0-9_-./]+.sr`).
pub(crate) fn relative_import(dir: &Path, target: &Path) -> Option<String> {
    use std::path::Component;
    let dir: Vec<Component<'_>> = dir.components().collect();
    let target: Vec<Component<'_>> = target.components().collect();
    let common = dir.iter().zip(&target).take_while(|(a, b)| a == b).count();
    let mut parts: Vec<&str> = vec![".."; dir.len() - common];
    for component in &target[common..] {
        parts.push(component.as_os_str().to_str()?);
    }
    let path = format!("./{}", parts.join("/"));
    let allowed = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/');
    (path.ends_with(".sr") && path.len() > "./.sr".len() && path.chars().all(allowed)).then_some(path)
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use expect_test::expect;

    use super::relative_import;

    #[test]
    fn relative_import_paths() {
        let cases = [
            ("/w", "/w/a.sr"),
            ("/w", "/w/lib/a.sr"),
            ("/w/app", "/w/lib/a.sr"),
            ("/w/app/deep", "/w/a.sr"),
            ("/w", "/w/with space.sr"),
            ("/w", "/w/notes.txt"),
        ];
        let out: Vec<String> = cases
            .iter()
            .map(|(dir, t)| format!("{dir} {t} -> {:?}", relative_import(Path::new(dir), Path::new(t))))
            .collect();
        expect![[r#"
            /w /w/a.sr -> Some("./a.sr")
            /w /w/lib/a.sr -> Some("./lib/a.sr")
            /w/app /w/lib/a.sr -> Some("./../lib/a.sr")
            /w/app/deep /w/a.sr -> Some("./../../a.sr")
            /w /w/with space.sr -> None
            /w /w/notes.txt -> None"#]]
        .assert_eq(&out.join("\n"));
    }

    use crate::tests::{analysis, show};

    #[test]
    fn import_paths_link_to_their_files() {
        let (analysis, fixture) = analysis(
            r#"
            //- /app/main.sr
            import ./lib/a.sr
            import streetrace
            import ./missing.sr
            "#,
        );
        let path = std::path::Path::new("/app/main.sr");
        let links: Vec<String> = analysis
            .document_links(path)
            .unwrap()
            .into_iter()
            .map(|(range, target)| format!("{} -> {}", show(&fixture, path, range), target.display()))
            .collect();
        expect![[r#"
            /app/main.sr:7..17 "./lib/a.sr" -> /app/lib/a.sr
            /app/main.sr:43..55 "./missing.sr" -> /app/missing.sr"#]]
        .assert_eq(&links.join("\n"));
    }
}
