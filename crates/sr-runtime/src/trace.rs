//! A run's events as a compact text trace, for snapshot tests (`expect!`): one
//! line per event, in order, with its producing path, its kind (the event's
//! `type`) and the fields that say what happened. Nothing that changes between
//! two runs of the same program is shown: no sequence numbers, invocation or
//! call ids, directories (an absolute path shows its file name only); long
//! texts are cut.

use std::fmt::Write;
use std::sync::LazyLock;

use regex::Regex;
use serde_json::Value;

use crate::event::{Event, Location, Payload, Usage};

/// Longest text or JSON shown for one field, in characters.
const FIELD_CHARS: usize = 100;

/// The trace of `events`: `PATH KIND FIELDS` per line, `-` for the empty path.
pub fn trace<'a>(events: impl IntoIterator<Item = &'a Event>) -> String {
    let mut out = String::new();
    for event in events {
        let path = if event.path.is_empty() { "-".to_string() } else { event.path.join("/") };
        let _ = writeln!(out, "{path} {}", line(&event.payload).trim_end());
    }
    out
}

fn line(payload: &Payload) -> String {
    match payload {
        Payload::RunStarted { workload, entry, input } => {
            format!("run_started {} entry={entry} input={}", without_dirs(workload), text(input))
        }
        Payload::RunFinished { status, result, error, usage } => {
            let status = serde_json::to_value(status).unwrap_or_default();
            format!(
                "run_finished {}{}{}{}",
                status.as_str().unwrap_or_default(),
                result.as_ref().map(|r| format!(" result={}", json(r))).unwrap_or_default(),
                failure(error.as_ref()),
                tokens(usage)
            )
        }
        Payload::FlowStarted { flow } => format!("flow_started {flow}"),
        Payload::FlowFinished { flow, result, error } => {
            format!("flow_finished {flow} result={}{}", json(result), failure(error.as_ref()))
        }
        Payload::AgentStarted { agent, model, input } => {
            format!("agent_started {agent} model={model} input={}", text(input))
        }
        Payload::AgentFinished { agent, output, usage, error } => {
            format!("agent_finished {agent} output={}{}{}", json(output), failure(error.as_ref()), tokens(usage))
        }
        Payload::ModelRequest { model, messages, tools } => {
            format!("model_request {model} messages={messages} tools=[{}]", tools.join(","))
        }
        Payload::TextDelta { text: delta } => format!("text_delta {}", text(delta)),
        Payload::ModelResponse { model, text: reply, tool_calls, finish_reason, usage } => format!(
            "model_response {model} {finish_reason} text={} calls=[{}]{}",
            text(reply),
            tool_calls.join(","),
            tokens(usage)
        ),
        Payload::ToolCall { tool, args, .. } => format!("tool_call {tool} {}", json(args)),
        Payload::ToolResult { tool, result, is_error, .. } => {
            format!("tool_result {tool}{} {}", if *is_error { " error" } else { "" }, json(result))
        }
        Payload::RemoteUpdate { tool, task_id, state, text: said, .. } => {
            format!("remote_update {tool} task={task_id} {state} {}", text(said))
        }
        Payload::Transfer { from, to } => format!("transfer {from} -> {to}"),
        Payload::StateChange { variable, value } => format!("state_change {variable} = {}", json(value)),
        Payload::Log { message } => format!("log {}", text(message)),
        Payload::Notify { message } => format!("notify {}", text(message)),
        Payload::Warning { message } => format!("warning {}", text(message)),
        Payload::Error { message, location } => format!("error {}{}", text(message), place(location.as_ref())),
        Payload::CodeStarted { step, code } => format!("code_started {step} {}", text(code)),
        Payload::CodeOutput { step, stream, text: output } => format!("code_output {step} {stream} {}", text(output)),
        Payload::CodeFinished { step, outcome, is_error, message } => format!(
            "code_finished {step} {outcome}{}{}",
            if *is_error { " error" } else { "" },
            message.as_ref().map(|m| format!(" {}", text(m))).unwrap_or_default()
        ),
        Payload::HumanInputRequested { message } => format!("human_input_requested {}", text(message)),
        Payload::ToolInDoubt { tool, args, idempotency_key } => {
            format!("tool_in_doubt {tool} {} key={idempotency_key}", json(args))
        }
        Payload::LlmCall { prompt_name, model, .. } => format!("llm_call {prompt_name} model={model}"),
        Payload::LlmResponse { prompt_name, content, is_final } => {
            format!("llm_response {prompt_name}{} {}", if *is_final { " final" } else { "" }, text(content))
        }
        Payload::FlowResult { result } => format!("flow_result {}", json(result)),
        Payload::Escalation { agent_name, result, condition_op, condition_value } => {
            format!("escalation {agent_name} {condition_op} {} result={}", text(condition_value), json(result))
        }
        Payload::HistoryCompaction { strategy, original_tokens, compacted_tokens, messages_removed } => format!(
            "history_compaction {strategy} tokens={original_tokens}->{compacted_tokens} removed={messages_removed}"
        ),
    }
}

