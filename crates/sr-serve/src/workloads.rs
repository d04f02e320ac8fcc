//! The workloads a server runs, loaded and checked once at start: each is
//! named by its file stem (`review` for `review.sr`) and described to clients
//! (`GET /v1/workloads`) by its entry points and its graph.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use sr_api::{Diagnostic, EntryKind, EntryPoint, Graph, GraphEdge, GraphNode, InputHelp, ParallelBranch};
use sr_hir::RootDatabase;
use sr_hir::graph::{ProgramGraph, program_graph};
use sr_hir::start::EntryKind as Kind;
use sr_runtime::compile::{Compiled, Entry};
use sr_runtime::workload::load;
use sr_syntax::line_index::Encoding;

/// A loaded workload.
pub struct Workload {
    pub name: String,
    pub program: Arc<Compiled>,
    /// What `GET /v1/workloads` says of it.
    pub description: sr_api::Workload,
}

impl Workload {
    /// The flow or agent a run that names none starts at: recorded as the
    /// run's entry, so every run, over the API or A2A, shows where it started.
    pub fn default_entry(&self) -> Option<String> {
        match &self.program.entry {
            Some(Entry::Flow(name) | Entry::Agent(name)) => Some(name.to_string()),
            None => None,
        }
    }

    /// Whether a run may start at `entry`: a flow or an agent (`flow:NAME`
    /// or `agent:NAME` for one kind), as `sr run --entry` takes it.
    pub fn has_entry(&self, entry: &str) -> bool {
        matches!(self.program.resolve_entry(entry), Some((Kind::Flow | Kind::Agent, _)))
    }
}

/// Loads every workload; a file that does not compile, or two with one
/// name, stops the server before it binds, with every problem listed.
pub fn load_all(paths: &[PathBuf]) -> Result<BTreeMap<String, Arc<Workload>>, Vec<String>> {
    let mut loaded = BTreeMap::new();
    let mut problems = Vec::new();
    for path in paths {
        let Some(name) = path.file_stem().and_then(|s| s.to_str()).map(str::to_string) else {
            problems.push(format!("{}: a workload is named by its file stem, and this path has none", path.display()));
            continue;
        };
        if loaded.contains_key(&name) {
            problems.push(format!("{}: a second workload named '{name}'", path.display()));
            continue;
        }
        match load_one(&name, path) {
            Ok(workload) => {
                loaded.insert(name, Arc::new(workload));
            }
            Err(mut errors) => problems.append(&mut errors),
        }
    }
    if problems.is_empty() { Ok(loaded) } else { Err(problems) }
}

fn load_one(name: &str, path: &Path) -> Result<Workload, Vec<String>> {
    let path = std::path::absolute(path).map_err(|e| vec![format!("{}: {e}", path.display())])?;
    let mut db = RootDatabase::default();
    let program = load(&mut db, &path).map_err(|e| {
        e.diagnostics
            .iter()
            .map(|(file, d)| format!("{}: error[{}]: {}", file.display(), d.code(), d.message()))
            .collect::<Vec<_>>()
    })?;
    let graph = match db.load_with_imports(&path) {
        Ok(root) if path.extension().is_some_and(|e| e == "sr") => graph_view(&db, &program_graph(&db, root)),
        _ => Graph::default(),
    };
    let entry = match &program.entry {
        Some(Entry::Flow(name)) => Some(format!("flow {name}")),
        Some(Entry::Agent(name)) => Some(format!("agent {name}")),
        None => None,
    };
    let entry_point = |name: &str, kind| EntryPoint { name: name.to_string(), kind, input: "prompt".to_string() };
    let entries: Vec<EntryPoint> = program
        .flows
        .keys()
        .map(|f| entry_point(f.as_str(), EntryKind::Flow))
        .chain(program.agents.keys().map(|a| entry_point(a.as_str(), EntryKind::Agent)))
        .collect();
    let description = sr_api::Workload {
        name: name.to_string(),
        entry,
        entries,
        input: InputHelp {
            prompt: "text: the run's message".to_string(),
            input: "any JSON value: given to the run as its message, as JSON text".to_string(),
        },
        graph,
        diagnostics: diagnostics(&program),
    };
    Ok(Workload { name: name.to_string(), program, description })
}

/// What `sr check` says of a workload that runs (its warnings and our stricter
/// checks: an error stops the server at start), each at its exact span:
/// 1-based lines and columns in characters, as the studio shows them.
fn diagnostics(program: &Compiled) -> Vec<Diagnostic> {
    program
        .warnings
        .iter()
        .map(|(path, d)| {
            let source = program.sources.iter().find(|s| &s.path == path);
            let file = source.map_or_else(|| path.display().to_string(), |s| s.display.to_string());
            let mut view = Diagnostic {
                severity: d.severity.as_str().to_string(),
                code: d.code().to_string(),
                message: d.message().clone(),
                file,
                line: 1,
                column: 1,
                end_line: None,
                end_column: None,
            };
            if let Some(index) = source.map(|s| &s.index) {
                let at = |offset| (index.line_col(offset).line + 1, index.col_in(offset, Encoding::Char) + 1);
                let ((line, column), (end_line, end_column)) = (at(d.range.start()), at(d.range.end()));
                (view.line, view.column) = (line, column);
                (view.end_line, view.end_column) = (Some(end_line), Some(end_column));
            }
            view
        })
        .collect()
}

/// The graph `sr graph` and the editor draw, for clients: nodes keyed as the
/// drawings key them (`agent reviewer`, `handler reviewer on input`), edges
/// between them with their exact kind (`handler` ties an agent to its own
/// handler).
fn graph_view(db: &RootDatabase, graph: &ProgramGraph<'_>) -> Graph {
    let nodes: Vec<GraphNode> = graph
        .nodes
        .iter()
        .map(|node| GraphNode {
            id: node.key(db),
            kind: node.kind_name(db).to_string(),
            label: node.item.name(db).to_string(),
        })
        .collect();
    let edges: Vec<GraphEdge> = graph
        .links
        .iter()
        .map(|link| GraphEdge {
            from: nodes[link.from].id.clone(),
            to: nodes[link.to].id.clone(),
            kind: link.kind_name().to_string(),
            parallel: link.branch.map(|b| ParallelBranch { block: b.block, branch: b.index }),
            order: link.order,
        })
        .collect();
    Graph { nodes, edges }
}
