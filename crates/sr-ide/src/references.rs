//! Find references and document highlight.
//!
//! An item's references are searched in every file of the workspace: each file
//! resolves names in the first program that holds it (`analysis_program`: an
//! imported file sees its importer's definitions), and a reference
//! counts when it resolves to the same definition. A variable's references
//! are its spellings (`$x`, `x`, `${x}`) in every item of its namespace
//! (`namespace`): the flows, prompts and agents that share one run's variables.
//! A schema field's are its declaration and its uses through values of the
//! schema (`field_refs`).

use sr_hir::{Db, File, Item, RootDatabase};

use crate::defs::{Occurrence, Symbol, file_occurrences, occurrence_at, occurrences_of_item, resolve_item};
use crate::namespace::{analysis_program, variable_scope};
use crate::{FilePosition, FileRange, TextRange};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HighlightAccess {
    /// A definition or an assignment.
    Write,
    Read,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Highlight {
    pub range: TextRange,
    pub access: HighlightAccess,
}

/// Every occurrence (in any file) that names what the occurrence at
/// `position` names, with its file.
pub(crate) fn related_occurrences<'db>(
    db: &'db RootDatabase,
    position: &FilePosition,
) -> Option<(Occurrence<'db>, Vec<(File, Occurrence<'db>)>)> {
    let file = db.file(&position.path)?;
    let occurrences = file_occurrences(db, file);
    let target = occurrence_at(&occurrences, position.offset)?.clone();
    let found = match &target.symbol {
        Symbol::Item(kind, name) => {
            let definition = resolve_item(analysis_program(db, file), *kind, name)?;
            let mut out = Vec::new();
            for other in db.files() {
                if !analysis_program(db, other).items.contains(&definition) {
                    continue;
                }
                let occurrences = if other == file { occurrences.clone() } else { file_occurrences(db, other) };
                out.extend(
                    occurrences
                        .into_iter()
                        .filter(|o| o.symbol == target.symbol && same_definition(db, other, o, definition))
                        .map(|o| (other, o)),
                );
            }
            out
        }
        Symbol::Variable(_) => variable_scope(db, target.item)
            .into_iter()
            .flat_map(|item| occurrences_of_item(db, item).into_iter().map(move |o| (item.file(db), o)))
            .filter(|(_, o)| o.symbol == target.symbol)
            .collect(),
        Symbol::Import(_) => vec![(file, target.clone())],
    };
    Some((target, found))
}

fn same_definition(db: &dyn Db, file: File, occurrence: &Occurrence<'_>, definition: Item<'_>) -> bool {
    let Symbol::Item(kind, name) = &occurrence.symbol else { return false };
    if occurrence.def {
        // A definition site names itself (also a duplicate or a merged prompt part).
        return occurrence.item.kind(db) == definition.kind(db) && occurrence.item.name(db) == definition.name(db);
    }
    resolve_item(analysis_program(db, file), *kind, name) == Some(definition)
}

pub(crate) fn find_references(db: &RootDatabase, position: &FilePosition, include_declaration: bool) -> Vec<FileRange> {
    if let Some(field) = crate::field_refs::field_at(db, position) {
        return crate::field_refs::references(db, field.schema, &field.field)
            .into_iter()
            .filter(|(_, r)| include_declaration || !r.def)
            .map(|(file, r)| FileRange { path: file.path(db).clone(), range: r.range })
            .collect();
    }
    let Some((_, found)) = related_occurrences(db, position) else { return Vec::new() };
    let mut out: Vec<FileRange> = found
        .into_iter()
        .filter(|(_, o)| include_declaration || !o.def)
        .map(|(file, o)| FileRange { path: file.path(db).clone(), range: o.range })
        .collect();
    out.sort_by(|a, b| (&a.path, a.range.start()).cmp(&(&b.path, b.range.start())));
    out.dedup();
    out
}

