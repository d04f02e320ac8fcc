//! What code lenses show: runnables for "Run" / "Debug" (the entry point and
//! every flow, where `sr run` would start them), the prompts a "Preview"
//! opens, and the definitions a references count goes on.

use std::path::{Path, PathBuf};

use sr_hir::start::{NoStart, run_start};
use sr_hir::{ItemKind, RootDatabase, file_items, program};

use crate::TextRange;
use crate::defs::item_focus;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Runnable {
    /// Where the lens goes: the item's name.
    pub range: TextRange,
    pub path: PathBuf,
    /// The agent or flow to start.
    pub target: String,
    /// The workload's entry point (running the file starts it).
    pub entry: bool,
}

/// Only where `sr run FILE --entry TARGET` starts ([`run_start`]): a file with
/// errors that stop a run, such as a library that uses its importer's
/// definitions, has none.
pub(crate) fn runnables(db: &RootDatabase, path: &Path) -> Vec<Runnable> {
    let Some(file) = db.file(path) else { return Vec::new() };
    let entry = match run_start(db, file, None) {
        Ok(entry) => Some(entry),
        Err(NoStart::NoEntryPoint) => None,
        Err(_) => return Vec::new(),
    };
    file_items(db, file)
        .iter()
        .filter(|&&item| Some(item) == entry || (item.kind(db) == ItemKind::Flow && item.owner(db).is_none()))
        .filter(|&&item| item.file(db) == file)
        .map(|&item| Runnable {
            range: item_focus(db, item),
            path: path.to_path_buf(),
            target: item.name(db).to_string(),
            entry: Some(item) == entry,
        })
        .collect()
}

/// The name of each agent, prompt and schema defined in `path` (a prompt
/// declared in parts, once): where a references count goes. The count is
/// [`crate::Analysis::find_references`] at the name, asked for only when
/// the editor shows the lens.
pub(crate) fn reference_lenses(db: &RootDatabase, path: &Path) -> Vec<TextRange> {
    let Some(file) = db.file(path) else { return Vec::new() };
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    for &item in file_items(db, file) {
        let kind = item.kind(db);
        if !matches!(kind, ItemKind::Agent | ItemKind::Prompt | ItemKind::Schema) || item.owner(db).is_some() {
            continue;
        }
        let Some(name) = sr_hir::item_name_range(db, item) else { continue };
        if seen.insert((kind, item.name(db).clone())) {
            out.push(name + item.offset(db));
        }
    }
    out
}

/// A prompt with a body written in this file, which `streetrace.previewPrompt` renders.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PreviewablePrompt {
    /// Where the lens goes: the prompt's name.
    pub range: TextRange,
    pub name: String,
}

