//! History compaction: before each model call of an agent, a conversation that
//! outgrew its trigger (by default 80 % of the model's context window) is cut
//! down, keeping the task and the last messages. `truncate` drops what came
//! between; `summarize` asks the model for a summary of it first. The strategy
//! is the agent's `history` property, else the `compaction` policy's; the
//! policy also sets the trigger (`token_usage > 0.8`, `tokens > 4000.0`,
//! `messages > 30.0`), what to `preserve` (`last N messages`, `$vars` or their
//! names as strings, `tool results`) and the summarizing model (`use model`).

use sr_hir::{BinaryOp, Body, Expr, ExprId, Literal, PreserveItem};
use sr_llm::{ChatRequest, Message, Part, Role};

use crate::event::Payload;
use crate::run::{RunError, Runtime, Thread};
use crate::value::display;

/// Used when the model declares no `max_input_tokens`.
const DEFAULT_CONTEXT_WINDOW: u64 = 128_000;
/// How much of a dropped tool result a `preserve: [tool results]` note keeps.
const TOOL_RESULT_NOTE: usize = 500;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Strategy {
    Truncate,
    Summarize,
}

impl Strategy {
    /// `summarize…` names summarize (`summarize_with_goal` too); anything else truncates.
    fn named(name: &str) -> Strategy {
        if name.starts_with("summarize") { Strategy::Summarize } else { Strategy::Truncate }
    }

