//! The program graph ([`sr_hir::graph::ProgramGraph`]) as Mermaid or Graphviz
//! text: the editor's graph view and `sr graph` draw the same picture, one
//! subgraph per imported file, a handler tied to its agent by a dotted line,
//! a remote A2A agent as a subroutine box (Mermaid `[[…]]`, dot `component`)
//! whose id says `remote_agent`, the entry point drawn thick.

use std::collections::HashSet;
use std::fmt::Write as _;
use std::path::Path;

use sr_hir::graph::{EdgeKind, ProgramGraph, program_graph};
use sr_hir::{Db, ItemKind, RootDatabase};

/// A `flowchart LR` of the program rooted at `path`; `None` for an unknown file.
pub(crate) fn mermaid_of(db: &RootDatabase, path: &Path) -> Option<String> {
    let root = db.file(path)?;
    Some(Drawing::of(db, &program_graph(db, root)).mermaid())
}

/// What a renderer needs of the graph: names, ids and shapes, resolved once.
pub struct Drawing {
    /// How each file is named: relative to the root file's directory.
    files: Vec<String>,
    nodes: Vec<Node>,
    /// Each file's nodes in source order, the root file first.
    by_file: Vec<(usize, Vec<usize>)>,
    links: Vec<(usize, usize, Option<&'static str>)>,
    entry: Option<usize>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    Flow,
    Agent,
    Prompt,
    Handler,
    /// A remote A2A agent (an `a2a` tool).
    Remote,
}

struct Node {
    id: String,
    label: String,
    shape: Shape,
}

/// How a link is labelled: `run agent` and `run` of a flow alike; `None` ties
/// an agent to its handler.
pub fn link_label(kind: EdgeKind) -> &'static str {
    match kind {
        EdgeKind::Delegate => "delegate",
        EdgeKind::Use => "use",
        EdgeKind::RunAgent | EdgeKind::RunFlow => "run",
        EdgeKind::CallLlm => "call llm",
        EdgeKind::Instruction => "instruction",
    }
}

impl Drawing {
    pub fn of(db: &dyn Db, graph: &ProgramGraph<'_>) -> Drawing {
        let dir = graph.files[0].path(db).parent().unwrap_or(Path::new("")).to_path_buf();
        let mut ids = HashSet::new();
        let nodes = graph
            .nodes
            .iter()
            .map(|node| {
                let shape = match node.item.kind(db) {
                    ItemKind::Flow => Shape::Flow,
                    ItemKind::Agent => Shape::Agent,
                    ItemKind::Handler => Shape::Handler,
                    ItemKind::Tool => Shape::Remote,
                    _ => Shape::Prompt,
                };
                let label = node.item.name(db).to_string();
                Node { id: unique_id(&node.key(db), &mut ids), label, shape }
            })
            .collect();
        Drawing {
            files: graph
                .files
                .iter()
                .map(|f| f.path(db).strip_prefix(&dir).unwrap_or(f.path(db)).display().to_string())
                .collect(),
            nodes,
            by_file: graph.by_file(db),
            links: graph.links.iter().map(|l| (l.from, l.to, l.kind.map(link_label))).collect(),
            entry: graph.entry,
        }
    }

    pub fn mermaid(&self) -> String {
        let mut out = String::from("flowchart LR\n");
        for (file, nodes) in &self.by_file {
            let indent = if *file == 0 { "    " } else { "        " };
            if *file > 0 {
                let _ = writeln!(out, "    subgraph file_{file} [\"{}\"]", mermaid_text(&self.files[*file]));
            }
            for node in nodes.iter().map(|&n| &self.nodes[n]) {
                let label = mermaid_text(&node.label);
                let (open, close) = match node.shape {
                    Shape::Flow => ("(", ")"),
                    Shape::Agent => ("[", "]"),
                    Shape::Prompt => ("[/", "/]"),
                    Shape::Handler => ("{{", "}}"),
                    Shape::Remote => ("[[", "]]"),
                };
                let _ = writeln!(out, "{indent}{}{open}\"{label}\"{close}", node.id);
            }
            if *file > 0 {
                out.push_str("    end\n");
            }
        }
        for &(from, to, label) in &self.links {
            let (from, to) = (&self.nodes[from].id, &self.nodes[to].id);
            let _ = match label {
                Some(label) => writeln!(out, "    {from} -->|{label}| {to}"),
                None => writeln!(out, "    {from} -.- {to}"),
            };
        }
        if let Some(entry) = self.entry {
            out.push_str("    classDef entry stroke-width:3px\n");
            let _ = writeln!(out, "    class {} entry", self.nodes[entry].id);
        }
        out
    }

