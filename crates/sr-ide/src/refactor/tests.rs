//! `check(fixture, expect)` for the refactors: the actions offered at the
//! cursor or selection of `/main.sr`, each with the files it writes; every
//! written file is checked to be as `sr fmt` leaves it and, with the change
//! applied, the workspace to have no diagnostic it did not have before.

use std::path::{Path, PathBuf};

use expect_test::{Expect, expect};

use crate::tests::analysis;
use crate::{AnalysisHost, CodeAction, DiagnosticsMode, FileRange, TextRange};

fn check(fixture: &str, expect: Expect) {
    let (analysis, fixture) = analysis(fixture);
    let (file, start, end) = fixture.range.unwrap_or_else(|| {
        let (file, at) = fixture.cursor.expect("a `$0` cursor");
        (file, at, at)
    });
    let path = PathBuf::from(&fixture.files[file].0);
    let frange = FileRange { path: path.clone(), range: TextRange::new(start.into(), end.into()) };
    let actions: Vec<CodeAction> =
        analysis.code_actions(&frange).unwrap().into_iter().filter(|a| a.diagnostic.is_none()).collect();
    let mut out = String::new();
    for action in actions {
        out.push_str(&format!("# {} ({:?})\n", action.title, action.kind));
        if let Some(reason) = &action.disabled {
            out.push_str(&format!("disabled: {reason}\n"));
            assert_eq!(action.change, crate::SourceChange::default());
            continue;
        }
        let mut host = AnalysisHost::new();
        let mut written = Vec::new();
        for (file, text) in &fixture.files {
            let mut text = text.clone();
            if let Some((_, edits)) = action.change.edits.iter().find(|(p, _)| p == Path::new(file)) {
                for edit in edits.iter().rev() {
                    text.replace_range(std::ops::Range::<usize>::from(edit.range), &edit.new_text);
                }
                written.push((file.clone(), text.clone()));
            }
            host.set_file(Path::new(file), text.as_str());
        }
        for (file, text) in &action.change.new_files {
            assert!(analysis.file_text(file).unwrap().is_none(), "{} exists", file.display());
            host.set_file(file, text.as_str());
            written.push((format!("{} (new)", file.display()), text.clone()));
        }
        for (file, text) in &written {
            assert_eq!(sr_fmt::format_edits(text).unwrap(), vec![], "{file} is not as `sr fmt` leaves it");
            out.push_str(&format!("//- {file}\n{text}"));
        }
        let codes = |analysis: &crate::Analysis| {
            let mut codes = Vec::new();
            for file in analysis.files().unwrap() {
                let diagnostics = analysis.diagnostics(&file, DiagnosticsMode::Default).unwrap();
                codes.extend(diagnostics.iter().map(|d| d.code().to_string()));
            }
            codes.sort();
            codes
        };
        let (before, after) = (codes(&analysis), codes(&host.analysis()));
        assert!(after.iter().all(|code| before.contains(code)), "{after:?} after, {before:?} before");
        assert!(after.len() <= before.len(), "{after:?} after, {before:?} before");
    }
    expect.assert_eq(&out);
}