pub(crate) fn previewable_prompts(db: &RootDatabase, path: &Path) -> Vec<PreviewablePrompt> {
    let Some(file) = db.file(path) else { return Vec::new() };
    let program = program(db, file);
    let mut out: Vec<PreviewablePrompt> = program
        .prompts
        .iter()
        .filter_map(|(name, prompt)| prompt.body.filter(|body| body.file(db) == file).map(|body| (name, body)))
        .map(|(name, body)| PreviewablePrompt { range: item_focus(db, body), name: name.to_string() })
        .collect();
    out.sort_by_key(|p| p.range.start());
    out
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use crate::tests::analysis;

    /// Each fixture file's runnables, as `//- PATH` then `"focus" target=… entry=…`.
    fn check(fixture: &str, expect: expect_test::Expect) {
        let (analysis, fixture) = analysis(fixture);
        let mut out = String::new();
        for (path, text) in &fixture.files {
            out.push_str(&format!("//- {path}\n"));
            for r in analysis.runnables(std::path::Path::new(path)).unwrap() {
                out.push_str(&format!("{:?} target={} entry={}\n", &text[r.range], r.target, r.entry));
            }
        }
        expect.assert_eq(&out);
    }

    #[test]
    fn entry_point_and_every_flow() {
        check(
            r#"
            prompt p: """s"""
            agent:
                instruction p
            flow refine:
                return 1
            flow report:
                return 2
            "#,
            expect![[r#"
                //- /main.sr
                "agent" target=default entry=true
                "refine" target=refine entry=false
                "report" target=report entry=false
            "#]],
        );
    }

    #[test]
    fn a_library_that_does_not_run_alone_has_none() {
        // `sr run agents.sr` (agent `writer`, or `--entry helper`) refuses:
        // `${topic}` is assigned only in main.sr (E0015).
        check(
            r#"
            //- /main.sr
            import ./agents.sr
            flow main:
                $topic = "x"
                $r = run helper
                return $r
            //- /agents.sr
            prompt plain: """Write"""
            agent writer:
                instruction plain
            prompt write: """Write about ${topic}"""
            flow helper:
                $r = call llm write
                return $r
            "#,
            expect![[r#"
                //- /main.sr
                "main" target=main entry=true
                //- /agents.sr
            "#]],
        );
    }

    #[test]
    fn a_library_that_runs_alone_keeps_its_lenses() {
        check(
            r#"
            //- /main.sr
            import ./agents.sr
            flow main:
                $r = run agent writer
                return $r
            //- /agents.sr
            prompt write: """Write"""
            agent writer:
                instruction write
            "#,
            expect![[r#"
                //- /main.sr
                "main" target=main entry=true
                //- /agents.sr
                "writer" target=writer entry=true
            "#]],
        );
    }

    #[test]
    fn errors_that_stop_a_run_remove_every_lens() {
        check(
            r#"
            flow main:
                run agent missing "x"
            flow other:
                return 1
            "#,
            expect![[r#"
                //- /main.sr
            "#]],
        );
    }

    /// Each lens of `/main.sr` as the name and its references count.
    fn check_counts(fixture: &str, expect: expect_test::Expect) {
        let (analysis, fixture) = analysis(fixture);
        let path = std::path::PathBuf::from("/main.sr");
        let text = fixture.text("/main.sr");
        let mut out = String::new();
        for range in analysis.reference_lenses(&path).unwrap() {
            let at = crate::FilePosition { path: path.clone(), offset: range.start() };
            let references = analysis.find_references(&at, false).unwrap();
            let places: Vec<String> =
                references.iter().map(|r| format!("{}@{:?}", r.path.display(), r.range)).collect();
            out.push_str(&format!("{:?} {} [{}]\n", &text[range], references.len(), places.join(", ")));
        }
        expect.assert_eq(&out);
    }

    #[test]
    fn references_counts_on_agents_prompts_and_schemas() {
        check_counts(
            r#"
            //- /main.sr
            import ./lib.sr
            schema Reply:
                text: string
            prompt greet expecting Reply: """Hi ${who}, ${tone}"""
            prompt greet using model "fast"
            prompt tone: """kindly"""
            model fast = anthropic/haiku
            agent helper:
                instruction greet
            agent:
                instruction greet
                delegate helper
            flow main:
                $who = "you"
                $r = run agent helper
                return $r
            //- /lib.sr
            prompt other expecting Reply: """x"""
            "#,
            expect![[r#"
                "Reply" 2 [/lib.sr@23..28, /main.sr@70..75]
                "greet" 2 [/main.sr@219..224, /main.sr@248..253]
                "tone" 1 [/main.sr@93..97]
                "helper" 2 [/main.sr@267..273, /main.sr@321..327]
            "#]],
        );
    }

    #[test]
    fn prompts_with_a_body_in_this_file() {
        let (analysis, fixture) = analysis(
            r#"
            //- /main.sr
            import ./lib.sr
            prompt greet: """Hi ${who}"""
            prompt greet expecting Reply
            prompt shared: """from here"""
            schema Reply:
                text: string
            //- /lib.sr
            prompt elsewhere: """not here"""
            "#,
        );
        let text = fixture.text("/main.sr");
        let prompts = analysis.previewable_prompts(std::path::Path::new("/main.sr")).unwrap();
        let out: Vec<String> = prompts.iter().map(|p| format!("{:?} {}", &text[p.range], p.name)).collect();
        expect![[r#"
            "greet" greet
            "shared" shared"#]]
        .assert_eq(&out.join("\n"));
    }
}
