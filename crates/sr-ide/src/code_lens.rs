//! What code lenses show: runnables for "Run" / "Debug" (the entry point and
//! every flow), and the prompts a "Preview" opens.

use std::path::{Path, PathBuf};

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

pub(crate) fn runnables(db: &RootDatabase, path: &Path) -> Vec<Runnable> {
    let Some(file) = db.file(path) else { return Vec::new() };
    let entry = sr_hir::entry::entry_point(db, file).map(|e| e.item);
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

    #[test]
    fn entry_point_and_every_flow() {
        let (analysis, fixture) = analysis(
            r#"
            prompt p: """s"""
            agent:
                instruction p
            flow refine:
                return 1
            flow report:
                return 2
            "#,
        );
        let text = fixture.text("/main.sr");
        let runnables = analysis.runnables(std::path::Path::new("/main.sr")).unwrap();
        let out: Vec<String> =
            runnables.iter().map(|r| format!("{:?} target={} entry={}", &text[r.range], r.target, r.entry)).collect();
        expect![[r#"
            "agent" target=default entry=true
            "refine" target=refine entry=false
            "report" target=report entry=false"#]]
        .assert_eq(&out.join("\n"));
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
