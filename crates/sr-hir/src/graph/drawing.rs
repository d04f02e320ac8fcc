//! What a picture of the program shows: every flow and agent (root file
//! first), and the prompts, handlers and remote agents (`a2a` tools) that
//! take part in an edge; each
//! edge once; a handler tied to the agent it belongs to; the entry point.
//! Instruction edges are left out: every agent has one, and drawing them
//! would double the picture without showing any control flow.

use std::collections::HashSet;

use super::{Branch, EdgeKind, edges};
use crate::entry::entry_point;
use crate::items::{Item, ItemKind};
use crate::{Db, File, program};

/// The program graph as it is drawn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProgramGraph<'db> {
    /// The program's files, the root first.
    pub files: Vec<File>,
    /// In the order they were met: the root file's flows and agents first.
    pub nodes: Vec<GraphNode<'db>>,
    pub links: Vec<GraphLink>,
    /// The node of the entry point, when the program has one.
    pub entry: Option<usize>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GraphNode<'db> {
    pub item: Item<'db>,
    /// Index into [`ProgramGraph::files`].
    pub file: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct GraphLink {
    /// Indices into [`ProgramGraph::nodes`].
    pub from: usize,
    pub to: usize,
    /// `None` ties an agent to one of its own handlers.
    pub kind: Option<EdgeKind>,
    /// The `parallel` branch of the link's first reference, if it is in one.
    pub branch: Option<Branch>,
    /// The place of the link's first reference among its flow's calls ([`super::Edge::order`]).
    pub order: Option<u32>,
}

impl GraphNode<'_> {
    /// The node's kind as every client names it (`sr serve`'s graph, the
    /// drawings' ids): `agent`, `flow`, `prompt`, `handler`, `remote_agent`.
    pub fn kind_name(&self, db: &dyn Db) -> &'static str {
        match self.item.kind(db) {
            ItemKind::Agent => "agent",
            ItemKind::Flow => "flow",
            ItemKind::Prompt => "prompt",
            ItemKind::Handler => "handler",
            // The graph's only tools are remote agents (`a2a` tools).
            ItemKind::Tool => "remote_agent",
            ItemKind::Import
            | ItemKind::Model
            | ItemKind::Schema
            | ItemKind::RetryPolicy
            | ItemKind::TimeoutPolicy
            | ItemKind::Policy
            | ItemKind::Executor => "item",
        }
    }

    /// `KIND NAME`, or `KIND OWNER NAME` for a handler inside an agent: two
    /// agents' `on input` handlers are two nodes.
    pub fn key(&self, db: &dyn Db) -> String {
        let (kind, name) = (self.kind_name(db), self.item.name(db));
        match self.item.owner(db) {
            Some(owner) => format!("{kind} {owner} {name}"),
            None => format!("{kind} {name}"),
        }
    }
}

impl GraphLink {
    /// The link's kind as clients name it: `handler` for an agent's own
    /// handler, otherwise [`EdgeKind::name`].
    pub fn kind_name(&self) -> &'static str {
        self.kind.map_or("handler", EdgeKind::name)
    }
}

impl ProgramGraph<'_> {
    /// Each file's nodes in source order, the root file first; files with no
    /// node are left out.
    pub fn by_file(&self, db: &dyn Db) -> Vec<(usize, Vec<usize>)> {
        (0..self.files.len())
            .map(|file| {
                let mut nodes: Vec<usize> = (0..self.nodes.len()).filter(|&n| self.nodes[n].file == file).collect();
                nodes.sort_by_key(|&n| self.nodes[n].item.offset(db));
                (file, nodes)
            })
            .filter(|(_, nodes)| !nodes.is_empty())
            .collect()
    }
}

/// The picture of the program rooted at `root`.
pub fn program_graph<'db>(db: &'db dyn Db, root: File) -> ProgramGraph<'db> {
    let program = program(db, root);
    let mut files = vec![root];
    files.extend(program.files.iter().copied().filter(|&f| f != root));
    let mut graph = ProgramGraph { files, nodes: Vec::new(), links: Vec::new(), entry: None };
    let node = |graph: &mut ProgramGraph<'db>, item: Item<'db>| -> usize {
        if let Some(index) = graph.nodes.iter().position(|n| n.item == item) {
            return index;
        }
        let file = graph.files.iter().position(|&f| f == item.file(db)).unwrap_or(0);
        graph.nodes.push(GraphNode { item, file });
        graph.nodes.len() - 1
    };
    let files = graph.files.clone();
    for &file in &files {
        for &item in program.flows.values().chain(program.agents.values()).filter(|i| i.file(db) == file) {
            node(&mut graph, item);
        }
    }
    let mut seen = HashSet::new();
    for edge in edges(db, root) {
        if edge.kind == EdgeKind::Instruction {
            continue;
        }
        let from = node(&mut graph, edge.from);
        if let (Some(owner), ItemKind::Handler) = (edge.from.owner(db), edge.from.kind(db))
            && let Some(&agent) = program.agents.get(owner)
        {
            let tie = GraphLink { from: node(&mut graph, agent), to: from, kind: None, branch: None, order: None };
            if seen.insert((tie.from, tie.to, tie.kind)) {
                graph.links.push(tie);
            }
        }
        let to = node(&mut graph, edge.to);
        let link = GraphLink { from, to, kind: Some(edge.kind), branch: edge.branch, order: edge.order };
        // `run agent` and `run` of a flow are drawn alike; the kind stays exact.
        if seen.insert((link.from, link.to, link.kind)) {
            graph.links.push(link);
        }
    }
    graph.entry = entry_point(db, root).map(|e| node(&mut graph, e.item));
    graph
}
