//! The live transcript of `sr run`: readable lines on stderr as events arrive,
//! streamed model text, and a spinner while a model is thinking.

use std::io::{IsTerminal, Write};
use std::sync::Mutex;
use std::time::Duration;

use futures::future::BoxFuture;
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::Value;
use sr_runtime::event::{Event, EventSink, Payload, RunStatus};
use sr_runtime::human::Human;

/// How much of a value a line shows.
const PREVIEW: usize = 160;

pub struct Terminal {
    state: Mutex<State>,
}

struct State {
    spinner: Option<ProgressBar>,
    /// Model text is being streamed on the current line.
    streaming: bool,
    /// Text of the current model reply arrived as deltas.
    streamed: bool,
    /// Show the result of a run (`sr sessions show`; `sr run` prints it on stdout).
    show_result: bool,
    interactive: bool,
}

impl Terminal {
    pub fn new() -> Terminal {
        Terminal::with_result(false)
    }

    /// For transcripts of stored runs: replies arrive whole (deltas are not
    /// stored) and the result is shown.
    pub fn stored() -> Terminal {
        Terminal::with_result(true)
    }

    fn with_result(show_result: bool) -> Terminal {
        let interactive = std::io::stderr().is_terminal() && !show_result;
        Terminal {
            state: Mutex::new(State { spinner: None, streaming: false, streamed: false, show_result, interactive }),
        }
    }
}

fn preview(value: &Value) -> String {
    let text = match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    let line = text.replace('\n', " ");
    if line.chars().count() > PREVIEW { format!("{}…", line.chars().take(PREVIEW).collect::<String>()) } else { line }
}

impl State {
    fn stop_spinner(&mut self) {
        if let Some(spinner) = self.spinner.take() {
            spinner.finish_and_clear();
        }
    }

    fn end_stream(&mut self, out: &mut impl Write) {
        if self.streaming {
            let _ = writeln!(out);
            self.streaming = false;
        }
    }

    fn line(&mut self, out: &mut impl Write, depth: usize, text: &str) {
        self.stop_spinner();
        self.end_stream(out);
        let _ = writeln!(out, "{}{text}", "  ".repeat(depth));
    }
}

