//! Checks of an agent: references (E0001), the required instruction (E0010),
//! `delegate` with `use` (W0002), runtime variables in the instruction (E0016),
//! and an instruction naming no prompt (SR102).

use sr_syntax::Reported;

use super::suggest::program_names;
use super::{Anchor, BUILTIN_VARIABLES, SemanticDiagnostic, UpstreamAt};
use crate::diagnostic_kinds::{self as kinds, Suggestion};
use crate::hir::{AgentData, AgentProperty, AgentTimeout, ItemData, Named};
use crate::items::{Item, ItemKind};
use crate::{Db, item_data, program};

pub(super) fn check<'db>(db: &'db dyn Db, root: crate::File, item: Item<'db>) -> Vec<SemanticDiagnostic<'db>> {
    let ItemData::Agent(agent) = &*item_data(db, item) else { return Vec::new() };
    let program = program(db, root);
    let name = item.name(db);
    // Upstream reports most agent problems at the agent's first token.
    let at_agent = UpstreamAt::Other(Anchor::ItemStart(item));
    let mut out = Vec::new();

    if agent.instruction.is_none() {
        out.push(SemanticDiagnostic {
            upstream_at: at_agent.clone(),
            ..SemanticDiagnostic::new(kinds::MissingInstruction { agent: name.to_string() }, Anchor::ItemName(item))
        });
    }

    let names = || program_names(db, root);
    if let Some(prompt) = &agent.prompt {
        let known = program.prompts.contains_key(&prompt.name)
            || BUILTIN_VARIABLES.contains(&prompt.name.as_str())
            || names().produced.contains(&prompt.name);
        if !known {
            let suggestion = match names().prompt_or_variable.starting_like(&prompt.name) {
                Some(found) => Suggestion::DidYouMean(found.to_string()),
                None => Suggestion::Listed(names().of(ItemKind::Prompt).listing()),
            };
            out.push(SemanticDiagnostic {
                upstream_at: UpstreamAt::Other(property_anchor(item, agent, AgentProperty::Prompt)),
                ..SemanticDiagnostic::new(
                    kinds::UndefinedPromptOrVariable { name: prompt.name.to_string(), suggestion },
                    Anchor::Part(item, prompt.part),
                )
            });
        }
    }

    let mut reference = |kind: ItemKind, target: &Named, suggesting: bool| {
        let Some(defs) = program.defs(kind) else { return };
        if defs.contains_key(&target.name) {
            return;
        }
        let suggestion = match suggesting {
            true => names().of(kind).suggest(&target.name),
            false => Suggestion::None,
        };
        // Executors are our extension: upstream mode reports them as syntax.
        let reported = if kind == ItemKind::Executor { Reported::DefaultOnly } else { Reported::Always };
        out.push(SemanticDiagnostic {
            reported,
            upstream_at: at_agent.clone(),
            ..SemanticDiagnostic::new(
                kinds::UndefinedReference { kind, name: target.name.to_string(), suggestion },
                Anchor::Part(item, target.part),
            )
        });
    };
    for tool in &agent.tools {
        reference(ItemKind::Tool, tool, true);
    }
    if let Some(retry) = &agent.retry {
        reference(ItemKind::RetryPolicy, retry, false);
    }
    if let Some(AgentTimeout::Named(timeout)) = &agent.timeout {
        reference(ItemKind::TimeoutPolicy, timeout, false);
    }
    // A remote A2A agent (`tool x = a2a "URL"`) is used and delegated to like a local one.
    for target in agent.delegate.iter().chain(&agent.use_) {
        if !super::a2a_tool::is_a2a_tool(db, program, &target.name) {
            reference(ItemKind::Agent, target, true);
        }
    }
    if let Some(executor) = &agent.executor {
        reference(ItemKind::Executor, executor, true);
    }
    if let Some(retry) = &agent.retry
        && crate::resolve::nameless_upstream(&retry.name)
        && program.retry_policies.contains_key(&retry.name)
    {
        out.push(SemanticDiagnostic {
            reported: Reported::UpstreamOnly,
            upstream_at: at_agent.clone(),
            ..SemanticDiagnostic::new(
                kinds::UndefinedReference {
                    kind: ItemKind::RetryPolicy,
                    name: retry.name.to_string(),
                    suggestion: Suggestion::None,
                },
                Anchor::Part(item, retry.part),
            )
        });
    }
    out.extend(super::executor::agent_property(item, agent));

    if !agent.delegate.is_empty() && !agent.use_.is_empty() {
        out.push(SemanticDiagnostic {
            upstream_at: at_agent.clone(),
            ..SemanticDiagnostic::new(kinds::DelegateAndUse { agent: name.to_string() }, Anchor::ItemName(item))
        });
    }

    if let Some(instruction) = &agent.instruction {
        match program.prompts.get(&instruction.name) {
            None => out.push({
                let suggestion = names().of(ItemKind::Prompt).suggest(&instruction.name);
                SemanticDiagnostic {
                    reported: Reported::DefaultOnly,
                    ..SemanticDiagnostic::new(
                        kinds::UndefinedInstruction { name: instruction.name.to_string(), suggestion },
                        Anchor::Part(item, instruction.part),
                    )
                }
            }),
            // E0016 is checked once per agent name, for its first definition.
            Some(prompt) if program.agents.get(name) == Some(&item) => {
                out.extend(instruction_variables(db, item, instruction, prompt, &program.prompts))
            }
            Some(_) => {}
        }
    }
    out
}

/// E0016: an instruction is rendered when the agent is created, before any
/// variable exists; only other prompts may be interpolated.
fn instruction_variables<'db>(
    db: &'db dyn Db,
    agent: Item<'db>,
    instruction: &Named,
    prompt: &crate::resolve::MergedPrompt<'db>,
    prompts: &indexmap::IndexMap<crate::Name, crate::resolve::MergedPrompt<'db>>,
) -> Vec<SemanticDiagnostic<'db>> {
    let Some(body_item) = prompt.body else { return Vec::new() };
    let ItemData::Prompt(data) = &*item_data(db, body_item) else { return Vec::new() };
    let Some(body) = &data.body else { return Vec::new() };
    let mut out = Vec::new();
    for interpolation in body.template.interpolations().filter(|i| i.plain) {
        let var = &interpolation.path[0];
        if prompts.contains_key(var) {
            continue;
        }
        // Point at the `${…}` when it is in the agent's file, else at the reference.
        let anchor = if body_item.file(db) == agent.file(db) {
            Anchor::Part(body_item, interpolation.part)
        } else {
            Anchor::Part(agent, instruction.part)
        };
        out.push(SemanticDiagnostic {
            upstream_at: UpstreamAt::PromptText { item: prompt.position, char_offset: interpolation.char_offset },
            ..SemanticDiagnostic::new(
                kinds::InstructionRuntimeVariable {
                    instruction: instruction.name.to_string(),
                    agent: agent.name(db).to_string(),
                    variable: var.to_string(),
                },
                anchor,
            )
        });
    }
    out
}

/// The line of a property (upstream keeps the `prompt` property's own position).
fn property_anchor<'db>(item: Item<'db>, agent: &AgentData, property: AgentProperty) -> Anchor<'db> {
    agent
        .property_parts
        .iter()
        .rev()
        .find(|(p, _)| *p == property)
        .map_or(Anchor::ItemStart(item), |(_, part)| Anchor::Part(item, *part))
}
