//! `sr graph`: the agent/flow graph of a workload (`delegate`, `use`, `run`,
//! `call llm`) as Mermaid or Graphviz text, to paste into docs.
//!
//! The edges are sr-hir's program graph, so imported files take part and the
//! picture agrees with what `sr check` and the editor's call hierarchy see.
//! Instruction prompts are left out: every agent has one, and drawing them
//! would double the picture without showing any control flow.

use std::collections::HashSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use sr_hir::entry::entry_point;
use sr_hir::graph::{EdgeKind, edges};
use sr_hir::{Db, File, Item, ItemKind, RootDatabase, file_diagnostics, program};
use sr_syntax::{Diagnostic, Severity, TextSize};

use crate::report::{self, FileReport, Stats};
use crate::{Color, files};

#[derive(clap::Args)]
pub struct Args {
    /// The workload (a .sr file); its imports are included.
    file: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Mermaid)]
    format: Format,
    #[arg(long, value_enum, default_value_t = Color::Auto)]
    color: Color,
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// A Mermaid `flowchart LR` (renders in GitHub Markdown).
    Mermaid,
    /// Graphviz: `sr graph f.sr --format dot | dot -Tsvg > f.svg`.
    Dot,
}

pub fn run(args: Args) -> ExitCode {
    args.color.apply();
    if let Err(message) = files::read(&args.file) {
        eprintln!("error: {message}");
        return ExitCode::from(2);
    }
    let mut db = RootDatabase::default();
    let root = match db.load_with_imports(&args.file) {
        Ok(root) => root,
        Err(e) => {
            eprintln!("error: cannot read {}: {e}", args.file.display());
            return ExitCode::from(2);
        }
    };
    // A graph of a broken program would silently lack edges: refuse, as `sr run` does.
    let reports = error_reports(&db, root, &args.file);
    if !reports.is_empty() {
        for report in &reports {
            anstream::eprint!("{}", report::text(report, reports.len() > 1, report::DEFAULT_MAX_DRAWN));
        }
        return ExitCode::from(1);
    }
    let graph = Graph::of(&db, root);
    match args.format {
        Format::Mermaid => print!("{}", graph.mermaid()),
        Format::Dot => print!("{}", graph.dot()),
    }
    ExitCode::SUCCESS
}

/// Errors of every file of the program, rendered as `sr check` renders them.
fn error_reports(db: &RootDatabase, root: File, root_path: &Path) -> Vec<FileReport> {
    program(db, root)
        .files
        .iter()
        .filter_map(|&file| {
            let diagnostics: Vec<Diagnostic> = file_diagnostics(db, file)
                .iter()
                .filter(|d| d.severity == Severity::Error && d.in_mode(false))
                .cloned()
                .collect();
            let path = if file == root { root_path.display().to_string() } else { file.path(db).display().to_string() };
            (!diagnostics.is_empty()).then(|| FileReport {
                path,
                index: sr_hir::line_index(db, file).clone(),
                diagnostics,
                stats: Stats::default(),
            })
        })
        .collect()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    Flow,
    Agent,
    Prompt,
    Handler,
}

struct Node {
    id: String,
    label: String,
    shape: Shape,
    /// Index into `Graph::files`; 0 is the root file.
    file: usize,
    /// Where the item starts in its file: nodes are listed in source order.
    offset: TextSize,
}

struct Link {
    from: usize,
    to: usize,
    /// `None` ties an agent to its own handler.
    label: Option<&'static str>,
}

/// What is drawn: nodes grouped by file, labelled links, the entry point.
struct Graph {
    /// How each file is named: relative to the root file's directory.
    files: Vec<String>,
    nodes: Vec<Node>,
    links: Vec<Link>,
    entry: Option<usize>,
}

