//! Completion of `import ./…` paths: the workspace's `.sr` files under the
//! importing file's directory, other than the file itself.

use sr_hir::{File, RootDatabase};
use sr_syntax::{TextRange, TextSize};

use super::{CompletionItem, CompletionKind};
use crate::auto_import::local_path;

/// The paths to offer when the cursor is on the path of an `import` line
/// (`line` is the line up to the cursor, starting at `line_start`).
pub(super) fn complete(db: &RootDatabase, file: File, line: &str, line_start: usize) -> Option<Vec<CompletionItem>> {
    let rest = line.trim_start().strip_prefix("import")?;
    let typed = rest.trim_start();
    // `import streetrace` and `import pip://…` are no paths.
    if rest.len() == typed.len() || typed.contains(char::is_whitespace) || !(typed.is_empty() || typed.starts_with('.'))
    {
        return None;
    }
    let start = TextSize::from((line_start + line.len() - typed.len()) as u32);
    let replace_range = TextRange::new(start, TextSize::from((line_start + line.len()) as u32));
    let dir = file.path(db).parent()?;
    let mut paths: Vec<String> = db
        .files()
        .into_iter()
        .filter(|&other| other != file)
        .filter_map(|other| local_path(dir, other.path(db)))
        .filter(|path| path.starts_with(typed))
        .collect();
    paths.sort();
    if paths.is_empty() && typed.is_empty() {
        return None;
    }
    Some(
        paths
            .into_iter()
            .map(|path| CompletionItem {
                label: path.clone(),
                kind: CompletionKind::File,
                detail: None,
                documentation: None,
                insert_text: path,
                replace_range,
                snippet: false,
                additional_edits: Vec::new(),
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use expect_test::{Expect, expect};

    use crate::tests::{analysis, position};

    fn check(fixture: &str, expect: Expect) {
        let (analysis, fixture) = analysis(fixture);
        let items = analysis.completions(&position(&fixture), crate::CompletionConfig::default()).unwrap();
        let out: Vec<String> =
            items.iter().map(|c| format!("{:?} {} @{:?}", c.kind, c.label, c.replace_range)).collect();
        expect.assert_eq(&out.join("\n"));
    }

    #[test]
    fn import_paths_of_workspace_files_below_the_file() {
        let files = r#"
            //- /app/lib/tools.sr
            tool t = builtin streetrace.fs
            //- /app/agents.sr
            prompt p: """x"""
            //- /outside.sr
            prompt q: """y"""
            //- /app/main.sr
            import CURSOR
            "#;
        check(&files.replace("CURSOR", "./l$0"), expect!["File ./lib/tools.sr @7..10"]);
        check(&files.replace("CURSOR", "./zz$0"), expect![""]);
        check(
            &files.replace("CURSOR", "$0"),
            expect![[r#"
                File ./agents.sr @7..7
                File ./lib/tools.sr @7..7"#]],
        );
    }
}