    pub fn dot(&self) -> String {
        let mut out = String::from("digraph streetrace {\n    rankdir=LR;\n");
        for (file, nodes) in &self.by_file {
            let indent = if *file == 0 { "    " } else { "        " };
            if *file > 0 {
                let _ = writeln!(
                    out,
                    "    subgraph cluster_{file} {{\n        label=\"{}\";",
                    dot_text(&self.files[*file])
                );
            }
            for &index in nodes {
                let node = &self.nodes[index];
                let shape = match node.shape {
                    Shape::Flow => "shape=box, style=rounded",
                    Shape::Agent => "shape=box",
                    Shape::Prompt => "shape=parallelogram",
                    Shape::Handler => "shape=hexagon",
                    Shape::Remote => "shape=component",
                };
                let entry = if self.entry == Some(index) { ", penwidth=3" } else { "" };
                let _ = writeln!(out, "{indent}{} [label=\"{}\", {shape}{entry}];", node.id, dot_text(&node.label));
            }
            if *file > 0 {
                out.push_str("    }\n");
            }
        }
        for &(from, to, label) in &self.links {
            let (from, to) = (&self.nodes[from].id, &self.nodes[to].id);
            let _ = match label {
                Some(label) => writeln!(out, "    {from} -> {to} [label=\"{label}\"];"),
                None => writeln!(out, "    {from} -> {to} [style=dashed, arrowhead=none];"),
            };
        }
        out.push_str("}\n");
        out
    }
}

/// A readable identifier valid in Mermaid and dot: the kind, then the name with
/// every character but ASCII letters and digits as `_` (so `code-review` and
/// Mermaid keywords such as `end` cannot break the syntax). Names that clash
/// after that get `_2`, `_3`, … in program order, so ids stay the same from run
/// to run.
fn unique_id(key: &str, taken: &mut HashSet<String>) -> String {
    let base: String = key.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).collect();
    let mut id = base.clone();
    let mut n = 1;
    while !taken.insert(id.clone()) {
        n += 1;
        id = format!("{base}_{n}");
    }
    id
}

/// Text for a quoted Mermaid label: anything but plain characters as an entity
/// (`#35;`), since `"`, `#` and markup would otherwise end or change the label.
fn mermaid_text(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_alphanumeric() || " _-./".contains(c) { c.to_string() } else { format!("#{};", u32::from(c)) })
        .collect()
}