impl EventSink for Terminal {
    fn record(&self, event: &Event) {
        let mut state = self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let mut out = std::io::stderr().lock();
        let depth = event.path.len();
        match &event.payload {
            Payload::RunStarted { workload, entry, .. } => state.line(&mut out, 0, &format!("▶ {entry} ({workload})")),
            Payload::FlowStarted { flow } => state.line(&mut out, depth, &format!("flow {flow}")),
            Payload::AgentStarted { agent, model, input } => state.line(
                &mut out,
                depth,
                &format!("● {agent} [{model}] ← {}", preview(&Value::String(input.clone()))),
            ),
            Payload::ModelRequest { model, .. } => {
                state.stop_spinner();
                state.streamed = false;
                if state.interactive {
                    let spinner = ProgressBar::new_spinner();
                    spinner.set_style(
                        ProgressStyle::with_template("{spinner} {msg} {elapsed}").expect("a valid template"),
                    );
                    spinner.set_message(format!("{}waiting for {model}", "  ".repeat(depth)));
                    spinner.enable_steady_tick(Duration::from_millis(120));
                    state.spinner = Some(spinner);
                }
            }
            Payload::TextDelta { text } => {
                state.stop_spinner();
                if !state.streaming {
                    let _ = write!(out, "{}", "  ".repeat(depth));
                    state.streaming = true;
                }
                let _ = write!(out, "{}", text.replace('\n', &format!("\n{}", "  ".repeat(depth))));
                let _ = out.flush();
                state.streamed = true;
            }
            // A reply that was not streamed (a stored run, a provider without streaming) is shown whole.
            Payload::ModelResponse { text, .. } if !state.streamed && !text.is_empty() => {
                for line in text.lines() {
                    state.line(&mut out, depth, line);
                }
            }
            Payload::ModelResponse { .. } => {
                state.stop_spinner();
                state.end_stream(&mut out);
            }
            Payload::ToolCall { tool, args, .. } => state.line(&mut out, depth, &format!("↳ {tool} {}", preview(args))),
            Payload::ToolResult { tool, result, is_error, .. } => {
                let mark = if *is_error { "✗" } else { "✓" };
                state.line(&mut out, depth + 1, &format!("{mark} {tool}: {}", preview(result)))
            }
            Payload::RemoteUpdate { tool, state: task_state, text, .. } => {
                state.line(&mut out, depth + 1, &format!("… {tool} {task_state}: {}", preview(&text.as_str().into())))
            }
            Payload::Transfer { from, to } => state.line(&mut out, depth, &format!("⇢ {from} hands over to {to}")),
            Payload::Log { message } => state.line(&mut out, depth, &format!("log: {message}")),
            Payload::Notify { message } => state.line(&mut out, depth, &format!("notify: {message}")),
            Payload::Warning { message } => state.line(&mut out, depth, &format!("warning: {message}")),
            Payload::Error { message, location } => {
                let at =
                    location.as_ref().map(|l| format!(" ({}:{}:{})", l.file, l.line, l.column)).unwrap_or_default();
                state.line(&mut out, depth, &format!("error: {message}{at}"))
            }
            Payload::LlmCall { prompt_name, model, .. } => {
                state.line(&mut out, depth, &format!("● call llm {prompt_name} [{model}]"))
            }
            Payload::Escalation { agent_name, condition_op, condition_value, .. } => state.line(
                &mut out,
                depth,
                &format!("⚡ Escalation: {agent_name} triggered ({condition_op} \"{condition_value}\")"),
            ),
            Payload::HumanInputRequested { message } => state.line(&mut out, depth, &format!("? {message}")),
            Payload::ToolInDoubt { tool, idempotency_key, .. } => state.line(
                &mut out,
                depth,
                &format!("? tool {tool} was cut off by the interruption (key {idempotency_key}): retry, skip or fail"),
            ),
            Payload::HistoryCompaction { strategy, messages_removed, .. } => state.line(
                &mut out,
                depth,
                &format!("history compacted ({strategy}, {messages_removed} messages removed)"),
            ),
            Payload::CodeStarted { step, code } => {
                state.line(&mut out, depth, &format!("▷ step {step}"));
                for line in code.lines() {
                    state.line(&mut out, depth + 1, &format!("│ {line}"));
                }
            }
            Payload::CodeOutput { text, .. } => {
                for line in text.lines() {
                    state.line(&mut out, depth + 1, line);
                }
            }
            Payload::CodeFinished { outcome, is_error, message, .. } => {
                let mark = if *is_error { "✗" } else { "✓" };
                let detail = message.as_ref().map(|m| format!(": {m}")).unwrap_or_default();
                state.line(&mut out, depth + 1, &format!("{mark} {outcome}{detail}"))
            }
            Payload::RunFinished { status, result, error, usage } => {
                state.stop_spinner();
                state.end_stream(&mut out);
                if usage.input_tokens + usage.output_tokens > 0 {
                    let cost = usage.cost_usd.map(|c| format!(", ${c:.4}")).unwrap_or_default();
                    let tokens = format!("{} tokens in, {} out{cost}", usage.input_tokens, usage.output_tokens);
                    state.line(&mut out, 0, &format!("Σ {tokens}"));
                }
                match status {
                    RunStatus::Completed if state.show_result => {
                        if let Some(result) = result.as_ref().filter(|r| !r.is_null()) {
                            let text = match result {
                                Value::String(text) => text.clone(),
                                other => serde_json::to_string_pretty(other).unwrap_or_default(),
                            };
                            state.line(&mut out, 0, "= result:");
                            for line in text.lines() {
                                state.line(&mut out, 1, line);
                            }
                        }
                    }
                    RunStatus::Completed => {}
                    RunStatus::Paused => state.line(&mut out, 0, "⏸ paused, waiting for a human"),
                    RunStatus::Failed => {
                        state.line(&mut out, 0, &format!("✗ failed: {}", error.clone().unwrap_or_default()))
                    }
                    RunStatus::Cancelled => state.line(&mut out, 0, "✗ cancelled"),
                }
            }
            Payload::FlowFinished { .. }
            | Payload::AgentFinished { .. }
            | Payload::StateChange { .. }
            | Payload::LlmResponse { .. }
            | Payload::FlowResult { .. } => {}
        }
    }
}

/// Asks `escalate to human` questions at the terminal (when there is one).
pub struct TerminalHuman;

impl Human for TerminalHuman {
    fn ask<'a>(&'a self, message: &'a str) -> BoxFuture<'a, Option<String>> {
        Box::pin(async move {
            if !std::io::stdin().is_terminal() {
                return None;
            }
            let message = message.to_string();
            tokio::task::spawn_blocking(move || {
                eprint!("{message}\n> ");
                let mut answer = String::new();
                std::io::stdin().read_line(&mut answer).ok()?;
                Some(answer.trim_end().to_string())
            })
            .await
            .ok()
            .flatten()
        })
    }
}
