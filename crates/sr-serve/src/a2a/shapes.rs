//! A2A's objects (Task, Message, Part, Artifact and the stream's update
//! events) made from the server's runs, in the JSON of each protocol
//! version: 1.0's ProtoJSON (`TASK_STATE_COMPLETED`, `ROLE_AGENT`, a part is
//! `{"text"}` or `{"data"}`, results wrapped by kind) and 0.3's (`completed`,
//! `agent`, parts and objects tagged with `kind`). A context is a session, a
//! task is a run.

use serde_json::{Value, json};

use super::rpc::{RpcError, Version};
use crate::store::{RunRow, RunStatus};

/// The task state each version (1.0, 0.3) names a run's status with.
fn names(status: RunStatus) -> (&'static str, &'static str) {
    match status {
        RunStatus::Queued => ("TASK_STATE_SUBMITTED", "submitted"),
        RunStatus::Running => ("TASK_STATE_WORKING", "working"),
        RunStatus::Paused | RunStatus::InDoubt => ("TASK_STATE_INPUT_REQUIRED", "input-required"),
        RunStatus::Done => ("TASK_STATE_COMPLETED", "completed"),
        RunStatus::Failed => ("TASK_STATE_FAILED", "failed"),
        RunStatus::Cancelled => ("TASK_STATE_CANCELED", "canceled"),
    }
}

pub fn state(status: RunStatus, version: Version) -> &'static str {
    let (v10, v03) = names(status);
    match version {
        Version::V10 => v10,
        Version::V03 => v03,
    }
}

/// The run statuses a 1.0 task state (or its number) stands for.
pub fn statuses_of(state: &Value) -> Option<Vec<RunStatus>> {
    let name = match state {
        Value::String(name) => name.clone(),
        Value::Number(n) => {
            let all = [
                "UNSPECIFIED",
                "SUBMITTED",
                "WORKING",
                "COMPLETED",
                "FAILED",
                "CANCELED",
                "INPUT_REQUIRED",
                "REJECTED",
                "AUTH_REQUIRED",
            ];
            format!("TASK_STATE_{}", all.get(usize::try_from(n.as_u64()?).ok()?)?)
        }
        _ => return None,
    };
    if matches!(name.as_str(), "TASK_STATE_REJECTED" | "TASK_STATE_AUTH_REQUIRED") {
        return Some(Vec::new());
    }
    let found: Vec<RunStatus> = RunStatus::ALL.into_iter().filter(|s| names(*s).0 == name).collect();
    (!found.is_empty()).then_some(found)
}

/// What a task shows beside its run's row.
#[derive(Default)]
pub struct View {
    /// What a paused run asks (`escalate to human`).
    pub question: Option<String>,
    /// The schema of the run's result, when the program declares one.
    pub schema: Option<Value>,
    pub history: bool,
    pub artifacts: bool,
}

pub fn task(run: &RunRow, version: Version, view: &View) -> Value {
    let mut task = json!({
        "id": run.id,
        "contextId": run.session,
        "status": status(run, version, view.question.as_deref()),
    });
    if view.artifacts
        && let Some(artifact) = artifact(run, version, view.schema.as_ref())
    {
        task["artifacts"] = json!([artifact]);
    }
    if view.history {
        task["history"] = json!([message(version, false, vec![text_part(version, &run.message)], run)]);
    }
    if version == Version::V03 {
        task["kind"] = json!("task");
    }
    task
}

fn status(run: &RunRow, version: Version, question: Option<&str>) -> Value {
    let mut status = json!({"state": state(run.status, version)});
    let said = match run.status {
        RunStatus::Paused => {
            question.or(Some("The task waits for your answer: send it as a message with this taskId."))
        }
        // The question, which ends by asking for retry, skip or fail: a
        // text reply of one of them decides (`runs::answer`).
        RunStatus::InDoubt => run.error.as_deref(),
        RunStatus::Failed | RunStatus::Cancelled => run.error.as_deref(),
        _ => None,
    };
    if let Some(said) = said {
        status["message"] = message(version, true, vec![text_part(version, said)], run);
    }
    status
}