impl Graph {
    fn of<'db>(db: &'db dyn Db, root: File) -> Graph {
        let program = program(db, root);
        let dir = root.path(db).parent().unwrap_or(Path::new("")).to_path_buf();
        let mut files = vec![root];
        files.extend(program.files.iter().copied().filter(|&f| f != root));
        let mut graph = Graph {
            files: files
                .iter()
                .map(|f| f.path(db).strip_prefix(&dir).unwrap_or(f.path(db)).display().to_string())
                .collect(),
            nodes: Vec::new(),
            links: Vec::new(),
            entry: None,
        };
        let mut items: Vec<Item<'db>> = Vec::new();
        let mut ids = HashSet::new();
        let mut node = |graph: &mut Graph, item: Item<'db>| -> usize {
            if let Some(index) = items.iter().position(|&i| i == item) {
                return index;
            }
            // Edges start at agents, flows and handlers and end at agents, flows and prompts.
            let (shape, kind) = match item.kind(db) {
                ItemKind::Flow => (Shape::Flow, "flow"),
                ItemKind::Agent => (Shape::Agent, "agent"),
                ItemKind::Handler => (Shape::Handler, "handler"),
                _ => (Shape::Prompt, "prompt"),
            };
            let label = item.name(db).to_string();
            let key = match item.owner(db) {
                Some(owner) => format!("{kind} {owner} {label}"),
                None => format!("{kind} {label}"),
            };
            let file = files.iter().position(|&f| f == item.file(db)).unwrap_or(0);
            graph.nodes.push(Node { id: unique_id(&key, &mut ids), label, shape, file, offset: item.offset(db) });
            items.push(item);
            items.len() - 1
        };
        // Every flow and agent, root file first; prompts and handlers only as they take part.
        for &file in &files {
            for item in program.flows.values().chain(program.agents.values()).filter(|i| i.file(db) == file) {
                node(&mut graph, *item);
            }
        }
        let mut seen = HashSet::new();
        for edge in edges(db, root) {
            let label = match edge.kind {
                EdgeKind::Delegate => "delegate",
                EdgeKind::Use => "use",
                EdgeKind::RunAgent | EdgeKind::RunFlow => "run",
                EdgeKind::CallLlm => "call llm",
                EdgeKind::Instruction => continue,
            };
            let from = node(&mut graph, edge.from);
            if let (Some(owner), ItemKind::Handler) = (edge.from.owner(db), edge.from.kind(db))
                && let Some(&agent) = program.agents.get(owner)
            {
                let agent = node(&mut graph, agent);
                if seen.insert((agent, from, None)) {
                    graph.links.push(Link { from: agent, to: from, label: None });
                }
            }
            let to = node(&mut graph, edge.to);
            if seen.insert((from, to, Some(label))) {
                graph.links.push(Link { from, to, label: Some(label) });
            }
        }
        graph.entry = entry_point(db, root).map(|e| node(&mut graph, e.item));
        graph
    }

    /// The indices of each file's nodes in source order, root file first.
    fn by_file(&self) -> impl Iterator<Item = (usize, Vec<usize>)> {
        (0..self.files.len())
            .map(|file| {
                let mut nodes: Vec<usize> = (0..self.nodes.len()).filter(|&n| self.nodes[n].file == file).collect();
                nodes.sort_by_key(|&n| self.nodes[n].offset);
                (file, nodes)
            })
            .filter(|(_, nodes)| !nodes.is_empty())
    }

    fn mermaid(&self) -> String {
        let mut out = String::from("flowchart LR\n");
        for (file, nodes) in self.by_file() {
            let indent = if file == 0 { "    " } else { "        " };
            if file > 0 {
                let _ = writeln!(out, "    subgraph file_{file} [\"{}\"]", mermaid_text(&self.files[file]));
            }
            for node in nodes.into_iter().map(|n| &self.nodes[n]) {
                let label = mermaid_text(&node.label);
                let (open, close) = match node.shape {
                    Shape::Flow => ("(", ")"),
                    Shape::Agent => ("[", "]"),
                    Shape::Prompt => ("[/", "/]"),
                    Shape::Handler => ("{{", "}}"),
                };
                let _ = writeln!(out, "{indent}{}{open}\"{label}\"{close}", node.id);
            }
            if file > 0 {
                out.push_str("    end\n");
            }
        }
        for link in &self.links {
            let (from, to) = (&self.nodes[link.from].id, &self.nodes[link.to].id);
            let _ = match link.label {
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

    fn dot(&self) -> String {
        let mut out = String::from("digraph streetrace {\n    rankdir=LR;\n");
        for (file, nodes) in self.by_file() {
            let indent = if file == 0 { "    " } else { "        " };
            if file > 0 {
                let _ =
                    writeln!(out, "    subgraph cluster_{file} {{\n        label=\"{}\";", dot_text(&self.files[file]));
            }
            for index in nodes {
                let node = &self.nodes[index];
                let shape = match node.shape {
                    Shape::Flow => "shape=box, style=rounded",
                    Shape::Agent => "shape=box",
                    Shape::Prompt => "shape=parallelogram",
                    Shape::Handler => "shape=hexagon",
                };
                let entry = if self.entry == Some(index) { ", penwidth=3" } else { "" };
                let _ = writeln!(out, "{indent}{} [label=\"{}\", {shape}{entry}];", node.id, dot_text(&node.label));
            }
            if file > 0 {
                out.push_str("    }\n");
            }
        }
        for link in &self.links {
            let (from, to) = (&self.nodes[link.from].id, &self.nodes[link.to].id);
            let _ = match link.label {
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