#[test]
fn extracts_selected_text_into_a_composed_prompt() {
    check(
        r#"
        prompt write: """Write about ${topic}.$0 Keep it short and ${tone}. $0Sign it."""

        prompt tone: """warm"""
        agent:
            instruction write
        flow main:
            $topic = "rust"
            $r = run agent default
            return $r
        "#,
        expect![[r##"
            # Extract prompt 'write_part' (Extract)
            //- /main.sr
            prompt write: """Write about ${topic}. ${write_part} Sign it."""

            prompt write_part: """Keep it short and ${tone}."""

            prompt tone: """warm"""
            agent:
                instruction write
            flow main:
                $topic = "rust"
                $r = run agent default
                return $r
            # Move prompt 'write' to write.sr (Move)
            disabled: it uses prompt 'tone', which stays in this file (the files would import each other)
        "##]],
    );
}

#[test]
fn extract_never_cuts_an_interpolation() {
    check(
        r#"
        prompt write: """Write about ${to$0pic}. Keep$0 it short."""
        "#,
        expect![[r##"
            # Move prompt 'write' to write.sr (Move)
            //- /main.sr
            import ./write.sr
            //- /write.sr (new)
            prompt write: """Write about ${topic}. Keep it short."""
        "##]],
    );
}

#[test]
fn extract_picks_a_name_nothing_holds() {
    check(
        r#"
        prompt write: """
            $0Be brief.$0
            Be ${write_part}.
        """
        flow main:
            $write_part = "kind"
            $r = call llm write
            return $r
        prompt write_part_2: """x"""
        "#,
        expect![[r##"
            # Extract prompt 'write_part_3' (Extract)
            //- /main.sr
            prompt write: """
                ${write_part_3}
                Be ${write_part}.
            """

            prompt write_part_3: """Be brief."""
            flow main:
                $write_part = "kind"
                $r = call llm write
                return $r
            prompt write_part_2: """x"""
        "##]],
    );
}

#[test]
fn inlines_a_prompt_composed_once() {
    check(
        r#"
        prompt write: """Write about ${topic}. ${sty$0le}"""

        # How to write.
        prompt style: """Keep it short and ${tone}."""

        flow main:
            $topic = "rust"
            $tone = "warm"
            $r = call llm write
            return $r
        "#,
        expect![[r##"
            # Inline prompt 'style' (Inline)
            //- /main.sr
            prompt write: """Write about ${topic}. Keep it short and ${tone}."""

            flow main:
                $topic = "rust"
                $tone = "warm"
                $r = call llm write
                return $r
            # Move prompt 'write' to write.sr (Move)
            disabled: it uses prompt 'style', which stays in this file (the files would import each other)
        "##]],
    );
}

#[test]
fn inlines_from_the_definition_in_another_file() {
    check(
        r#"
        //- /main.sr
        import ./style.sr
        prompt write: """Write. ${style}"""
        flow main:
            $r = call llm write
            return $r
        //- /style.sr
        prompt st$0yle: """Be brief."""
        "#,
        expect![[r##"
            # Inline prompt 'style' (Inline)
            //- /main.sr
            import ./style.sr
            prompt write: """Write. Be brief."""
            flow main:
                $r = call llm write
                return $r
            //- /style.sr
            # Move prompt 'style' to style.sr (Move)
            disabled: style.sr exists already
        "##]],
    );
}

#[test]
fn no_inline_for_a_prompt_used_twice_or_not_plain() {
    check(
        r#"
        prompt a: """${sty$0le} and ${style}"""
        prompt style: """Be brief."""
        "#,
        expect![[r#"
            # Move prompt 'a' to a.sr (Move)
            disabled: it uses prompt 'style', which stays in this file (the files would import each other)
        "#]],
    );
    check(
        r#"
        schema Reply:
            text: string
        prompt a: """${sty$0le}"""
        prompt style expecting Reply: """Be brief."""
        "#,
        expect![[r#"
            # Move prompt 'a' to a.sr (Move)
            disabled: it uses prompt 'style', which stays in this file (the files would import each other)
        "#]],
    );
    check(
        r#"
        prompt a: """${a$0}"""
        "#,
        expect![[r##"
            # Move prompt 'a' to a.sr (Move)
            //- /main.sr
            import ./a.sr
            //- /a.sr (new)
            prompt a: """${a}"""
        "##]],
    );
    check(
        r#"
        prompt a: """x"""
        agent:
            instruction $0a
        "#,
        expect![[r#""#]],
    );
}

#[test]
fn moves_an_item_to_a_new_file_with_the_imports_it_needs() {
    check(
        r#"
        //- /w/main.sr
        streetrace v1
        import ./defs.sr

        # Writes replies.
        prompt wr$0ite using model "fast" expecting Reply: """Write."""

        agent:
            instruction write
        //- /w/defs.sr
        model fast = anthropic/haiku
        schema Reply:
            text: string
        "#,
        expect![[r##"
            # Move prompt 'write' to write.sr (Move)
            //- /w/main.sr
            streetrace v1
            import ./defs.sr
            import ./write.sr

            agent:
                instruction write
            //- /w/write.sr (new)
            import ./defs.sr

            # Writes replies.
            prompt write using model "fast" expecting Reply: """Write."""
        "##]],
    );
    check(
        r#"
        //- /w/main.sr
        import ./prompts.sr
        agent:
            instruction p
            delegate helper

        agent hel$0per:
            instruction q
            on input do
                log "in"
            end
        //- /w/prompts.sr
        prompt p: """x"""
        prompt q: """y"""
        "#,
        expect![[r##"
            # Move agent 'helper' to helper.sr (Move)
            //- /w/main.sr
            import ./prompts.sr
            import ./helper.sr
            agent:
                instruction p
                delegate helper
            //- /w/helper.sr (new)
            import ./prompts.sr

            agent helper:
                instruction q
                on input do
                    log "in"
                end
        "##]],
    );
}

#[test]
fn moving_refuses_what_would_make_an_import_cycle() {
    check(
        r#"
        //- /w/main.sr
        prompt p: """x"""
        agent hel$0per:
            instruction p
        agent:
            instruction p
            delegate helper
        "#,
        expect![[r#"
            # Move agent 'helper' to helper.sr (Move)
            disabled: it uses prompt 'p', which stays in this file (the files would import each other)
        "#]],
    );
    check(
        r#"
        //- /w/main.sr
        import ./lib.sr
        prompt p: """x"""
        agent:
            instruction p
            delegate helper
        //- /w/lib.sr
        agent hel$0per:
            instruction p
        "#,
        expect![[r#"
            # Move agent 'helper' to helper.sr (Move)
            disabled: it uses prompt 'p' from /w/main.sr, which imports this file (an import cycle)
        "#]],
    );
    check(
        r#"
        //- /w/main.sr
        prompt p$0: """x"""
        agent:
            instruction p
        //- /w/p.sr
        prompt q: """y"""
        "#,
        expect![[r#"
            # Move prompt 'p' to p.sr (Move)
            disabled: p.sr exists already
        "#]],
    );
}
