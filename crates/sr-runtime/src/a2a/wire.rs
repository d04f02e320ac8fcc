//! What an A2A client reads and writes, as plain functions over JSON: the
//! interface a card offers, the `SendMessage` request (and its streaming form)
//! of each protocol version, and what a reply's task or message means for the
//! tool's result.

use serde_json::{Value, json};

use super::error::{CallError, CardProblem};

/// The protocol version an endpoint speaks, which decides the method names
/// and the shapes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Version {
    V10,
    V03,
}

/// A JSON-RPC endpoint of a card.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    pub url: String,
    pub version: Version,
    /// The card's `capabilities.streaming`: calls stream.
    pub streaming: bool,
}

/// The JSON-RPC interface of `card` (read from `card_url`), 1.0 preferred:
/// 1.0's `supportedInterfaces` (`protocolBinding: JSONRPC`), else 0.3's
/// `url` with `preferredTransport` JSONRPC (or none) or one of its
/// `additionalInterfaces`. The endpoint must be on the card's origin (scheme,
/// host and port): a card cannot send the tool, and its key, to another host.
pub fn endpoint(card: &Value, card_url: &str) -> Result<Endpoint, CardProblem> {
    if !card.is_object() {
        return Err(CardProblem::NotAnObject);
    }
    let streaming = card.pointer("/capabilities/streaming") == Some(&Value::Bool(true));
    let jsonrpc =
        |binding: Option<&Value>| binding.and_then(Value::as_str).is_some_and(|b| b.eq_ignore_ascii_case("JSONRPC"));
    let interfaces = card.get("supportedInterfaces").and_then(Value::as_array).into_iter().flatten();
    let mut found: Vec<Endpoint> = interfaces
        .filter(|i| jsonrpc(i.get("protocolBinding")))
        .filter_map(|i| {
            let url = i.get("url")?.as_str()?.to_string();
            let version = match i.get("protocolVersion").and_then(Value::as_str).unwrap_or("1.0") {
                v if v.starts_with("1.") || v == "1" => Version::V10,
                v if v.starts_with("0.3") => Version::V03,
                _ => return None,
            };
            Some(Endpoint { url, version, streaming })
        })
        .collect();
    if let Some(url) = card.get("url").and_then(Value::as_str)
        && card.get("preferredTransport").is_none_or(|t| jsonrpc(Some(t)))
    {
        found.push(Endpoint { url: url.to_string(), version: Version::V03, streaming });
    }
    let additional = card.get("additionalInterfaces").and_then(Value::as_array).into_iter().flatten();
    for interface in additional.filter(|i| jsonrpc(i.get("transport"))) {
        if let Some(url) = interface.get("url").and_then(Value::as_str) {
            found.push(Endpoint { url: url.to_string(), version: Version::V03, streaming });
        }
    }
    found.sort_by_key(|e| e.version != Version::V10);
    let Some(first) = found.first() else {
        return Err(CardProblem::NoJsonRpcInterface);
    };
    let Some(card_origin) = origin(card_url) else {
        return Err(CardProblem::NotHttp(card_url.to_string()));
    };
    found
        .iter()
        .find(|e| origin(&e.url).as_deref() == Some(card_origin.as_str()))
        .cloned()
        .ok_or_else(|| CardProblem::OffOrigin { url: short(&first.url), origin: card_origin })
}

/// `scheme://host:port`, lowercased, with the scheme's default port made explicit.
fn origin(url: &str) -> Option<String> {
    let (scheme, rest) = url.split_once("://")?;
    let scheme = scheme.to_ascii_lowercase();
    let default = match scheme.as_str() {
        "http" => "80",
        "https" => "443",
        _ => return None,
    };
    let authority = rest.split(['/', '?', '#']).next()?;
    let host_port = authority.rsplit('@').next()?.to_ascii_lowercase();
    if host_port.is_empty() {
        return None;
    }
    // `[::1]:8080`, `[::1]`, `host:8080`, `host`.
    let has_port = match host_port.rfind(']') {
        Some(close) => host_port[close..].contains(':'),
        None => host_port.contains(':'),
    };
    Some(if has_port { format!("{scheme}://{host_port}") } else { format!("{scheme}://{host_port}:{default}") })
}

/// A JSON-RPC `SendMessage` (1.0) or `message/send` (0.3) request of `text`,
/// continuing `task` (with its context) when the remote asked for input.
pub fn send_request(version: Version, message_id: &str, text: &str, task: Option<(&str, Option<&str>)>) -> Value {
    let mut message = match version {
        Version::V10 => json!({"messageId": message_id, "role": "ROLE_USER", "parts": [{"text": text}]}),
        Version::V03 => {
            json!({"kind": "message", "messageId": message_id, "role": "user", "parts": [{"kind": "text", "text": text}]})
        }
    };
    if let Some((task_id, context_id)) = task {
        message["taskId"] = json!(task_id);
        if let Some(context_id) = context_id {
            message["contextId"] = json!(context_id);
        }
    }
    let method = match version {
        Version::V10 => "SendMessage",
        Version::V03 => "message/send",
    };
    json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": {"message": message}})
}