    fn name(self) -> &'static str {
        match self {
            Strategy::Truncate => "truncate",
            Strategy::Summarize => "summarize",
        }
    }

    fn default_keep(self) -> usize {
        match self {
            Strategy::Truncate => 6,
            Strategy::Summarize => 4,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Trigger {
    /// A share of the model's context window.
    Share(f64),
    Tokens(f64),
    Messages(f64),
}

#[derive(Debug, Clone)]
struct Policy {
    strategy: Strategy,
    trigger: Trigger,
    keep: usize,
    variables: Vec<String>,
    tool_results: bool,
    model: Option<String>,
}

impl Runtime {
    /// The compaction that applies to `agent`'s conversations.
    fn compaction_policy(&self, agent: &str) -> Policy {
        let declared = self.program.policies.get("compaction");
        let strategy = self
            .program
            .agents
            .get(agent)
            .and_then(|a| a.data.history.as_deref())
            .or_else(|| declared.and_then(|(p, _)| p.strategy.as_deref()))
            .map_or(Strategy::Truncate, Strategy::named);
        let mut policy = Policy {
            strategy,
            trigger: Trigger::Share(0.8),
            keep: strategy.default_keep(),
            variables: Vec::new(),
            tool_results: false,
            model: None,
        };
        let Some((data, spec)) = declared else { return policy };
        if let Some(trigger) = data.trigger.and_then(|id| trigger(&spec.body, id)) {
            policy.trigger = trigger;
        }
        for item in &data.preserve {
            match item {
                PreserveItem::LastMessages(n) => policy.keep = usize::try_from(*n).unwrap_or(usize::MAX),
                PreserveItem::Variable(name) => policy.variables.push(name.to_string()),
                // Real files name variables as strings (`preserve: ["goals", "plan"]`).
                PreserveItem::Text(name) => policy.variables.push(name.trim_start_matches('$').to_string()),
                PreserveItem::ToolResults => policy.tool_results = true,
                PreserveItem::Expr(_) => {}
            }
        }
        policy.model.clone_from(&data.use_model);
        policy
    }

    /// Compacts `messages` (the task first) if they outgrew the trigger.
    pub(crate) async fn compact(
        &self,
        th: &mut Thread,
        agent: &str,
        model: &str,
        system: Option<&str>,
        messages: Vec<Message>,
    ) -> Result<Vec<Message>, RunError> {
        let policy = self.compaction_policy(agent);
        let tokens = estimate_tokens(system, &messages);
        let window = self.program.models.values().find(|m| m.id == model).and_then(|m| m.max_input_tokens);
        let over = match policy.trigger {
            Trigger::Share(share) => tokens as f64 > share * window.unwrap_or(DEFAULT_CONTEXT_WINDOW) as f64,
            Trigger::Tokens(limit) => tokens as f64 > limit,
            Trigger::Messages(limit) => messages.len() as f64 > limit,
        };
        let Some(cut) = over.then(|| cut_point(&messages, policy.keep)).flatten() else { return Ok(messages) };

        let dropped = &messages[1..cut];
        let mut note = match policy.strategy {
            Strategy::Truncate => format!("[{} earlier messages were removed to save context]", dropped.len()),
            Strategy::Summarize => {
                let summary = self.summarize(th, policy.model.as_deref().unwrap_or(model), dropped).await?;
                format!("Summary of the earlier conversation:\n{summary}")
            }
        };
        for name in &policy.variables {
            if let Some(value) = th.vars.get(name.trim_start_matches('$')) {
                note.push_str(&format!("\n${name} = {}", display(value)));
            }
        }
        if policy.tool_results {
            for result in dropped.iter().flat_map(tool_results) {
                note.push_str(&format!("\n{result}"));
            }
        }
        let mut compacted = vec![messages[0].clone(), Message::user(note)];
        compacted.extend_from_slice(&messages[cut..]);
        th.emitter.emit(Payload::HistoryCompaction {
            strategy: policy.strategy.name().to_string(),
            original_tokens: tokens,
            compacted_tokens: estimate_tokens(system, &compacted),
            messages_removed: dropped.len() as u64,
        });
        Ok(compacted)
    }

    async fn summarize(&self, th: &mut Thread, model: &str, dropped: &[Message]) -> Result<String, RunError> {
        let transcript: Vec<String> = dropped.iter().map(|m| format!("{:?}: {}", m.role, message_text(m))).collect();
        let request = ChatRequest {
            model: model.to_string(),
            system: Some(
                "Summarize this conversation so that an assistant can continue the task from the summary alone: \
                 keep facts, decisions, results of tool calls and open questions. Answer with the summary only."
                    .to_string(),
            ),
            messages: vec![Message::user(transcript.join("\n"))],
            tools: Vec::new(),
            response_schema: None,
            temperature: None,
            max_tokens: None,
        };
        Ok(self.model_call(th, "history compaction", request).await?.text)
    }
}

/// `NAME > NUMBER`: `token_usage` is a share of the context window, `tokens`
/// and `messages` are counts.
fn trigger(body: &Body, id: ExprId) -> Option<Trigger> {
    let Expr::Binary { op: BinaryOp::Gt | BinaryOp::GtEq, lhs, rhs } = &body.exprs[id] else { return None };
    let Expr::Var { name, .. } = &body.exprs[*lhs] else { return None };
    let limit = match &body.exprs[*rhs] {
        Expr::Literal(Literal::Float(text)) => text.parse().ok()?,
        &Expr::Literal(Literal::Int(n)) => n as f64,
        _ => return None,
    };
    match name.as_str() {
        "token_usage" => Some(Trigger::Share(limit)),
        "tokens" => Some(Trigger::Tokens(limit)),
        "messages" => Some(Trigger::Messages(limit)),
        _ => None,
    }
}

/// Where the kept tail starts: `keep` messages from the end, moved so that
/// no tool result is separated from its call. `None` when nothing would go.
fn cut_point(messages: &[Message], keep: usize) -> Option<usize> {
    let mut cut = messages.len().saturating_sub(keep).max(1);
    while cut < messages.len() && messages[cut].role == Role::Tool {
        cut += 1;
    }
    (cut > 1 && cut < messages.len()).then_some(cut)
}

/// About four characters a token: good enough to decide when to compact, and
/// the same on every run, so replays compact where the recording did.
fn estimate_tokens(system: Option<&str>, messages: &[Message]) -> u64 {
    let chars: usize = system.map_or(0, str::len) + messages.iter().map(|m| message_text(m).len()).sum::<usize>();
    chars.div_ceil(4) as u64
}

fn message_text(message: &Message) -> String {
    let parts = message.content.iter().map(|part| match part {
        Part::Text { text } => text.clone(),
        Part::ToolCall(call) => format!("[call {} {}]", call.name, call.arguments),
        Part::ToolResult(result) => format!("[result of {}: {}]", result.name, display(&result.content)),
    });
    parts.collect::<Vec<_>>().join("\n")
}

fn tool_results(message: &Message) -> Vec<String> {
    let results = message.content.iter().filter_map(|part| match part {
        Part::ToolResult(result) => {
            let text = display(&result.content);
            let cut: String = text.chars().take(TOOL_RESULT_NOTE).collect();
            Some(format!("{} returned: {cut}", result.name))
        }
        _ => None,
    });
    results.collect()
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::*;

    fn tool_result() -> Message {
        Message::tool_results(vec![sr_llm::ToolResult {
            call_id: "c".into(),
            name: "t".into(),
            content: Value::String("r".into()),
            is_error: false,
        }])
    }

    #[test]
    fn the_kept_tail_never_starts_with_a_tool_result() {
        let messages =
            vec![Message::user("task"), Message::assistant("a"), tool_result(), tool_result(), Message::assistant("b")];
        assert_eq!(cut_point(&messages, 3), Some(4));
        assert_eq!(cut_point(&messages, 2), Some(4));
        assert_eq!(cut_point(&messages, 10), None);
        assert_eq!(cut_point(&[Message::user("task"), tool_result()], 1), None);
    }

    #[test]
    fn strategies_by_name() {
        assert_eq!(Strategy::named("summarize_with_goal"), Strategy::Summarize);
        assert_eq!(Strategy::named("truncate"), Strategy::Truncate);
        assert_eq!(Strategy::named("anything"), Strategy::Truncate);
    }
}