/// A message of the task: the agent's (`agent`) or the user's.
pub fn message(version: Version, agent: bool, parts: Vec<Value>, run: &RunRow) -> Value {
    let id = uuid::Uuid::new_v4().to_string();
    match version {
        Version::V10 => json!({
            "messageId": id,
            "role": if agent { "ROLE_AGENT" } else { "ROLE_USER" },
            "parts": parts,
            "taskId": run.id,
            "contextId": run.session,
        }),
        Version::V03 => json!({
            "kind": "message",
            "messageId": id,
            "role": if agent { "agent" } else { "user" },
            "parts": parts,
            "taskId": run.id,
            "contextId": run.session,
        }),
    }
}

pub fn text_part(version: Version, text: &str) -> Value {
    match version {
        Version::V10 => json!({"text": text}),
        Version::V03 => json!({"kind": "text", "text": text}),
    }
}

/// The run's result: a text part for text, a data part (with the schema in
/// the artifact's metadata, when known) for anything else.
pub fn artifact(run: &RunRow, version: Version, schema: Option<&Value>) -> Option<Value> {
    let result = run.result.as_ref().filter(|_| run.status == RunStatus::Done)?;
    let part = match (result, version) {
        (Value::String(text), _) => text_part(version, text),
        (data, Version::V10) => json!({"data": data, "mediaType": "application/json"}),
        (data, Version::V03) => json!({"kind": "data", "data": data}),
    };
    let mut artifact = json!({"artifactId": "result", "name": "result", "parts": [part]});
    if let Some(schema) = schema.filter(|_| !result.is_string()) {
        artifact["metadata"] = json!({"schema": schema});
    }
    Some(artifact)
}

pub fn status_update(run: &RunRow, version: Version, question: Option<&str>) -> Value {
    let mut update = json!({"taskId": run.id, "contextId": run.session, "status": status(run, version, question)});
    if version == Version::V03 {
        update["kind"] = json!("status-update");
        update["final"] = json!(run.status.is_stopped());
    }
    update
}

pub fn artifact_update(run: &RunRow, version: Version, artifact: Value) -> Value {
    let mut update = json!({"taskId": run.id, "contextId": run.session, "artifact": artifact, "lastChunk": true});
    if version == Version::V03 {
        update["kind"] = json!("artifact-update");
        update["append"] = json!(false);
    }
    update
}

/// What a stream or a send answers with: 1.0 wraps each object in a field
/// naming its kind; 0.3's objects carry their `kind`.
pub fn wrapped(version: Version, kind: &str, value: Value) -> Value {
    match version {
        Version::V10 => json!({ kind: value }),
        Version::V03 => value,
    }
}

/// The text of a message's parts, one part a line: a text part's text, a
/// data part's JSON. Files are refused (content type not supported).
pub fn message_text(message: &Value) -> Result<String, RpcError> {
    let Some(parts) = message.get("parts").and_then(Value::as_array).filter(|p| !p.is_empty()) else {
        return Err(RpcError::invalid_params("message.parts: must be a non-empty list of parts"));
    };
    let mut lines = Vec::with_capacity(parts.len());
    for (index, part) in parts.iter().enumerate() {
        let kind = part.get("kind").and_then(Value::as_str);
        if let Some(text) = part.get("text") {
            let Some(text) = text.as_str() else {
                return Err(RpcError::invalid_params(format!("message.parts[{index}].text: must be a string")));
            };
            lines.push(text.to_string());
        } else if let Some(data) = part.get("data") {
            lines.push(data.to_string());
        } else if kind == Some("file") || ["raw", "url", "file"].iter().any(|f| part.get(f).is_some()) {
            return Err(RpcError::content_type(format!(
                "message.parts[{index}]: file parts are not supported; send text or data parts"
            )));
        } else {
            return Err(RpcError::invalid_params(format!("message.parts[{index}]: a part needs text, data or a file")));
        }
    }
    Ok(lines.join("\n"))
}
