//! A case run's transcript, grouped by step: the model calls (request and
//! response), tool calls (call and result), code steps, transfers and errors
//! first, numbered in the order they happened; then, folded, the other
//! events (the run, flows and agents starting and ending, variables, logs).

use std::collections::HashMap;
use std::fmt::Write;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use serde_json::{Map, Value};
use sr_runtime::tools::{Jail, Opened};

use super::escape;

/// Steps shown per case; the rest are counted.
const MAX_STEPS: usize = 200;
/// Other events shown per case; the rest are counted.
const MAX_OTHER: usize = 60;
/// Characters shown of a step's arguments, results and text, and of an event.
const MAX_CHARS: usize = 240;
/// Bytes of an events file read for its transcript.
const MAX_EVENTS_BYTES: u64 = 1 << 20;

/// One step as it is shown.
struct Step {
    class: &'static str,
    head: String,
    body: Option<String>,
}

/// The transcript of the events file `events`, relative to the jail's root
/// (beneath it, no symlink out, a regular file).
pub(super) fn transcript(page: &mut String, jail: Option<&Jail>, events: &Path) {
    let Some(Ok(Opened::File(file))) = jail.map(|j| j.open_read(events)) else {
        page.push_str("<p>no transcript</p>\n");
        return;
    };
    let mut steps: Vec<Step> = Vec::new();
    let mut other: Vec<String> = Vec::new();
    // Steps waiting for their end: model calls by path, tool calls by call id.
    let mut models: HashMap<String, usize> = HashMap::new();
    let mut tools: HashMap<String, usize> = HashMap::new();
    for line in BufReader::new(file.take(MAX_EVENTS_BYTES)).lines().map_while(Result::ok) {
        let Ok(Value::Object(mut event)) = serde_json::from_str::<Value>(&line) else { continue };
        let kind = event.remove("type").and_then(|t| t.as_str().map(str::to_string)).unwrap_or_default();
        let path = event.remove("path").map(|p| path_text(&p)).unwrap_or_default();
        for key in ["seq", "invocation_id", "ts", "at_ms"] {
            event.remove(key);
        }
        let text = |key: &str| event.get(key).map(short).unwrap_or_default();
        match kind.as_str() {
            "model_request" => {
                models.insert(path.clone(), steps.len());
                steps.push(Step {
                    class: "model",
                    head: format!("model {} · {path} · {} message(s)", text("model"), text("messages")),
                    body: None,
                });
            }
            "model_response" => {
                let usage = event.get("usage").cloned().unwrap_or_default();
                let calls = event.get("tool_calls").and_then(Value::as_array).map_or(Vec::new(), |calls| {
                    calls.iter().map(|c| c.as_str().unwrap_or_default().to_string()).collect()
                });
                let mut head = format!(
                    "model {} · {path} · {}/{} tokens · {}",
                    text("model"),
                    usage["input_tokens"],
                    usage["output_tokens"],
                    text("finish_reason")
                );
                if !calls.is_empty() {
                    let _ = write!(head, " · calls {}", calls.join(", "));
                }
                let said = text("text");
                let step = Step { class: "model", head, body: (!said.is_empty()).then_some(said) };
                match models.remove(&path) {
                    Some(at) => steps[at] = step,
                    None => steps.push(step),
                }
            }
            "tool_call" => {
                tools.insert(text("call_id"), steps.len());
                steps.push(Step {
                    class: "tool",
                    head: format!("tool {}({}) · {path}", text("tool"), text("args")),
                    body: None,
                });
            }
            "tool_result" => {
                let failed = event.get("is_error").and_then(Value::as_bool).unwrap_or(false);
                let result = format!("{} {}", if failed { "error:" } else { "→" }, text("result"));
                match tools.remove(&text("call_id")) {
                    Some(at) => steps[at].body = Some(result),
                    None => steps.push(Step {
                        class: "tool",
                        head: format!("tool {} · {path}", text("tool")),
                        body: Some(result),
                    }),
                }
            }
            "code_started" => steps.push(Step {
                class: "tool",
                head: format!("code step {} · {path}", text("step")),
                body: Some(text("code")),
            }),
            "code_finished" => steps.push(Step {
                class: "tool",
                head: format!("code step {} {}", text("step"), text("outcome")),
                body: event.get("message").map(short),
            }),
            "transfer" => steps.push(Step {
                class: "tool",
                head: format!("transfer {} → {}", text("from"), text("to")),
                body: None,
            }),
            "error" | "escalation" | "human_input_requested" => {
                steps.push(Step { class: "error", head: format!("{kind} · {path}"), body: Some(fields(&event)) });
            }
            "run_finished" if event.get("error").is_some_and(|e| !e.is_null()) => {
                steps.push(Step { class: "error", head: format!("run {}", text("status")), body: Some(text("error")) });
            }
            "text_delta" => {}
            _ => other.push(format!("<b>{}</b> {} {}", escape(&kind), escape(&path), escape(&fields(&event)))),
        }
    }
    page.push_str("<div class=\"transcript\">");
    let _ = write!(page, "<ol class=\"steps\">");
    for step in steps.iter().take(MAX_STEPS) {
        let (name, rest) = step.head.split_once(' ').unwrap_or((&step.head, ""));
        let _ = write!(page, "<li class=\"step-{}\"><b>{}</b> {}", step.class, escape(name), escape(rest));
        if let Some(body) = &step.body {
            let _ = write!(page, "<br>{}", escape(body));
        }
        page.push_str("</li>");
    }
    page.push_str("</ol>\n");
    if steps.len() > MAX_STEPS {
        let _ = writeln!(
            page,
            "<p>{} more step(s) in {}</p>",
            steps.len() - MAX_STEPS,
            escape(&events.display().to_string())
        );
    }
    if !other.is_empty() {
        let _ = write!(
            page,
            "<details class=\"other\"><summary>{} other event(s): the run, flows, agents, variables, logs</summary><ol>",
            other.len()
        );
        for line in other.iter().take(MAX_OTHER) {
            let _ = write!(page, "<li>{line}</li>");
        }
        page.push_str("</ol>");
        if other.len() > MAX_OTHER {
            let _ =
                write!(page, "<p>{} more in {}</p>", other.len() - MAX_OTHER, escape(&events.display().to_string()));
        }
        page.push_str("</details>");
    }
    page.push_str("</div>\n");
}

/// `flow:main › agent:reviewer`.
fn path_text(path: &Value) -> String {
    match path {
        Value::Array(parts) => parts.iter().map(|p| p.as_str().unwrap_or_default()).collect::<Vec<_>>().join(" › "),
        other => other.to_string(),
    }
}

/// A value as text (strings as they are), cut at [`MAX_CHARS`].
fn short(value: &Value) -> String {
    let text = match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    };
    cut(&text)
}

fn fields(event: &Map<String, Value>) -> String {
    cut(&Value::Object(event.clone()).to_string())
}

fn cut(text: &str) -> String {
    match text.char_indices().nth(MAX_CHARS) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}
