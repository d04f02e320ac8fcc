//! Where a "Try" lens goes: each agent and each prompt with a body defined in
//! a file, run by `sr try ROOT KIND:NAME` (sr-hir's `playground`; the kind
//! tells a prompt from an agent or a flow of the same name). ROOT is the file
//! itself when it compiles alone, else the first program importing it that
//! compiles: an imported file's items are tried in their importer's program.

use std::path::{Path, PathBuf};

use sr_hir::start::{EntryKind, NoStart, run_start};
use sr_hir::{File, ItemKind, RootDatabase, file_items, program, programs_of};

use crate::TextRange;
use crate::defs::item_focus;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tryable {
    /// Where the lens goes: the item's name.
    pub range: TextRange,
    /// The file `sr try` loads.
    pub root: PathBuf,
    /// The agent or prompt.
    pub name: String,
    pub kind: TryKind,
}

/// `"agent"` or `"prompt"` on the wire (a Try lens's argument).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TryKind {
    Agent,
    Prompt,
}

impl TryKind {
    /// How `sr try` names the item `name` of this kind: `KIND:NAME`
    /// (`sr_hir::start::EntryName`), so a prompt named like an agent or a
    /// flow is tried as the prompt.
    pub fn entry(self, name: &str) -> String {
        let kind = match self {
            TryKind::Agent => EntryKind::Agent,
            TryKind::Prompt => EntryKind::Prompt,
        };
        format!("{}:{name}", kind.keyword())
    }
}

pub(crate) fn tryables(db: &RootDatabase, path: &Path) -> Vec<Tryable> {
    let Some(file) = db.file(path) else { return Vec::new() };
    let compiles = |root: &File| !matches!(run_start(db, *root, None), Err(NoStart::Errors(_)));
    let Some(root) = std::iter::once(file).chain(programs_of(db, file).iter().copied()).find(compiles) else {
        return Vec::new();
    };
    let program = program(db, root);
    let mut out = Vec::new();
    for &item in file_items(db, file) {
        if item.owner(db).is_some() {
            continue;
        }
        let name = item.name(db);
        let kind = match item.kind(db) {
            ItemKind::Agent if program.agents.get(name.as_str()) == Some(&item) => TryKind::Agent,
            // The definition with the body, once per prompt.
            ItemKind::Prompt if program.prompts.get(name.as_str()).and_then(|p| p.body) == Some(item) => {
                TryKind::Prompt
            }
            _ => continue,
        };
        out.push(Tryable { range: item_focus(db, item), root: root.path(db).clone(), name: name.to_string(), kind });
    }
    out
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use crate::tests::analysis;

    /// Each fixture file's tries, as `//- PATH` then `"focus" KIND NAME in ROOT`.
    fn check(fixture: &str, expect: expect_test::Expect) {
        let (analysis, fixture) = analysis(fixture);
        let mut out = String::new();
        for (path, text) in &fixture.files {
            out.push_str(&format!("//- {path}\n"));
            for t in analysis.tryables(std::path::Path::new(path)).unwrap() {
                out.push_str(&format!("{:?} {:?} {} in {}\n", &text[t.range], t.kind, t.name, t.root.display()));
            }
        }
        expect.assert_eq(&out);
    }

    #[test]
    fn every_agent_and_prompt_with_a_body_in_its_program() {
        check(
            r#"
            //- /main.sr
            import ./lib.sr
            prompt greet: """Hi ${who}"""
            prompt greet expecting Reply
            schema Reply:
                text: string
            agent:
                instruction plain
            flow main:
                $who = "you"
                $r = call llm write
                $s = call llm greet
                return $r
            //- /lib.sr
            prompt write: """Write about ${who}"""
            agent writer:
                instruction plain
            prompt plain: """Write"""
            "#,
            expect![[r#"
                //- /main.sr
                "greet" Prompt greet in /main.sr
                "agent" Agent default in /main.sr
                //- /lib.sr
                "write" Prompt write in /main.sr
                "writer" Agent writer in /main.sr
                "plain" Prompt plain in /main.sr
            "#]],
        );
    }

    #[test]
    fn a_prompt_sharing_a_name_is_tried_by_kind_and_a_broken_program_has_none() {
        check(
            r#"
            //- /main.sr
            prompt main: """shadowed by the flow"""
            prompt helper: """shadowed by the agent"""
            agent helper:
                instruction main
            flow main:
                return 1
            //- /broken.sr
            prompt p: """x"""
            flow f:
                run agent missing "x"
            "#,
            expect![[r#"
                //- /main.sr
                "main" Prompt main in /main.sr
                "helper" Prompt helper in /main.sr
                "helper" Agent helper in /main.sr
                //- /broken.sr
            "#]],
        );
    }
}
