//! What a body does, in brief: the variables it assigns and what it runs and
//! calls. Other items' checks depend on these summaries, not on the bodies, so
//! an edit that keeps a summary unchanged re-runs nothing about other items.

use std::sync::Arc;

use crate::hir::{Body, Stmt};
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
    body.walk_stmts(&mut |_, stmt| match stmt {
        Stmt::Assign { target, .. } if target.fields.is_empty() => summary.assigned.push(target.name.clone()),
        Stmt::For { var, .. } => summary.assigned.push(var.name.clone()),
        Stmt::Escalate { .. } => summary.assigned.push(Name::new_static(HUMAN_INPUT)),
        Stmt::Run(run) => {
            if let Some(target) = &run.target {
                summary.assigned.push(target.name.clone());
            }
            if run.agent {
                summary.runs_agents.push(run.callee.name.clone());
            } else {
                summary.runs_flows.push(run.callee.name.clone());
            }
        }
        Stmt::Call(call) => {
            if let Some(target) = &call.target {
                summary.assigned.push(target.name.clone());
            }
            summary.calls_prompts.push(call.prompt.name.clone());
            summary.call_models.extend(call.model.iter().map(|m| m.name.clone()));
        }
        _ => {}
    });
    body.walk_stmts(&mut |_, stmt| {
        for root in body.stmt_exprs(stmt) {
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

fn upstream_walk(body: &Body, stmts: &[crate::StmtId], out: &mut Vec<Name>) {
    for &id in stmts {
        match &body.stmts[id] {
            Stmt::Assign { target, .. } if target.fields.is_empty() => out.push(target.name.clone()),
            Stmt::Run(run) => out.extend(run.target.iter().map(|t| t.name.clone())),
            Stmt::Call(call) => out.extend(call.target.iter().map(|t| t.name.clone())),
            Stmt::For { var, body: inner, .. } => {
                out.push(var.name.clone());
                upstream_walk(body, inner, out);
            }
            Stmt::Parallel { body: inner } | Stmt::Loop { body: inner, .. } | Stmt::If { body: inner, .. } => {
                upstream_walk(body, inner, out)
            }
            _ => {}
        }
    }
}

fn dedup(list: &mut Vec<Name>) {
    let mut seen = std::collections::HashSet::new();
    list.retain(|n| seen.insert(n.clone()));
}
