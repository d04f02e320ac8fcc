//! Reading a `SendStreamingMessage` (1.0) or `message/stream` (0.3) answer:
//! Server-Sent Events whose data are JSON-RPC responses, each a task, a
//! message, a status update or an artifact update of the call's task. Each
//! becomes an [`Update`] for the run's events; the one that ends the call
//! (a final state, or a message) gives the same [`Outcome`] `SendMessage`
//! would have. Anything else in the stream is an error that says what came.

use serde_json::{Value, json};

use super::error::CallError;
use super::wire::{self, Outcome, short};
use crate::tools::Update;

/// Splits a Server-Sent Events byte stream into its events' data. It holds
/// at most the event being read; the caller bounds the stream as a whole.
#[derive(Default)]
pub struct Sse {
    line: Vec<u8>,
    data: Option<String>,
}

impl Sse {
    /// Reads `bytes`; the data of each event they complete, in order.
    /// Comments (keep-alives) and the `event`, `id` and `retry` fields are
    /// skipped; a line that is not one of those, or not UTF-8, is an error.
    pub fn feed(&mut self, bytes: &[u8]) -> Result<Vec<String>, CallError> {
        let mut done = Vec::new();
        for &byte in bytes {
            if byte != b'\n' {
                self.line.push(byte);
                continue;
            }
            let mut line = std::mem::take(&mut self.line);
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            let line = String::from_utf8(line).map_err(|_| CallError::NotUtf8Line)?;
            if line.is_empty() {
                done.extend(self.data.take());
                continue;
            }
            if line.starts_with(':') {
                continue;
            }
            let (field, value) = line.split_once(':').unwrap_or((line.as_str(), ""));
            let value = value.strip_prefix(' ').unwrap_or(value);
            match field {
                "data" => match &mut self.data {
                    Some(data) => {
                        data.push('\n');
                        data.push_str(value);
                    }
                    None => self.data = Some(value.to_string()),
                },
                "event" | "id" | "retry" => {}
                _ => return Err(CallError::NotSse(short(&line))),
            }
        }
        Ok(done)
    }
}

/// The call's task as its stream tells it.
#[derive(Default)]
pub struct Follow {
    task_id: Option<String>,
    context_id: Option<String>,
    /// The artifacts so far, by id, in the order they came.
    artifacts: Vec<(String, Vec<Value>)>,
    state: String,
}

impl Follow {
    /// Following the stream of an answer to the task `task_id`, or of a new
    /// task (`None`: the first event names it).
    pub fn new(task_id: Option<&str>) -> Follow {
        Follow { task_id: task_id.map(str::to_string), ..Follow::default() }
    }

    /// The task the stream is about, once known.
    pub fn task_id(&self) -> Option<&str> {
        self.task_id.as_deref()
    }

    /// What one event (a JSON-RPC response) says: the update to report and,
    /// when it ends the call, the outcome.
    pub fn event(&mut self, response: &Value) -> Result<(Update, Option<Outcome>), CallError> {
        if let Some(error) = wire::rpc_error(response) {
            return Err(error);
        }
        let Some(result) = response.get("result").filter(|r| r.is_object()) else {
            return Err(CallError::NotRpcResponse { what: "a stream event" });
        };
        let (kind, object) = kind_of(result).ok_or(CallError::UnknownStreamEvent)?;
        let id_field = if kind == "task" { "id" } else { "taskId" };
        if let Some(id) = object.get(id_field).and_then(Value::as_str) {
            match &self.task_id {
                Some(known) if known != id => {
                    return Err(CallError::OtherTask(short(id)));
                }
                Some(_) => {}
                None => self.task_id = Some(id.to_string()),
            }
        } else if kind != "message" {
            return Err(CallError::NoTask(kind));
        }
        if let Some(context) = object.get("contextId").and_then(Value::as_str) {
            self.context_id = Some(context.to_string());
        }
        let task_id = self.task_id.clone().unwrap_or_default();
        match kind {
            "message" => {
                let text = wire::parts_text(object.get("parts"));
                let update = Update { task_id, state: "message".to_string(), text: short(&text) };
                Ok((update, Some(Outcome::Answer(text))))
            }
            "artifact" => {
                let artifact = object.get("artifact").unwrap_or(&Value::Null);
                let id = artifact.get("artifactId").and_then(Value::as_str).unwrap_or_default().to_string();
                let parts = artifact.get("parts").and_then(Value::as_array).cloned().unwrap_or_default();
                let text = wire::parts_text(Some(&Value::Array(parts.clone())));
                let append = object.get("append").and_then(Value::as_bool).unwrap_or(false);
                match self.artifacts.iter_mut().find(|(known, _)| *known == id) {
                    Some((_, known)) if append => known.extend(parts),
                    Some((_, known)) => *known = parts,
                    None => self.artifacts.push((id, parts)),
                }
                let state = if self.state.is_empty() { "working".to_string() } else { self.state.clone() };
                Ok((Update { task_id, state, text: short(&text) }, None))
            }
            _ => {
                // A task, or a status update.
                if let Some(artifacts) = object.get("artifacts").and_then(Value::as_array) {
                    for artifact in artifacts {
                        let id = artifact.get("artifactId").and_then(Value::as_str).unwrap_or_default();
                        let parts = artifact.get("parts").and_then(Value::as_array).cloned().unwrap_or_default();
                        match self.artifacts.iter_mut().find(|(known, _)| known == id) {
                            Some((_, known)) => *known = parts,
                            None => self.artifacts.push((id.to_string(), parts)),
                        }
                    }
                }
                let status = object.get("status").unwrap_or(&Value::Null);
                self.state = wire::state_name(status.get("state").and_then(Value::as_str).unwrap_or_default());
                let said = status.get("message").map(|m| wire::parts_text(m.get("parts"))).unwrap_or_default();
                let update = Update { task_id: task_id.clone(), state: self.state.clone(), text: short(&said) };
                let artifacts: Vec<Value> =
                    self.artifacts.iter().map(|(id, parts)| json!({"artifactId": id, "parts": parts})).collect();
                let task =
                    json!({"id": task_id, "contextId": self.context_id, "status": status, "artifacts": artifacts});
                let outcome = wire::task_outcome(&task)?;
                let ends = !matches!(outcome, Outcome::Working { .. });
                Ok((update, ends.then_some(outcome)))
            }
        }
    }
}

/// A stream result's kind (`task`, `message`, `status`, `artifact`) and its
/// object: 1.0 wraps it in a field naming it, 0.3 tags it with `kind`.
fn kind_of(result: &Value) -> Option<(&'static str, &Value)> {
    for (field, kind) in
        [("task", "task"), ("message", "message"), ("statusUpdate", "status"), ("artifactUpdate", "artifact")]
    {
        if let Some(object) = result.get(field).filter(|o| o.is_object()) {
            return Some((kind, object));
        }
    }
    let kind = match result.get("kind").and_then(Value::as_str)? {
        "task" => "task",
        "message" => "message",
        "status-update" => "status",
        "artifact-update" => "artifact",
        _ => return None,
    };
    Some((kind, result))
}

#[cfg(test)]
mod tests;
