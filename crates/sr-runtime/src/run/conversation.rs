//! The builtin variable `conversation` (accepted by upstream's checker, absent
//! at its run time): the session's conversation as `{role, content}` objects,
//! earlier runs' turns when a session is continued, this run's message, then
//! each agent's final reply in a flow as `{role: "assistant", author, content}`.
//! `run agent X history $conversation` hands it to an agent; another agent's
//! reply reaches it as context from the user, the way ADK presents other
//! agents' turns.

use serde_json::{Value, json};
use sr_llm::{Message, Role};

use crate::eval::Vars;
use crate::run::Thread;
use crate::value::display;

pub(crate) const CONVERSATION: &str = "conversation";

/// The variable at the start of a run.
pub(crate) fn start(vars: &mut Vars, history: &[Message], input: &str) {
    let mut turns: Vec<Value> = history
        .iter()
        .filter_map(|message| {
            let role = match message.role {
                Role::User => "user",
                Role::Assistant => "assistant",
                Role::Tool => return None,
            };
            let text = message.text();
            (!text.is_empty()).then(|| json!({"role": role, "content": text}))
        })
        .collect();
    turns.push(json!({"role": "user", "content": input}));
    vars.insert(CONVERSATION.to_string(), Value::Array(turns));
}

/// Adds an agent's final reply, unless the flow has made the variable
/// something other than a list.
pub(crate) fn add_reply(th: &mut Thread, agent: &str, reply: &Value) {
    if let Some(Value::Array(turns)) = th.vars.get_mut(CONVERSATION) {
        turns.push(json!({"role": "assistant", "author": agent, "content": display(reply)}));
    }
}

/// After a `parallel` block: the replies each branch added, in branch order.
pub(crate) fn merge_branches(th: &mut Thread, before: usize, branches: &[Vec<Value>]) {
    if let Some(Value::Array(turns)) = th.vars.get_mut(CONVERSATION) {
        turns.truncate(before);
        for added in branches {
            turns.extend(added.iter().cloned());
        }
    }
}

/// The replies a branch added beyond the first `before` turns.
pub(crate) fn added(vars: &Vars, before: usize) -> Vec<Value> {
    match vars.get(CONVERSATION) {
        Some(Value::Array(turns)) if turns.len() >= before => turns[before..].to_vec(),
        _ => Vec::new(),
    }
}

pub(crate) fn len(vars: &Vars) -> Option<usize> {
    match vars.get(CONVERSATION) {
        Some(Value::Array(turns)) => Some(turns.len()),
        _ => None,
    }
}

/// A history list for `agent`: turns another agent authored become context
/// from the user (`[author] said: …`).
pub(crate) fn for_agent(history: Value, agent: &str) -> Value {
    let Value::Array(items) = history else { return history };
    let items = items
        .into_iter()
        .map(|item| match item.get("author").and_then(Value::as_str) {
            Some(author) if author != agent => {
                let content = item.get("content").map(display).unwrap_or_default();
                json!({"role": "user", "content": format!("For context: [{author}] said: {content}")})
            }
            _ => item,
        })
        .collect();
    Value::Array(items)
}
