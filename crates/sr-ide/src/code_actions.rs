//! Quick fixes for diagnostics under the cursor: import or create a missing
//! prompt, agent or tool; apply a "did you mean"; remove an unused definition.
//! They come from the diagnostic's kind (its data), never from its wording.

use sr_hir::diagnostic_kinds::Unused;
use sr_hir::{Diagnostic, DiagnosticKind, File, RootDatabase, file_diagnostics, item_at};
use sr_syntax::{DefinitionKind, Fix, TextRange, TextSize};

use crate::defs::item_range;
use crate::{FileRange, SourceChange, TextEdit};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ActionKind {
    QuickFix,
    /// Extract prompt.
    Extract,
    /// Inline prompt.
    Inline,
    /// Move an item to a file of its own.
    Move,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodeAction {
    pub title: String,
    pub kind: ActionKind,
    /// Why the action cannot be applied here (its change is then empty).
    pub disabled: Option<String>,
    /// The diagnostic the action fixes.
    pub diagnostic: Option<Diagnostic>,
    pub change: SourceChange,
    /// The one fix clearly right: the only "did you mean" candidate or the
    /// only file to import from, among the fixes that use what exists.
    pub is_preferred: bool,
}

pub(crate) fn code_actions(db: &RootDatabase, frange: &FileRange) -> Vec<CodeAction> {
    let Some(file) = db.file(&frange.path) else { return Vec::new() };
    let mut out = Vec::new();
    for diagnostic in file_diagnostics(db, file) {
        if diagnostic.range.intersect(frange.range).is_none() || !diagnostic.in_mode(false) {
            continue;
        }
        // Fixes that use what exists (a "did you mean", an import), then
        // fixes that create or remove something.
        let mut existing = Vec::new();
        let mut other = Vec::new();
        for fix in &diagnostic.fixes() {
            match fix {
                Fix::Replace(text) => existing.extend(replace(db, file, diagnostic, text)),
                Fix::Define(kind, name) => {
                    for (path, edit) in crate::auto_import::imports_defining(db, file, *kind, name) {
                        existing.push((format!("Import '{name}' from {path}"), edit));
                    }
                    other.push(define(db, file, *kind, name));
                }
            }
        }
        if let DiagnosticKind::Unused(Unused { kind, name }) = &diagnostic.kind
            && let Some(edit) = remove_unused(db, file, diagnostic)
        {
            other.push((format!("Remove unused {} '{name}'", kind.describe()), edit));
        }
        // One way to use what exists is clearly the fix; with two candidates
        // the user chooses, and creating or removing is never assumed.
        let preferred = existing.len() == 1;
        let existing = existing.into_iter().map(|action| (action, preferred));
        for ((title, edit), is_preferred) in existing.chain(other.into_iter().map(|action| (action, false))) {
            let mut change = SourceChange::default();
            change.insert(&frange.path, edit);
            out.push(CodeAction {
                title,
                kind: ActionKind::QuickFix,
                disabled: None,
                diagnostic: Some(diagnostic.clone()),
                change,
                is_preferred,
            });
        }
    }
    out
}

fn replace(db: &RootDatabase, file: File, diagnostic: &Diagnostic, text: &str) -> Option<(String, TextEdit)> {
    let current = file.text(db).get(std::ops::Range::<usize>::from(diagnostic.range))?;
    // Keep the quotes of `using model "x"`.
    let range = if current.len() >= 2 && current.starts_with(['"', '\'']) {
        TextRange::new(diagnostic.range.start() + TextSize::from(1), diagnostic.range.end() - TextSize::from(1))
    } else {
        diagnostic.range
    };
    Some((format!("Change to '{text}'"), TextEdit { range, new_text: text.to_string() }))
}

fn define(db: &RootDatabase, file: File, kind: DefinitionKind, name: &str) -> (String, TextEdit) {
    let (kind, definition) = match kind {
        DefinitionKind::Agent => (
            "agent",
            format!(
                "agent {name}:\n    instruction {name}_instruction\n\nprompt {name}_instruction: \"\"\"TODO: instructions for {name}.\"\"\"\n"
            ),
        ),
        DefinitionKind::Tool => ("tool", format!("tool {name} = builtin streetrace.fs_readonly\n")),
        DefinitionKind::Prompt => ("prompt", format!("prompt {name}: \"\"\"TODO: describe {name}.\"\"\"\n")),
    };
    let text = file.text(db);
    let separator = if text.is_empty() || text.ends_with("\n\n") {
        ""
    } else if text.ends_with('\n') {
        "\n"
    } else {
        "\n\n"
    };
    let end = TextSize::of(&**text);
    (
        format!("Create {kind} '{name}'"),
        TextEdit { range: TextRange::empty(end), new_text: format!("{separator}{definition}") },
    )
}

fn remove_unused(db: &RootDatabase, file: File, diagnostic: &Diagnostic) -> Option<TextEdit> {
    let item = item_at(db, file, diagnostic.range.start())?;
    Some(TextEdit { range: removal_range(db, item), new_text: String::new() })
}

/// What removing `item` takes: its lines, the comment lines right above
/// (its documentation) and one blank line beside them unless that would
/// join two paragraphs.
pub(crate) fn removal_range(db: &RootDatabase, item: sr_hir::Item<'_>) -> TextRange {
    let text = item.file(db).text(db);
    let range = item_range(db, item);
    let start = usize::from(range.start());
    let mut start = text[..start].rfind('\n').map_or(0, |i| i + 1);
    // The comment lines right above are its documentation: they go with it.
    while start > 0 {
        let above = text[..start - 1].rfind('\n').map_or(0, |i| i + 1);
        if !text[above..start].trim_start().starts_with('#') {
            break;
        }
        start = above;
    }
    let mut end = usize::from(range.end());
    end = text[end..].find('\n').map_or(text.len(), |i| end + i + 1);
    // Take one blank line with it unless that would join two paragraphs.
    let blank_before = start == 0 || text[..start].ends_with("\n\n");
    if blank_before && let Some(next) = text[end..].find('\n').filter(|&i| text[end..end + i].trim().is_empty()) {
        end += next + 1;
    }
    // The last item takes the blank line above it: a file ends in one newline.
    if blank_before && end == text.len() && start > 0 {
        start -= 1;
    }
    TextRange::new(TextSize::from(start as u32), TextSize::from(end as u32))
}

#[cfg(test)]
mod tests {
    use expect_test::{Expect, expect};

    use crate::tests::analysis;
    use crate::{ActionKind, FileRange, TextRange};

    fn check(fixture: &str, expect: Expect) {
        let (analysis, fixture) = analysis(fixture);
        let (start, end) = match fixture.range {
            Some((_, start, end)) => (start, end),
            None => (fixture.position().1, fixture.position().1),
        };
        crate::tests::at_every_offset(&analysis, &fixture, |analysis, at| {
            let frange = FileRange { path: at.path, range: TextRange::empty(at.offset) };
            let preferred = analysis.code_actions(&frange).unwrap().iter().filter(|a| a.is_preferred).count();
            assert!(preferred <= 1, "two preferred fixes at {frange:?}");
        });
        let frange = FileRange { path: "/main.sr".into(), range: TextRange::new(start.into(), end.into()) };
        let mut out = String::new();
        let quick_fixes =
            analysis.code_actions(&frange).unwrap().into_iter().filter(|a| a.kind == ActionKind::QuickFix);
        for action in quick_fixes {
            let mut text = fixture.text("/main.sr").to_string();
            for (_, edits) in &action.change.edits {
                for edit in edits.iter().rev() {
                    text.replace_range(std::ops::Range::<usize>::from(edit.range), &edit.new_text);
                }
            }
            let code = action.diagnostic.map(|d| d.code().to_string()).unwrap_or_default();
            let preferred = if action.is_preferred { " (preferred)" } else { "" };
            out.push_str(&format!("# {}{preferred} [{code}]\n{text}", action.title));
        }
        expect.assert_eq(&out);
    }

    #[test]
    fn creates_missing_prompt_agent_and_tool() {
        check(
            r#"
            agent:
                instruction gree$0ting
            "#,
            expect![[r##"
                # Create prompt 'greeting' [SR102]
                agent:
                    instruction greeting

                prompt greeting: """TODO: describe greeting."""
            "##]],
        );
        check(
            r#"
            prompt p: """x"""
            agent:
                instruction p
                delegate hel$0per
            "#,
            expect![[r##"
                # Create agent 'helper' [E0001]
                prompt p: """x"""
                agent:
                    instruction p
                    delegate helper

                agent helper:
                    instruction helper_instruction

                prompt helper_instruction: """TODO: instructions for helper."""
            "##]],
        );
        check(
            r#"
            prompt p: """x"""
            agent:
                instruction p
                tools sea$0rch
            "#,
            expect![[r##"
                # Create tool 'search' [E0001]
                prompt p: """x"""
                agent:
                    instruction p
                    tools search

                tool search = builtin streetrace.fs_readonly
            "##]],
        );
    }

    #[test]
    fn imports_a_name_another_workspace_file_defines() {
        check(
            r#"
            //- /main.sr
            streetrace v1
            prompt p: """x"""
            agent:
                instruction p
                delegate hel$0per
            //- /agents/helpers.sr
            agent helper:
                instruction q
            //- /other/../elsewhere.sr
            prompt helper: """not an agent"""
            "#,
            expect![[r##"
                # Import 'helper' from ./agents/helpers.sr (preferred) [E0001]
                streetrace v1
                import ./agents/helpers.sr
                prompt p: """x"""
                agent:
                    instruction p
                    delegate helper
                # Create agent 'helper' [E0001]
                streetrace v1
                prompt p: """x"""
                agent:
                    instruction p
                    delegate helper

                agent helper:
                    instruction helper_instruction

                prompt helper_instruction: """TODO: instructions for helper."""
            "##]],
        );
    }

    #[test]
    fn applies_did_you_mean() {
        check(
            r#"
            model fast = anthropic/haiku
            prompt p using model "fa$0s": """x"""
            agent:
                instruction p
            "#,
            expect![[r##"
                # Change to 'fast' (preferred) [E0001]
                model fast = anthropic/haiku
                prompt p using model "fast": """x"""
                agent:
                    instruction p
            "##]],
        );
    }

    #[test]
    fn removes_an_unused_definition() {
        check(
            r#"
            prompt p: """x"""

            # Documents `unused`,
            # over two lines.
            prompt un$0used: """y"""

            agent:
                instruction p
            "#,
            expect![[r##"
                # Remove unused prompt 'unused' [SR100]
                prompt p: """x"""

                agent:
                    instruction p
            "##]],
        );
    }

    #[test]
    fn two_files_to_import_from_prefer_neither() {
        check(
            r#"
            //- /main.sr
            prompt p: """x"""
            agent:
                instruction p
                delegate hel$0per
            //- /a.sr
            agent helper:
                instruction q
            //- /b.sr
            agent helper:
                instruction r
            "#,
            expect![[r##"
                # Import 'helper' from ./a.sr [E0001]
                import ./a.sr
                prompt p: """x"""
                agent:
                    instruction p
                    delegate helper
                # Import 'helper' from ./b.sr [E0001]
                import ./b.sr
                prompt p: """x"""
                agent:
                    instruction p
                    delegate helper
                # Create agent 'helper' [E0001]
                prompt p: """x"""
                agent:
                    instruction p
                    delegate helper

                agent helper:
                    instruction helper_instruction

                prompt helper_instruction: """TODO: instructions for helper."""
            "##]],
        );
    }
}
