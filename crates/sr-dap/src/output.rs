//! The run's events in the debug console: model text as it streams
//! (`stdout`), the lifecycle of flows, agents and calls (`console`), what
//! needs attention (`important`) and failures (`stderr`). The same sink feeds
//! the exception watch (agents' escalations) and data breakpoints (assignments).
//!
//! Streamed text goes out in batches, so that a long reply is a few output
//! events, not one per delta: a batch is sent when it reaches [`BATCH`]
//! bytes, [`LINGER`] after its first delta, or before any other event.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use serde_json::Value;
use sr_runtime::event::{Event, EventSink, Payload, RunStatus, thread_of};
use sr_runtime::value::display;

use crate::debugger::Debugger;
use crate::exceptions::tool_failed;

/// Values in one-line messages are cut to this many characters.
const SHORT: usize = 200;

/// The most streamed text one output event carries.
pub const BATCH: usize = 16 * 1024;
/// How long streamed text waits for more before it is sent.
pub const LINGER: Duration = Duration::from_millis(20);

pub struct Events {
    debugger: Arc<Debugger>,
    /// The run these events are of: once another run replaces it (going back
    /// in time, a restart), its last events are not the client's business.
    generation: u64,
    /// Streamed text not sent yet.
    text: Arc<Mutex<String>>,
}

impl Events {
    pub fn new(debugger: Arc<Debugger>, generation: u64) -> Events {
        Events { debugger, generation, text: Arc::default() }
    }
}

fn lock(text: &Mutex<String>) -> MutexGuard<'_, String> {
    text.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn flush(debugger: &Debugger, text: &mut String) {
    if !text.is_empty() {
        debugger.client.output("stdout", std::mem::take(text));
    }
}

impl EventSink for Events {
    fn record(&self, event: &Event) {
        // Going back in time replays each thread silently up to where it
        // goes back to, and the run it replaces ends silently.
        let silent = {
            let run = &self.debugger.lock().run;
            let thread = run.runtime.get(&thread_of(&event.path));
            run.generation != self.generation || thread.is_some_and(|t| run.quiet.contains_key(t))
        };
        if silent {
            return;
        }
        // Held while this event's output is queued, so that batches keep their order.
        let mut text = lock(&self.text);
        if let Payload::TextDelta { text: delta } = &event.payload {
            let first = text.is_empty();
            text.push_str(delta);
            if text.len() >= BATCH {
                flush(&self.debugger, &mut text);
            } else if first {
                let (debugger, pending) = (self.debugger.clone(), self.text.clone());
                match tokio::runtime::Handle::try_current() {
                    Ok(runtime) => {
                        runtime.spawn(async move {
                            tokio::time::sleep(LINGER).await;
                            flush(&debugger, &mut lock(&pending));
                        });
                    }
                    Err(_) => flush(&self.debugger, &mut text),
                }
            }
            return;
        }
        flush(&self.debugger, &mut text);
        let mut st = self.debugger.lock();
        st.watch.record(event);
        if let Payload::StateChange { variable, .. } = &event.payload {
            st.breakpoints.data.written(thread_of(&event.path), variable);
        }
        let (source, line) = match &event.payload {
            Payload::Error { location: Some(at), .. } => {
                let file = st.loaded.as_ref().and_then(|l| {
                    let index = l.program.sources.iter().position(|s| s.display == at.file)?;
                    l.source(index)
                });
                (file, Some(st.positions.line_out(at.line)))
            }
            _ => (None, None),
        };
        for (category, text) in describe(&event.payload) {
            self.debugger.client.output_at(category, text, source.clone(), line);
        }
    }
}

