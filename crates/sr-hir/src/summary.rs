//! What a body does, in brief: the variables it assigns and what it runs and
//! calls. Other items' checks depend on these summaries, not on the bodies, so
//! an edit that keeps a summary unchanged re-runs nothing about other items.

use std::sync::Arc;

use crate::hir::{Binding, Body, Invocation, Stmt};
use crate::items::Item;
use crate::{Db, Name, body};

/// The variable `escalate to human` stores the human's answer in.
pub const HUMAN_INPUT: &str = "human_input";

#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct BodySummary {
    /// Variables upstream's checker counts as assigned in a flow (assignment,
    /// `run`/`call` targets and `for` variables, in `if`/`for`/`loop`/`parallel`
    /// bodies but not in `match` arms or `on failure` blocks).
    pub upstream_assigned: Vec<Name>,
    /// Every variable the body can assign at run time (`escalate to human`
    /// assigns the answer to `human_input`).
    pub assigned: Vec<Name>,
    /// Flows it runs.
    pub runs_flows: Vec<Name>,
    /// Agents it runs (`run agent`).
    pub runs_agents: Vec<Name>,
    /// Prompts it calls (`call llm`).
    pub calls_prompts: Vec<Name>,
    /// Models named by `call llm … using model "m"`.
    pub call_models: Vec<Name>,
    /// Tools whose functions it calls (`fs` of `fs.read_file(x)`).
    pub calls_tools: Vec<Name>,
}

#[salsa::tracked(returns(clone))]
pub fn body_summary<'db>(db: &'db dyn Db, item: Item<'db>) -> Arc<BodySummary> {
    let body = body(db, item);
    let mut summary = BodySummary::default();
    upstream_walk(&body, &body.root, &mut summary.upstream_assigned);
    body.walk_stmts(&mut |_, stmt| {
        match stmt.binds() {
            Some(Binding::Assign(place) | Binding::Loop(place)) => summary.assigned.push(place.name.clone()),
            Some(Binding::HumanInput) => summary.assigned.push(Name::new_static(HUMAN_INPUT)),
            None => {}
        }
        match stmt.invokes() {
            Some((Invocation::RunAgent, agent)) => summary.runs_agents.push(agent.name.clone()),
            Some((Invocation::RunFlow, flow)) => summary.runs_flows.push(flow.name.clone()),
            Some((Invocation::CallLlm, prompt)) => summary.calls_prompts.push(prompt.name.clone()),
            None => {}
        }
        if let Stmt::Call(call) = stmt {
            summary.call_models.extend(call.model.iter().map(|m| m.name.clone()));
        }
    });
    body.walk_stmts(&mut |_, stmt| {
        for root in stmt.exprs() {
            body.walk_expr(root, &mut |_, expr| {
                if let crate::hir::Expr::Call { function, .. } = expr
                    && let Some((tool, _)) = function.split_once('.')
                {
                    summary.calls_tools.push(Name::from(tool));
                }
            });
        }
    });
    for list in [
        &mut summary.assigned,
        &mut summary.runs_flows,
        &mut summary.runs_agents,
        &mut summary.calls_prompts,
        &mut summary.call_models,
        &mut summary.calls_tools,
    ] {
        dedup(list);
    }
    dedup(&mut summary.upstream_assigned);
    Arc::new(summary)
}

/// The variables upstream's checker sees assigned: it does not look inside
/// `match` arms or `on failure:` blocks, and `escalate` assigns nothing there.
fn upstream_walk(body: &Body, stmts: &[crate::StmtId], out: &mut Vec<Name>) {
    for &id in stmts {
        let stmt = &body.stmts[id];
        match stmt.binds() {
            Some(Binding::Assign(place) | Binding::Loop(place)) => out.push(place.name.clone()),
            Some(Binding::HumanInput) | None => {}
        }
        match stmt {
            Stmt::For { body: inner, .. }
            | Stmt::Parallel { body: inner }
            | Stmt::Loop { body: inner, .. }
            | Stmt::If { body: inner, .. } => upstream_walk(body, inner, out),
            Stmt::Match { .. } | Stmt::OnFailure { .. } => {}
            Stmt::Assign { .. }
            | Stmt::Run(_)
            | Stmt::Call(_)
            | Stmt::Return(_)
            | Stmt::Push { .. }
            | Stmt::Escalate { .. }
            | Stmt::Log(_)
            | Stmt::Notify(_)
            | Stmt::Expr(_)
            | Stmt::Continue
            | Stmt::Break
            | Stmt::Abort
            | Stmt::RetryStep(_)
            | Stmt::Mask { .. }
            | Stmt::Block { .. }
            | Stmt::Warn { .. }
            | Stmt::RetryWith { .. }
            | Stmt::Missing => {}
        }
    }
}

fn dedup(list: &mut Vec<Name>) {
    let mut seen = std::collections::HashSet::new();
    list.retain(|n| seen.insert(n.clone()));
}