/// Text for a quoted dot string.
fn dot_text(text: &str) -> String {
    text.replace('\\', "\\\\").replace('"', "\\\"")
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
                agent_lead["lead"]
                flow_main("main")
                subgraph file_1 ["lib.sr"]
                    agent_helper["helper"]
                    prompt_p[/"p"/]
                end
                agent_lead -->|delegate| agent_helper
                flow_main -->|run| agent_lead
                flow_main -->|call llm| prompt_p
                classDef entry stroke-width:3px
                class flow_main entry
        "#]]
        .assert_eq(&out);
    }

    #[test]
    fn remote_agents_an_agent_uses_or_delegates_to_are_nodes_of_their_own_kind() {
        let (analysis, _) = analysis(
            r#"
            //- /main.sr
            model main = openai/gpt-4o
            tool reviewer = a2a "https://review.example.com/.well-known/agent-card.json"
            tool checker = a2a "https://check.example.com/.well-known/agent-card.json"
            tool unused = a2a "https://unused.example.com/.well-known/agent-card.json"
            tool files = builtin streetrace.fs
            prompt p: """x"""
            agent lead:
                instruction p
                use reviewer
                delegate checker
                tools files, reviewer
            "#,
        );
        let out = analysis.graph_mermaid(std::path::Path::new("/main.sr")).unwrap().unwrap();
        expect![[r#"
            flowchart LR
                remote_agent_reviewer[["reviewer"]]
                remote_agent_checker[["checker"]]
                agent_lead["lead"]
                agent_lead -->|delegate| remote_agent_checker
                agent_lead -->|use| remote_agent_reviewer
                classDef entry stroke-width:3px
                class agent_lead entry
        "#]]
        .assert_eq(&out);
    }

    /// The keys `sr serve` sends as node ids are the ones the drawing's ids
    /// are made from: two agents' `on input` handlers are two nodes in both.
    #[test]
    fn handlers_of_two_agents_are_two_nodes_keyed_by_their_agent() {
        let (analysis, _) = analysis(
            r#"
            //- /main.sr
            prompt p: """x"""
            agent checker:
                instruction p
            agent a:
                instruction p
                on input do
                    $x = run agent checker
                end
            agent b:
                instruction p
                on input do
                    $x = run agent checker
                end
            "#,
        );
        let db = &analysis.db;
        let root = db.file(std::path::Path::new("/main.sr")).unwrap();
        let graph = sr_hir::graph::program_graph(db, root);
        let keys: Vec<String> = graph.nodes.iter().map(|n| n.key(db)).collect();
        let links: Vec<_> = graph.links.iter().map(|l| (&keys[l.from][..], &keys[l.to][..], l.kind_name())).collect();
        expect![[r#"
            (
                [
                    "agent checker",
                    "agent a",
                    "agent b",
                    "handler a on input",
                    "handler b on input",
                ],
                [
                    (
                        "agent a",
                        "handler a on input",
                        "handler",
                    ),
                    (
                        "handler a on input",
                        "agent checker",
                        "run_agent",
                    ),
                    (
                        "agent b",
                        "handler b on input",
                        "handler",
                    ),
                    (
                        "handler b on input",
                        "agent checker",
                        "run_agent",
                    ),
                ],
            )
        "#]]
        .assert_debug_eq(&(&keys, &links));
        let out = analysis.graph_mermaid(std::path::Path::new("/main.sr")).unwrap().unwrap();
        assert!(out.contains("handler_a_on_input{{") && out.contains("handler_b_on_input{{"), "{out}");
    }

    /// A flow's calls are numbered in statement order, a `parallel` block's
    /// branches each one number among them (nested calls too); agents'
    /// references have none.
    #[test]
    fn a_flows_calls_are_numbered_in_statement_order() {
        let (analysis, _) = analysis(
            r#"
            //- /main.sr
            prompt p: """x"""
            agent a:
                instruction p
                delegate b
            agent b:
                instruction p
            agent c:
                instruction p
            flow main:
                $plan = call llm p
                parallel do
                    $x = run agent a
                    if $plan:
                        $y = run agent b
                    end
                end
                $z = run agent c
                return $z
            "#,
        );
        let db = &analysis.db;
        let root = db.file(std::path::Path::new("/main.sr")).unwrap();
        let graph = sr_hir::graph::program_graph(db, root);
        let keys: Vec<String> = graph.nodes.iter().map(|n| n.key(db)).collect();
        let links: Vec<String> = graph
            .links
            .iter()
            .map(|l| {
                let branch = l.branch.map_or(String::new(), |b| format!(" branch {}", b.index));
                let order = l.order.map_or("-".to_string(), |o| o.to_string());
                format!("{order} {} -> {}{branch}", keys[l.from], keys[l.to])
            })
            .collect();
        expect![[r#"
            [
                "- agent a -> agent b",
                "0 flow main -> prompt p",
                "1 flow main -> agent a branch 0",
                "2 flow main -> agent b branch 1",
                "3 flow main -> agent c",
            ]
        "#]]
        .assert_debug_eq(&links);
    }
}
