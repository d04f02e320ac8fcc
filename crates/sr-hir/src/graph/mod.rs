//! The program's call graph: agents delegating to and using agents (remote
//! A2A agents, `a2a` tools, included), flows and handlers running agents and
//! flows and calling prompts; and the one
//! picture of it ([`ProgramGraph`]) that `sr graph`, the editor's graph view
//! and `sr serve` all draw, so they cannot disagree.

mod drawing;

pub use drawing::{GraphLink, GraphNode, ProgramGraph, program_graph};

use crate::anchor::Anchor;
use crate::hir::{Invocation, ItemData};
use crate::items::{Item, ItemKind};
use crate::{Db, File, body, item_data, program};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EdgeKind {
    /// `delegate`: the agent may hand the conversation over.
    Delegate,
    /// `use`: the agent calls the other as a tool (a remote agent also when
    /// its tool is in `tools`).
    Use,
    /// `run agent X`
    RunAgent,
    /// `run F`
    RunFlow,
    /// `call llm P`
    CallLlm,
    /// An agent's `instruction`.
    Instruction,
}

impl EdgeKind {
    /// The kind as clients name it (`run_agent`), in `sr serve`'s graph.
    pub fn name(self) -> &'static str {
        match self {
            EdgeKind::Delegate => "delegate",
            EdgeKind::Use => "use",
            EdgeKind::RunAgent => "run_agent",
            EdgeKind::RunFlow => "run_flow",
            EdgeKind::CallLlm => "call_llm",
            EdgeKind::Instruction => "instruction",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edge<'db> {
    pub from: Item<'db>,
    pub to: Item<'db>,
    pub kind: EdgeKind,
    /// The reference that makes the edge.
    pub at: Anchor<'db>,
}

/// Every edge of the program rooted at `root`, in source order.
pub fn edges(db: &dyn Db, root: File) -> Vec<Edge<'_>> {
    let program = program(db, root);
    let mut out = Vec::new();
    for &item in &program.items {
        match &*item_data(db, item) {
            ItemData::Agent(agent) => {
                let refs = agent
                    .delegate
                    .iter()
                    .map(|t| (t, EdgeKind::Delegate, ItemKind::Agent))
                    .chain(agent.use_.iter().map(|t| (t, EdgeKind::Use, ItemKind::Agent)))
                    .chain(agent.instruction.iter().map(|t| (t, EdgeKind::Instruction, ItemKind::Prompt)));
                let remote = |name: &str| {
                    program
                        .lookup(ItemKind::Tool, name)
                        .filter(|&tool| matches!(&*item_data(db, tool), ItemData::Tool(crate::ToolData::A2a { .. })))
                };
                let tools = agent.tools.iter().map(|t| (t, EdgeKind::Use, ItemKind::Tool));
                for (target, kind, target_kind) in refs.chain(tools) {
                    let to = match target_kind {
                        ItemKind::Tool => remote(&target.name),
                        // `use`/`delegate` name an agent, or else a remote one.
                        ItemKind::Agent => program.lookup(target_kind, &target.name).or_else(|| remote(&target.name)),
                        _ => program.lookup(target_kind, &target.name),
                    };
                    if let Some(to) = to {
                        out.push(Edge { from: item, to, kind, at: Anchor::Part(item, target.part) });
                    }
                }
            }
            ItemData::Flow | ItemData::Handler(_) => {
                let body = body(db, item);
                body.walk_stmts(&mut |_, stmt| {
                    let Some((how, target)) = stmt.invokes() else { return };
                    let kind = match how {
                        Invocation::RunAgent => EdgeKind::RunAgent,
                        Invocation::RunFlow => EdgeKind::RunFlow,
                        Invocation::CallLlm => EdgeKind::CallLlm,
                    };
                    if let Some(to) = program.lookup(how.item_kind(), &target.name) {
                        out.push(Edge { from: item, to, kind, at: Anchor::Part(item, target.part) });
                    }
                });
            }
            _ => {}
        }
    }
    out
}
