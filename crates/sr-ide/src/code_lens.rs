//! Runnables for "Run" / "Debug" code lenses: the entry point and every flow.

use std::path::{Path, PathBuf};

use sr_hir::{ItemKind, RootDatabase, file_items};

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
}