/// `text` with the directories of absolute (Unix) paths left out: an absolute
/// path starts a word or follows a quote or a parenthesis (so URLs keep
/// theirs), and no segment holds a backslash (so escapes stay whole).
fn without_dirs(text: &str) -> std::borrow::Cow<'_, str> {
    static DIRS: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r#"(^|[\s'"(])/(?:[^\s/\\:'"]+/)+"#).expect("a valid pattern"));
    DIRS.replace_all(text, "$1")
}

/// A text quoted with escapes, without directories, cut to [`FIELD_CHARS`].
fn text(text: &str) -> String {
    cut(&format!("{text:?}"))
}

fn json(value: &Value) -> String {
    cut(&value.to_string())
}

/// `shown` without directories, cut to [`FIELD_CHARS`].
fn cut(shown: &str) -> String {
    let shown = without_dirs(shown);
    match shown.char_indices().nth(FIELD_CHARS) {
        Some((end, _)) => format!("{}…", &shown[..end]),
        None => shown.into_owned(),
    }
}

fn failure(error: Option<&String>) -> String {
    error.map(|e| format!(" error={}", text(e))).unwrap_or_default()
}

/// Tokens when a model was called, and the cost when it is known.
fn tokens(usage: &Usage) -> String {
    let mut shown = String::new();
    if usage.input_tokens + usage.output_tokens > 0 {
        shown = format!(" tokens={}/{}", usage.input_tokens, usage.output_tokens);
    }
    if let Some(cost) = usage.cost_usd {
        shown.push_str(&format!(" cost={cost:.6}"));
    }
    shown
}

fn place(location: Option<&Location>) -> String {
    location.map(|l| format!(" at {}:{}:{}", without_dirs(&l.file), l.line, l.column)).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn event(path: &[&str], payload: Payload) -> Event {
        Event {
            seq: 7,
            invocation_id: "a-random-id".into(),
            path: path.iter().map(|p| p.to_string()).collect(),
            at_ms: None,
            payload,
        }
    }

    #[test]
    fn a_trace_shows_paths_kinds_and_fields_without_ids_or_directories() {
        let events = [
            event(
                &[],
                Payload::RunStarted { workload: "/tmp/x/a.sr".into(), entry: "main".into(), input: "hi".into() },
            ),
            event(
                &["flow:main", "agent:a"],
                Payload::ToolCall { call_id: "call_9f".into(), tool: "fs".into(), args: json!({"path": "x"}) },
            ),
            event(
                &["flow:main"],
                Payload::Error {
                    message: "no\nway".into(),
                    location: Some(Location { file: "/tmp/x/a.sr".into(), line: 3, column: 5 }),
                },
            ),
            event(&["flow:main"], Payload::Log { message: "é".repeat(120) }),
            event(&["flow:main"], Payload::Warning { message: "/tmp/x/a.sr: see http://h/v1/sse ('/b/c.sr')".into() }),
            event(&["flow:main"], Payload::Notify { message: "\"x\"\n/n/a\n".into() }),
            event(
                &[],
                Payload::RunFinished {
                    status: crate::event::RunStatus::Failed,
                    result: None,
                    error: Some("boom".into()),
                    usage: Usage { input_tokens: 3, output_tokens: 4, cost_usd: Some(0.5) },
                },
            ),
        ];
        expect_test::expect![[r#"
            - run_started a.sr entry=main input="hi"
            flow:main/agent:a tool_call fs {"path":"x"}
            flow:main error "no\nway" at a.sr:3:5
            flow:main log "ééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééé…
            flow:main warning "a.sr: see http://h/v1/sse ('c.sr')"
            flow:main notify "\"x\"\n/n/a\n"
            - run_finished failed error="boom" tokens=3/4 cost=0.500000
        "#]]
        .assert_eq(&trace(&events));
    }
}
