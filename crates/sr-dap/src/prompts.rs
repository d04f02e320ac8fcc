//! Prompt breakpoints: a line breakpoint inside a prompt's body stops before
//! each model call that renders the prompt (an agent's instruction or input
//! prompt, a `call llm` prompt), showing the rendered text.

use sr_llm::{ChatRequest, Role};
use sr_runtime::compile::Compiled;
use sr_syntax::ast::{AstNode, Item};

use crate::trigger::Trigger;

/// A verified prompt breakpoint.
#[derive(Debug, Clone)]
pub struct PromptBreakpoint {
    pub id: i64,
    pub file: usize,
    pub prompt: String,
    pub trigger: Trigger,
}

/// The prompt whose body spans `line` (1-based) in `file` of the program.
pub fn prompt_at(program: &Compiled, file: usize, line: u32) -> Option<String> {
    let index = &program.sources.get(file)?.index;
    let parse = sr_syntax::parse(index.text());
    parse.tree().items().find_map(|item| {
        let Item::PromptDef(prompt) = item else { return None };
        let body = prompt.body()?.syntax().text_range();
        let (first, last) = (index.line_col(body.start()).line + 1, index.line_col(body.end()).line + 1);
        (first <= line && line <= last).then(|| prompt.name().map(|n| n.text())).flatten()
    })
}

/// The prompts a model call renders, with the text each became: the
/// caller's instruction (the system text) and input prompt, or a `call llm`
/// prompt (the last user message).
pub fn rendered(program: &Compiled, caller: &str, request: &ChatRequest) -> Vec<(String, String)> {
    let user = || {
        let last = request.messages.iter().rev().find(|m| m.role == Role::User);
        last.map(|m| m.text()).unwrap_or_default()
    };
    if let Some(prompt) = caller.strip_prefix("call llm ") {
        return vec![(prompt.to_string(), user())];
    }
    let Some(agent) = program.agents.get(caller) else { return Vec::new() };
    let mut out = Vec::new();
    if let Some(instruction) = &agent.data.instruction {
        out.push((instruction.name.to_string(), request.system.clone().unwrap_or_default()));
    }
    if let Some(prompt) = agent.data.prompt.as_ref().filter(|p| program.prompts.contains_key(&p.name)) {
        out.push((prompt.name.to_string(), user()));
    }
    out
}