/// The streaming form of [`send_request`]: `SendStreamingMessage` (1.0) or
/// `message/stream` (0.3).
pub fn stream_request(version: Version, message_id: &str, text: &str, task: Option<(&str, Option<&str>)>) -> Value {
    let mut request = send_request(version, message_id, text, task);
    request["method"] = json!(match version {
        Version::V10 => "SendStreamingMessage",
        Version::V03 => "message/stream",
    });
    request
}

/// A JSON-RPC `GetTask` (1.0) or `tasks/get` (0.3) request.
pub fn get_task_request(version: Version, task_id: &str) -> Value {
    let method = match version {
        Version::V10 => "GetTask",
        Version::V03 => "tasks/get",
    };
    json!({"jsonrpc": "2.0", "id": 2, "method": method, "params": {"id": task_id, "historyLength": 0}})
}

/// What a reply comes to.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// The answer: the artifacts' (else the final message's) parts, a line each.
    Answer(String),
    /// The remote asks a question and waits for the answer in the same task.
    InputRequired { question: String, task_id: String, context_id: Option<String> },
    /// Still running: ask again with `GetTask`.
    Working { task_id: String },
    /// Failed, rejected, cancelled or wanting authentication.
    Failed(String),
}

/// A JSON-RPC response: its result as an [`Outcome`], or its error.
pub fn outcome(response: &Value) -> Result<Outcome, CallError> {
    if let Some(error) = rpc_error(response) {
        return Err(error);
    }
    let Some(result) = response.get("result") else {
        return Err(CallError::NotRpcResponse { what: "the reply" });
    };
    // 1.0 wraps the result in a field naming its kind; 0.3 tags it with `kind`.
    if let Some(task) = result.get("task") {
        return task_outcome(task);
    }
    if let Some(message) = result.get("message") {
        return Ok(Outcome::Answer(parts_text(message.get("parts"))));
    }
    match result.get("kind").and_then(Value::as_str) {
        Some("message") => Ok(Outcome::Answer(parts_text(result.get("parts")))),
        _ if result.get("status").is_some() => task_outcome(result),
        _ => Err(CallError::NeitherTaskNorMessage),
    }
}

/// A JSON-RPC response's error, with its code.
pub fn rpc_error(response: &Value) -> Option<CallError> {
    let error = response.get("error")?;
    let code = error.get("code").map_or_else(|| "?".to_string(), Value::to_string);
    let message = short(error.get("message").and_then(Value::as_str).unwrap_or("no message"));
    Some(CallError::Rpc { code, message })
}

/// A task state in 0.3's spelling: `TASK_STATE_INPUT_REQUIRED` (1.0) and
/// `input-required` (0.3) are both `input-required`.
pub fn state_name(state: &str) -> String {
    state.trim_start_matches("TASK_STATE_").to_ascii_lowercase().replace('_', "-")
}

/// What a task (of a reply, or as a stream left it) comes to.
pub fn task_outcome(task: &Value) -> Result<Outcome, CallError> {
    let id = task.get("id").and_then(Value::as_str).unwrap_or_default().to_string();
    let status = task.get("status").unwrap_or(&Value::Null);
    let state = state_name(status.get("state").and_then(Value::as_str).unwrap_or_default());
    let said = status.get("message").map(|m| parts_text(m.get("parts"))).unwrap_or_default();
    match state.as_str() {
        "completed" => {
            let artifacts = task.get("artifacts").and_then(Value::as_array).into_iter().flatten();
            let text: Vec<String> = artifacts.map(|a| parts_text(a.get("parts"))).filter(|t| !t.is_empty()).collect();
            Ok(Outcome::Answer(if text.is_empty() { said } else { text.join("\n") }))
        }
        "input-required" => Ok(Outcome::InputRequired {
            question: said,
            task_id: id,
            context_id: task.get("contextId").and_then(Value::as_str).map(str::to_string),
        }),
        "submitted" | "working" if !id.is_empty() => Ok(Outcome::Working { task_id: id }),
        "failed" | "rejected" | "canceled" | "cancelled" | "auth-required" => {
            let why = if said.is_empty() { String::new() } else { format!(": {said}") };
            Ok(Outcome::Failed(format!("the remote task is {state}{why}")))
        }
        other => Err(CallError::UnknownState(short(other))),
    }
}

/// The parts, a line each: a text part's text, a data part's JSON; file parts
/// are named, not fetched.
pub fn parts_text(parts: Option<&Value>) -> String {
    let parts = parts.and_then(Value::as_array).into_iter().flatten();
    let lines: Vec<String> = parts
        .filter_map(|part| {
            if let Some(text) = part.get("text").and_then(Value::as_str) {
                Some(text.to_string())
            } else if let Some(data) = part.get("data") {
                // 0.3 nests the value in `data`; 1.0's `data` is the value.
                Some(data.to_string())
            } else if part.get("url").is_some() || part.get("raw").is_some() || part.get("file").is_some() {
                Some("[a file part, not fetched]".to_string())
            } else {
                None
            }
        })
        .collect();
    lines.join("\n")
}

/// At most 200 characters of a remote's text in our messages.
pub fn short(text: &str) -> String {
    match text.char_indices().nth(200) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_string(),
    }
}

#[cfg(test)]
mod tests;
