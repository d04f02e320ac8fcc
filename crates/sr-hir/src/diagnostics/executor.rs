//! Checks of our `executor` extension: its properties (SR110), the agents that
//! use one, and, in `--compat upstream` mode, that upstream rejects both.

use sr_syntax::{Code, Reported};

use super::{Anchor, SemanticDiagnostic, UpstreamAt};
use crate::hir::{AgentData, AgentProperty, ItemData};
use crate::items::Item;
use crate::{Db, item_data, program};

/// Upstream's parser has no `executor`: in upstream mode, a syntax error.
fn not_upstream<'db>(anchor: Anchor<'db>) -> SemanticDiagnostic<'db> {
    SemanticDiagnostic {
        help: Some("`executor` is a StreetRace-rs extension for coding agents".to_string()),
        reported: Reported::UpstreamOnly,
        upstream_at: UpstreamAt::Anchor,
        ..SemanticDiagnostic::new(Code::E0007, "unexpected token 'executor'", anchor)
    }
}

pub(super) fn check<'db>(db: &'db dyn Db, item: Item<'db>) -> Vec<SemanticDiagnostic<'db>> {
    let ItemData::Executor(executor) = &*item_data(db, item) else { return Vec::new() };
    let mut out = vec![not_upstream(Anchor::ItemStart(item))];
    let mut problems = executor.problems.clone();
    if let Some(examples) = &executor.examples
        && !program(db, item.file(db)).prompts.contains_key(&examples.name)
    {
        problems.push((examples.part, format!("`examples` names no prompt: there is no prompt '{}'", examples.name)));
    }
    for (part, message) in problems {
        out.push(SemanticDiagnostic {
            reported: Reported::DefaultOnly,
            ..SemanticDiagnostic::new(Code::SR110, message, Anchor::Part(item, part))
        });
    }
    out
}

/// An agent's `executor` line.
pub(super) fn agent_property<'db>(item: Item<'db>, agent: &AgentData) -> Vec<SemanticDiagnostic<'db>> {
    let Some(&(_, part)) = agent.property_parts.iter().find(|(p, _)| *p == AgentProperty::Executor) else {
        return Vec::new();
    };
    let mut out = vec![not_upstream(Anchor::Part(item, part))];
    if let Some(executor) = agent.executor.as_ref().filter(|_| !agent.delegate.is_empty()) {
        let part = executor.part;
        out.push(SemanticDiagnostic {
            reported: Reported::DefaultOnly,
            ..SemanticDiagnostic::warning(
                Code::SR110,
                "a coding agent does not hand over the conversation: its `delegate` is ignored (`use` agents become functions its code can call)",
                Anchor::Part(item, part),
            )
        });
    }
    out
}
