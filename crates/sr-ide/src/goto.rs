//! Go to definition: from any name to the item (or first assignment) it names,
//! and from a schema field's use to its declaration.

use sr_hir::RootDatabase;
use sr_syntax::{TextRange, TextSize};

use crate::defs::{Symbol, file_occurrences, navigation_target, occurrence_at, resolve_item, variable_definition};
use crate::namespace::{analysis_program, analysis_programs};
use crate::symbol_kind::SymbolKind;
use crate::{FilePosition, NavigationTarget};

pub(crate) fn goto_definition(db: &RootDatabase, position: &FilePosition) -> Vec<NavigationTarget> {
    let Some(file) = db.file(&position.path) else { return Vec::new() };
    if let Some(field) = crate::field_refs::field_at(db, position) {
        return crate::field_refs::declaration(db, field.schema, &field.field)
            .map(|range| NavigationTarget {
                path: field.schema.file(db).path(db).clone(),
                name: field.field.to_string(),
                kind: SymbolKind::Field,
                full_range: range,
                focus_range: range,
            })
            .into_iter()
            .collect();
    }
    let occurrences = file_occurrences(db, file);
    let Some(occurrence) = occurrence_at(&occurrences, position.offset) else { return Vec::new() };
    let program = analysis_program(db, file);
    match &occurrence.symbol {
        Symbol::Item(kind, name) => {
            resolve_item(program, *kind, name).map(|item| navigation_target(db, item)).into_iter().collect()
        }
        Symbol::Variable(name) => analysis_programs(db, file)
            .find_map(|program| variable_definition(db, program, occurrence.item, name))
            .map(|def| NavigationTarget {
                path: def.item.file(db).path(db).clone(),
                name: name.to_string(),
                kind: SymbolKind::Variable,
                full_range: def.range,
                focus_range: def.range,
            })
            .into_iter()
            .collect(),
        Symbol::Import(path) => db
            .file(path)
            .map(|_| NavigationTarget {
                path: path.clone(),
                name: path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
                kind: SymbolKind::File,
                full_range: TextRange::empty(TextSize::from(0)),
                focus_range: TextRange::empty(TextSize::from(0)),
            })
            .into_iter()
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use expect_test::{Expect, expect};

    use crate::tests::{analysis, position, show};

    fn check(fixture: &str, expect: Expect) {
        let (analysis, fixture) = analysis(fixture);
        let targets = analysis.goto_definition(&position(&fixture)).unwrap();
        let out: Vec<String> = targets
            .iter()
            .map(|t| format!("{:?} {} focus {}", t.kind, t.name, show(&fixture, &t.path, t.focus_range)))
            .collect();
        expect.assert_eq(&out.join("\n"));
    }

    /// From each use of a schema field (`$f.note`, `${f.note}` in a string
    /// and in a prompt body) and from the declaration itself, to the declaration.
    #[test]
    fn a_schema_field_goes_to_its_declaration() {
        let fixture = |cursor: usize| {
            let spelled = ["note", "note", "note", "note"]
                .iter()
                .enumerate()
                .map(|(i, n)| if i == cursor { "no$0te" } else { n });
            let [declared, prompt, code, string]: [&str; 4] = spelled.collect::<Vec<_>>().try_into().unwrap();
            format!(
                "//- /types.sr\nschema Finding:\n    {declared}: string\nprompt one expecting Finding: \"\"\"One.\"\"\"\n\
                 agent reviewer:\n    instruction one\n//- /main.sr\nimport ./types.sr\n\
                 prompt explain: \"\"\"Explain ${{f.{prompt}}}.\"\"\"\nflow main:\n    $f = run agent reviewer\n    log $f.{code}\n\
                 \x20   log \"${{f.{string}}}\"\n    $e = call llm explain\n    return $e\n"
            )
        };
        for cursor in 0..4 {
            let (analysis, fixture) = analysis(&fixture(cursor));
            let targets = analysis.goto_definition(&position(&fixture)).unwrap();
            let out: Vec<String> = targets
                .iter()
                .map(|t| format!("{:?} {} focus {}", t.kind, t.name, show(&fixture, &t.path, t.focus_range)))
                .collect();
            assert_eq!(out, ["Field note focus /types.sr:20..24 \"note\""], "cursor {cursor}");
        }
    }

    #[test]
    fn executor_from_an_agent() {
        check(
            r#"
            executor sandbox:
                backend: bubblewrap
            agent coder:
                instruction p
                executor sand$0box
            "#,
            expect![[r#"Executor sandbox focus /main.sr:9..16 "sandbox""#]],
        );
    }

    #[test]
    fn agents_from_delegate_use_and_run_agent() {
        check(
            r#"
            agent lead:
                instruction p
                delegate hel$0per
            agent helper:
                instruction p
            prompt p: """x"""
            "#,
            expect![[r#"Agent helper focus /main.sr:56..62 "helper""#]],
        );
        check(
            r#"
            agent lead:
                instruction p
                use a, hel$0per
            agent helper:
                instruction p
            "#,
            expect![[r#"Agent helper focus /main.sr:54..60 "helper""#]],
        );
        check(
            r#"
            agent helper:
                instruction p
            flow main:
                $x = run agent help$0er with "hi"
            "#,
            expect![[r#"Agent helper focus /main.sr:6..12 "helper""#]],
        );
    }

    #[test]
    fn prompts_from_instruction_prompt_call_and_interpolation() {
        check(
            r#"
            prompt greet: """Hello"""
            agent a:
                instruction gr$0eet
            "#,
            expect![[r#"Prompt greet focus /main.sr:7..12 "greet""#]],
        );
        check(
            r#"
            prompt greet: """Hello"""
            agent a:
                instruction greet
                prompt gree$0t
            "#,
            expect![[r#"Prompt greet focus /main.sr:7..12 "greet""#]],
        );
        check(
            r#"
            prompt greet: """Hello"""
            flow main:
                $r = call llm greet$0 with "x"
            "#,
            expect![[r#"Prompt greet focus /main.sr:7..12 "greet""#]],
        );
        check(
            r#"
            prompt part: """Be nice."""
            prompt whole: """${pa$0rt} and more"""
            "#,
            expect![[r#"Prompt part focus /main.sr:7..11 "part""#]],
        );
    }

    #[test]
    fn tools_models_schemas_policies_and_flows() {
        check(
            r#"
            tool fs = builtin streetrace.fs
            agent a:
                instruction p
                tools f$0s
            "#,
            expect![[r#"Tool fs focus /main.sr:5..7 "fs""#]],
        );
        check(
            r#"
            model fast = anthropic/haiku
            prompt p using model "fa$0st": """x"""
            "#,
            expect![[r#"Model fast focus /main.sr:6..10 "fast""#]],
        );
        check(
            r#"
            schema Finding:
                note: string
            prompt p expecting Find$0ing[]: """x"""
            "#,
            expect![[r#"Schema Finding focus /main.sr:7..14 "Finding""#]],
        );
        check(
            r#"
            schema Inner:
                x: int
            schema Outer:
                items: list[Inn$0er]?
            "#,
            expect![[r#"Schema Inner focus /main.sr:7..12 "Inner""#]],
        );
        check(
            r#"
            retry twice = 2 times
            timeout quick = 10 seconds
            agent a:
                instruction p
                retry tw$0ice
                timeout quick
            "#,
            expect![[r#"RetryPolicy twice focus /main.sr:6..11 "twice""#]],
        );
        check(
            r#"
            policy compact:
                strategy: summarize
            agent a:
                instruction p
                history comp$0act
            "#,
            expect![[r#"Policy compact focus /main.sr:7..14 "compact""#]],
        );
        check(
            r#"
            flow helper:
                return 1
            flow main:
                $x = run hel$0per
            "#,
            expect![[r#"Flow helper focus /main.sr:5..11 "helper""#]],
        );
    }

    #[test]
    fn variables_go_to_their_first_assignment() {
        check(
            r#"
            flow main:
                $x = 1
                $x = 2
                log "${x}"
                return $x$0
            "#,
            expect![[r#"Variable x focus /main.sr:16..17 "x""#]],
        );
        check(
            r#"
            flow main:
                $found = run agent a
                log "found ${fou$0nd}"
            "#,
            expect![[r#"Variable found focus /main.sr:16..21 "found""#]],
        );
        check(
            r#"
            flow main:
                $summary = "s"
            prompt p: """Use ${summ$0ary}"""
            "#,
            expect![[r#"Variable summary focus /main.sr:16..23 "summary""#]],
        );
        check(
            r#"
            flow main:
                for $item in [1, 2] do
                    log it$0em
                end
            "#,
            expect![[r#"Variable item focus /main.sr:20..24 "item""#]],
        );
    }

    #[test]
    fn across_files_and_imports() {
        check(
            r#"
            //- /main.sr
            import ./lib.sr
            agent a:
                instruction sha$0red
            //- /lib.sr
            prompt shared: """x"""
            "#,
            expect![[r#"Prompt shared focus /lib.sr:7..13 "shared""#]],
        );
        check(
            r#"
            //- /main.sr
            import ./li$0b.sr
            //- /lib.sr
            prompt shared: """x"""
            "#,
            expect![[r#"File lib.sr focus /lib.sr:0..0 """#]],
        );
    }

    #[test]
    fn nothing_for_undefined_names_and_keywords() {
        check(
            r#"
            agent a:
                instruction mis$0sing
            "#,
            expect![[""]],
        );
        check(
            r#"
            age$0nt a:
                instruction p
            "#,
            expect![[""]],
        );
    }

    #[test]
    fn tools_and_executors_from_calls_in_flows() {
        let defs = "tool fs = builtin streetrace.fs\nexecutor box:\n    backend: bubblewrap\n";
        check(
            &format!("{defs}flow main:\n    $t = f$0s.read_file(\"a.txt\")\n"),
            expect![[r#"Tool fs focus /main.sr:5..7 "fs""#]],
        );
        check(
            &format!("{defs}flow main:\n    $r = b$0ox.run(\"print(1)\")\n"),
            expect![[r#"Executor box focus /main.sr:41..44 "box""#]],
        );
        check(&format!("{defs}flow main:\n    $r = oth$0er.run(\"print(1)\")\n"), expect![[""]]);
    }
}
