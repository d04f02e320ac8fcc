//! The program's call graph: agents delegating to and using agents (remote
//! A2A agents, `a2a` tools, included), flows and handlers running agents and
//! flows and calling prompts; and the one
//! picture of it ([`ProgramGraph`]) that `sr graph`, the editor's graph view
//! and `sr serve` all draw, so they cannot disagree.

mod drawing;

pub use drawing::{GraphLink, GraphNode, ProgramGraph, program_graph};

use crate::anchor::Anchor;
use crate::hir::{Body, Invocation, ItemData, Stmt, StmtId};
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
    /// The innermost `parallel` branch the reference is in (flows and handlers).
    pub branch: Option<Branch>,
    /// The reference's place among its flow's (or handler's) calls in source
    /// order, from 0: outside `parallel` blocks a flow makes them one after
    /// another. `None` for an agent's references, which say what it may do.
    pub order: Option<u32>,
}

/// A branch of a `parallel` block: branches of one block run at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Branch {
    /// The block's statement, numbered within its flow or handler.
    pub block: u32,
    /// The branch's place in the block, from 0.
    pub index: u32,
}

/// Every statement under `stmts` with the innermost `parallel` branch it is in.
fn walk_branches<'b>(
    body: &'b Body,
    stmts: &[StmtId],
    branch: Option<Branch>,
    f: &mut impl FnMut(&'b Stmt, Option<Branch>),
) {
    for &id in stmts {
        let stmt = &body.stmts[id];
        f(stmt, branch);
        // Only `parallel` starts branches; every other kind's nested statements
        // come from its exhaustive `children` fact.
        if let Stmt::Parallel { body: branches } = stmt {
            let block = u32::from(id.into_raw());
            for (index, &first) in (0..).zip(branches) {
                walk_branches(body, &[first], Some(Branch { block, index }), f);
            }
        } else {
            walk_branches(body, &stmt.children(), branch, f);
        }
    }
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
                        let at = Anchor::Part(item, target.part);
                        out.push(Edge { from: item, to, kind, at, branch: None, order: None });
                    }
                }
            }
            ItemData::Flow | ItemData::Handler(_) => {
                let body = body(db, item);
                let mut order = 0;
                walk_branches(&body, &body.root, None, &mut |stmt, branch| {
                    let Some((how, target)) = stmt.invokes() else { return };
                    let kind = match how {
                        Invocation::RunAgent => EdgeKind::RunAgent,
                        Invocation::RunFlow => EdgeKind::RunFlow,
                        Invocation::CallLlm => EdgeKind::CallLlm,
                    };
                    if let Some(to) = program.lookup(how.item_kind(), &target.name) {
                        let at = Anchor::Part(item, target.part);
                        out.push(Edge { from: item, to, kind, at, branch, order: Some(order) });
                        order += 1;
                    }
                });
            }
            _ => {}
        }
    }
    out
}
