//! Checks of our `executor` extension: its properties (SR110), the agents that
//! use one, and, in `--compat upstream` mode, that upstream rejects both.

use sr_syntax::Reported;

use super::{Anchor, SemanticDiagnostic};
use crate::diagnostic_kinds::{self as kinds, ExecutorProblem, Extension};
use crate::hir::{AgentData, AgentProperty, ItemData};
use crate::items::Item;
use crate::{Db, item_data, program};

/// Upstream's parser has no `executor`: in upstream mode, a syntax error.
fn not_upstream<'db>(anchor: Anchor<'db>) -> SemanticDiagnostic<'db> {
    SemanticDiagnostic { reported: Reported::UpstreamOnly, ..SemanticDiagnostic::new(Extension::Executor, anchor) }
}

pub(super) fn check<'db>(db: &'db dyn Db, root: crate::File, item: Item<'db>) -> Vec<SemanticDiagnostic<'db>> {
    let ItemData::Executor(executor) = &*item_data(db, item) else { return Vec::new() };
    let mut out = vec![not_upstream(Anchor::ItemStart(item))];
    let mut problems = executor.problems.clone();
    if let Some(examples) = &executor.examples
        && !program(db, root).prompts.contains_key(&examples.name)
    {
        problems.push((examples.part, ExecutorProblem::NoExamplesPrompt { prompt: examples.name.to_string() }));
    }
    for (part, problem) in problems {
        out.push(SemanticDiagnostic {
            reported: Reported::DefaultOnly,
            ..SemanticDiagnostic::new(kinds::InvalidExecutor(problem), Anchor::Part(item, part))
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
            ..SemanticDiagnostic::new(kinds::DelegateIgnored, Anchor::Part(item, part))
        });
    }
    out
}