/// What an event shows, as (category, text) lines.
pub fn describe(payload: &Payload) -> Vec<(&'static str, String)> {
    let line = |category, text: String| vec![(category, text)];
    match payload {
        Payload::RunStarted { workload, entry, .. } => line("console", format!("run {entry} of {workload}")),
        Payload::RunFinished { status: RunStatus::Completed, result, .. } => {
            line("console", format!("run completed: {}", result.as_ref().map_or("nothing".into(), display)))
        }
        Payload::RunFinished { status: RunStatus::Paused, error, .. } => {
            line("important", format!("run paused: {}", error.as_deref().unwrap_or("waiting")))
        }
        Payload::RunFinished { status: RunStatus::Failed, error, .. } => {
            line("stderr", format!("run failed: {}", error.as_deref().unwrap_or("unknown error")))
        }
        Payload::RunFinished { status: RunStatus::Cancelled, .. } => line("important", "run cancelled".to_string()),
        Payload::FlowStarted { flow } => line("console", format!("flow {flow} started")),
        Payload::FlowFinished { flow, error: Some(error), .. } => {
            line("stderr", format!("flow {flow} failed: {error}"))
        }
        Payload::FlowFinished { flow, result, .. } => {
            line("console", format!("flow {flow} returned {}", short(result)))
        }
        Payload::AgentStarted { agent, model, input } => {
            line("console", format!("agent {agent} ({model}) started with {}", cut(input)))
        }
        Payload::AgentFinished { agent, .. } => line("console", format!("agent {agent} finished")),
        Payload::ModelRequest { model, messages, tools } if tools.is_empty() => {
            line("console", format!("request to {model}: {messages} messages"))
        }
        Payload::ModelRequest { model, messages, tools } => {
            line("console", format!("request to {model}: {messages} messages, tools {}", tools.join(", ")))
        }
        Payload::ModelResponse { model, text, tool_calls, usage, .. } => {
            let mut out = Vec::new();
            if !text.is_empty() {
                // Ends the streamed text's line.
                out.push(("stdout", "\n".to_string()));
            }
            let calls =
                if tool_calls.is_empty() { String::new() } else { format!(", calls {}", tool_calls.join(", ")) };
            out.push((
                "console",
                format!("{model} answered ({} in, {} out tokens){calls}", usage.input_tokens, usage.output_tokens),
            ));
            out
        }
        Payload::ToolCall { tool, args, .. } => line("console", format!("tool {tool} {}", short(args))),
        Payload::ToolResult { tool, result, is_error, .. } if tool_failed(result, *is_error) => {
            line("stderr", format!("tool {tool} failed: {}", short(result)))
        }
        Payload::ToolResult { tool, result, .. } => line("console", format!("tool {tool} returned {}", short(result))),
        Payload::RemoteUpdate { tool, state, text, .. } => {
            line("console", format!("remote agent {tool} {state}: {}", short(&text.as_str().into())))
        }
        Payload::Transfer { from, to } => line("console", format!("{from} hands over to {to}")),
        Payload::StateChange { variable, value } => line("console", format!("${variable} = {}", short(value))),
        Payload::Log { message } => line("stdout", format!("{message}\n")),
        Payload::Notify { message } => line("important", message.clone()),
        Payload::Warning { message } => line("important", format!("warning: {message}")),
        Payload::Error { message, .. } => line("stderr", format!("error: {message}")),
        Payload::HumanInputRequested { message } => line("important", format!("waiting for a human: {message}")),
        Payload::ToolInDoubt { tool, .. } => line("important", format!("tool {tool} was cut off: in doubt")),
        Payload::LlmCall { prompt_name, model, .. } => line("console", format!("call llm {prompt_name} ({model})")),
        Payload::Escalation { agent_name, result, condition_op, condition_value } => line(
            "important",
            format!("agent {agent_name} escalated: {} {condition_op} \"{condition_value}\"", short(result)),
        ),
        Payload::HistoryCompaction { strategy, original_tokens, compacted_tokens, .. } => {
            line("console", format!("history compacted ({strategy}): {original_tokens} to {compacted_tokens} tokens"))
        }
        Payload::CodeStarted { step, code } => line("console", format!("step {step} runs:\n{code}")),
        Payload::CodeOutput { stream, text, .. } => {
            line(if stream == "stderr" { "stderr" } else { "stdout" }, text.clone())
        }
        Payload::CodeFinished { step, outcome, message, .. } => line(
            "console",
            format!("step {step}: {outcome}{}", message.as_ref().map(|m| format!(" ({m})")).unwrap_or_default()),
        ),
        // Shown by `run_finished` and the streamed text; deltas are batched by the sink.
        Payload::FlowResult { .. } | Payload::LlmResponse { .. } | Payload::TextDelta { .. } => Vec::new(),
    }
}

fn short(value: &Value) -> String {
    cut(&display(value))
}

fn cut(text: &str) -> String {
    match text.char_indices().nth(SHORT) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use sr_runtime::event::Usage;

    #[test]
    fn categories_follow_the_kind_of_event() {
        let categories = |p: Payload| describe(&p).into_iter().map(|(c, _)| c).collect::<Vec<_>>();
        assert!(categories(Payload::TextDelta { text: "Hel".into() }).is_empty(), "batched by the sink");
        assert_eq!(categories(Payload::FlowStarted { flow: "main".into() }), vec!["console"]);
        assert_eq!(categories(Payload::Warning { message: "w".into() }), vec!["important"]);
        assert_eq!(categories(Payload::Error { message: "e".into(), location: None }), vec!["stderr"]);
        let failed = Payload::ToolResult { call_id: "c".into(), tool: "t".into(), result: json!("x"), is_error: true };
        assert_eq!(describe(&failed), vec![("stderr", "tool t failed: x".to_string())]);
        let response = Payload::ModelResponse {
            model: "m".into(),
            text: "Hello".into(),
            tool_calls: vec!["read".into()],
            finish_reason: "tool_calls".into(),
            usage: Usage { input_tokens: 3, output_tokens: 4, cost_usd: None },
        };
        assert_eq!(
            describe(&response),
            vec![("stdout", "\n".to_string()), ("console", "m answered (3 in, 4 out tokens), calls read".to_string())]
        );
    }

    #[test]
    fn long_values_are_cut() {
        let text = describe(&Payload::StateChange { variable: "x".into(), value: json!("é".repeat(500)) });
        assert_eq!(text[0].1.chars().count(), "$x = ".len() + SHORT + 1);
    }
}
