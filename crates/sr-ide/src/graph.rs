//! The program's graph as Mermaid text (for the editor's graph view): the
//! edges are sr-hir's program graph, the same data `sr graph` draws, so
//! imported files take part. Instruction links are left out, as there.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::Path;

use sr_hir::graph::{EdgeKind, edges};
use sr_hir::{Item, ItemKind, RootDatabase, program};

/// A `flowchart LR` of the program rooted at `path`; `None` for an unknown file.
pub(crate) fn mermaid<'db>(db: &'db RootDatabase, path: &Path) -> Option<String> {
    let root = db.file(path)?;
    let program = program(db, root);
    let mut out = String::from("flowchart LR\n");
    let mut ids: HashMap<Item<'db>, String> = HashMap::new();
    let mut node = |out: &mut String, item: Item<'db>| -> String {
        let next = ids.len();
        ids.entry(item)
            .or_insert_with(|| {
                let id = format!("n{next}");
                let label = escape(item.name(db));
                let _ = match item.kind(db) {
                    ItemKind::Flow => writeln!(out, "    {id}(\"{label}\")"),
                    ItemKind::Agent => writeln!(out, "    {id}[\"{label}\"]"),
                    ItemKind::Handler => writeln!(out, "    {id}{{{{\"{label}\"}}}}"),
                    _ => writeln!(out, "    {id}[/\"{label}\"/]"),
                };
                id
            })
            .clone()
    };
    for &item in program.flows.values().chain(program.agents.values()) {
        node(&mut out, item);
    }
    let mut links = String::new();
    for edge in edges(db, root) {
        let label = match edge.kind {
            EdgeKind::Delegate => "delegate",
            EdgeKind::Use => "use",
            EdgeKind::RunAgent | EdgeKind::RunFlow => "run",
            EdgeKind::CallLlm => "call llm",
            EdgeKind::Instruction => continue,
        };
        let (from, to) = (node(&mut out, edge.from), node(&mut out, edge.to));
        let line = format!("    {from} -->|{label}| {to}\n");
        if !links.contains(&line) {
            links.push_str(&line);
        }
    }
    out.push_str(&links);
    Some(out)
}

/// A quoted Mermaid label: anything but plain characters as an entity.
fn escape(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_alphanumeric() || " _-./".contains(c) { c.to_string() } else { format!("#{};", u32::from(c)) })
        .collect()
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use crate::tests::analysis;

    #[test]
    fn graph_of_a_program_with_an_import() {
        let (analysis, _) = analysis(
            r#"
            //- /lib.sr
            agent helper:
                instruction p
            prompt p: """x"""
            //- /main.sr
            import ./lib.sr
            agent lead:
                instruction p
                delegate helper
            flow main:
                $x = run agent lead
                $y = run agent lead
                $z = call llm p
            "#,
        );
        let out = analysis.graph_mermaid(std::path::Path::new("/main.sr")).unwrap().unwrap();
        expect![[r#"
            flowchart LR
                n0("main")
                n1["helper"]
                n2["lead"]
                n3[/"p"/]
                n2 -->|delegate| n1
                n0 -->|run| n2
                n0 -->|call llm| n3
        "#]]
        .assert_eq(&out);
    }
}