pub(crate) fn highlight_related(db: &RootDatabase, position: &FilePosition) -> Vec<Highlight> {
    let Some(file) = db.file(&position.path) else { return Vec::new() };
    if let Some(field) = crate::field_refs::field_at(db, position) {
        return crate::field_refs::references(db, field.schema, &field.field)
            .into_iter()
            .filter(|(f, _)| *f == file)
            .map(|(_, r)| Highlight {
                range: r.range,
                access: if r.def { HighlightAccess::Write } else { HighlightAccess::Read },
            })
            .collect();
    }
    let Some((_, found)) = related_occurrences(db, position) else { return Vec::new() };
    let mut out: Vec<Highlight> = found
        .into_iter()
        .filter(|(f, _)| *f == file)
        .map(|(_, o)| Highlight {
            range: o.range,
            access: if o.def { HighlightAccess::Write } else { HighlightAccess::Read },
        })
        .collect();
    out.sort_by_key(|h| h.range.start());
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use expect_test::{Expect, expect};

    use crate::tests::{analysis, position, show};

    fn check(fixture: &str, expect: Expect) {
        let (analysis, fixture) = analysis(fixture);
        let refs = analysis.find_references(&position(&fixture), true).unwrap();
        let out: Vec<String> = refs.iter().map(|r| show(&fixture, &r.path, r.range)).collect();
        expect.assert_eq(&out.join("\n"));
    }

    fn check_highlight(fixture: &str, expect: Expect) {
        let (analysis, fixture) = analysis(fixture);
        let highlights = analysis.highlight_related(&position(&fixture)).unwrap();
        let path = std::path::PathBuf::from(fixture.position().0);
        let out: Vec<String> =
            highlights.iter().map(|h| format!("{:?} {}", h.access, show(&fixture, &path, h.range))).collect();
        expect.assert_eq(&out.join("\n"));
    }

    #[test]
    fn references_of_an_agent_across_files() {
        check(
            r#"
            //- /lib.sr
            agent hel$0per:
                instruction p
            prompt p: """x"""
            //- /main.sr
            import ./lib.sr
            agent lead:
                instruction p
                delegate helper
            flow main:
                $x = run agent helper
            //- /other.sr
            agent helper:
                instruction q
            "#,
            expect![[r#"
                /lib.sr:6..12 "helper"
                /main.sr:59..65 "helper"
                /main.sr:96..102 "helper""#]],
        );
    }

    #[test]
    fn an_imported_file_uses_its_importers_definition() {
        // lib.sr's `Reply` is main.sr's (lib.sr is read in main.sr's program),
        // asked from either file.
        check(
            r#"
            //- /main.sr
            import ./lib.sr
            schema Re$0ply:
                text: string
            prompt main_prompt expecting Reply: """x"""
            //- /lib.sr
            prompt other expecting Reply: """y"""
            "#,
            expect![[r#"
                /lib.sr:23..28 "Reply"
                /main.sr:23..28 "Reply"
                /main.sr:76..81 "Reply""#]],
        );
        check(
            r#"
            //- /main.sr
            import ./lib.sr
            schema Reply:
                text: string
            prompt main_prompt expecting Reply: """x"""
            //- /lib.sr
            prompt other expecting Re$0ply: """y"""
            "#,
            expect![[r#"
                /lib.sr:23..28 "Reply"
                /main.sr:23..28 "Reply"
                /main.sr:76..81 "Reply""#]],
        );
    }

    #[test]
    fn references_of_a_prompt_include_declarations_and_interpolations() {
        check(
            r#"
            prompt p expecting S
            prompt p: """body"""
            prompt q: """${p$0} more"""
            agent a:
                instruction p
            flow main:
                $r = call llm p
            "#,
            expect![[r#"
                /main.sr:7..8 "p"
                /main.sr:28..29 "p"
                /main.sr:57..58 "p"
                /main.sr:93..94 "p"
                /main.sr:124..125 "p""#]],
        );
    }

    #[test]
    fn references_of_a_tool_include_its_function_calls_in_flows() {
        check(
            r#"
            tool f$0s = builtin streetrace.fs
            agent a:
                instruction p
                tools fs
            prompt p: """x"""
            flow main:
                $t = fs.read_file("a.txt")
                fs.write_file({path: "b.txt", content: upper($t)})
                return len(fs.list_directory("."))
            "#,
            expect![[r#"
                /main.sr:5..7 "fs"
                /main.sr:69..71 "fs"
                /main.sr:110..112 "fs"
                /main.sr:136..138 "fs"
                /main.sr:202..204 "fs""#]],
        );
    }

    #[test]
    fn references_of_a_variable_stay_in_its_flow() {
        check(
            r#"
            flow main:
                $x = 1
                log "${x}"
                return x$0
            flow other:
                $x = 2
            "#,
            expect![[r#"
                /main.sr:16..17 "x"
                /main.sr:33..34 "x"
                /main.sr:48..49 "x""#]],
        );
    }

    #[test]
    fn highlight_marks_definitions_as_writes() {
        check_highlight(
            r#"
            model fa$0st = anthropic/haiku
            prompt p using model "fast": """x"""
            flow main:
                $r = call llm p using model "fast"
            "#,
            expect![[r#"
                Write /main.sr:6..10 "fast"
                Read /main.sr:51..55 "fast"
                Read /main.sr:110..114 "fast""#]],
        );
        check_highlight(
            r#"
            flow main:
                $count = 0
                $count = $co$0unt + 1
            "#,
            expect![[r#"
                Write /main.sr:16..21 "count"
                Write /main.sr:31..36 "count"
                Read /main.sr:40..45 "count""#]],
        );
    }

    #[test]
    fn references_of_a_variable_follow_the_run_namespace() {
        // `${topic}` in a prompt the flow calls, the sub-flow it runs, and
        // the `produces`/`prompt` of the agent it runs share one `ctx.vars`;
        // the unrelated flow `other` keeps its own `topic`.
        check(
            r#"
            prompt ask: """Tell me about ${topic} and ${len(topic)}."""
            prompt intro: """Intro: ${ask}"""
            agent writer:
                instruction ask
                prompt topic
                produces draft
            flow main:
                $top$0ic = "rust"
                run prepare
                $r = call llm intro
                run agent writer
                log "${topic}: ${draft}"
            flow prepare:
                $topic = "${topic}!"
            flow other:
                $topic = 1
            "#,
            expect![[r#"
                /main.sr:31..36 "topic"
                /main.sr:48..53 "topic"
                /main.sr:139..144 "topic"
                /main.sr:180..185 "topic"
                /main.sr:267..272 "topic"
                /main.sr:304..309 "topic"
                /main.sr:315..320 "topic""#]],
        );
    }

    #[test]
    fn references_of_a_variable_cross_into_an_imported_prompt_and_back() {
        let fixture = r#"
            //- /lib.sr
            prompt ask: """About ${to$0pic}"""
            //- /main.sr
            import ./lib.sr
            flow main:
                $topic = "rust"
                $r = call llm ask
            "#;
        check(
            fixture,
            expect![[r#"
                /lib.sr:23..28 "topic"
                /main.sr:32..37 "topic""#]],
        );
        check(
            &fixture.replace("${to$0pic}", "${topic}").replace("$topic = ", "$to$0pic = "),
            expect![[r#"
                /lib.sr:23..28 "topic"
                /main.sr:32..37 "topic""#]],
        );
    }
}
