//! A2A's objects (Task, Message, Part, Artifact and the stream's update
//! events) made from the server's runs, in the JSON of each protocol
//! version: 1.0's ProtoJSON (`TASK_STATE_COMPLETED`, `ROLE_AGENT`, a part is
//! `{"text"}` or `{"data"}`, results wrapped by kind) and 0.3's (`completed`,
//! `agent`, parts and objects tagged with `kind`). A context is a session, a
//! task is a run.

use base64::Engine;
use serde_json::{Value, json};
use sr_api::a2a::{Artifact, FileContent, Message, Part, Task, TaskArtifactUpdate, TaskStatus, TaskStatusUpdate};

use super::files::Written;
use super::record::Sent;
use super::rpc::Version;
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
    /// The newest messages of the history shown, at most (0: no history).
    pub history: usize,
    pub artifacts: bool,
    /// The messages the client sent (none for a run started over API v1).
    pub sent: Vec<Sent>,
    /// The files the run wrote (once it is done).
    pub files: Vec<Written>,
}

pub fn task(run: &RunRow, version: Version, view: &View) -> Value {
    let task = Task {
        id: run.id.clone(),
        context_id: run.session.clone(),
        status: status(run, version, view.question.as_deref()),
        artifacts: view.artifacts.then(|| artifacts(run, version, view)).filter(|a| !a.is_empty()),
        history: (view.history > 0).then(|| {
            let all = history(run, version, &view.sent);
            let skip = all.len().saturating_sub(view.history);
            all.into_iter().skip(skip).collect()
        }),
        kind: (version == Version::V03).then(|| "task".to_string()),
    };
    to_json(&task)
}

/// The messages the client sent, each with its own `messageId` and its
/// context parts after its text; a run started over API v1 shows its input
/// under an id made from the run's.
fn history(run: &RunRow, version: Version, sent: &[Sent]) -> Vec<Message> {
    if sent.is_empty() {
        let mut message = message(version, false, vec![text_part(version, &run.message)], run);
        message.message_id = format!("{}-input", run.id);
        return vec![message];
    }
    sent.iter()
        .map(|sent| {
            let texts = std::iter::once(&sent.text).chain(&sent.context);
            let mut message = message(version, false, texts.map(|text| text_part(version, text)).collect(), run);
            message.message_id.clone_from(&sent.message_id);
            message
        })
        .collect()
}

/// The run's result, then the files it wrote, once it is done.
pub fn artifacts(run: &RunRow, version: Version, view: &View) -> Vec<Artifact> {
    let mut all: Vec<Artifact> = artifact(run, version, view.schema.as_ref()).into_iter().collect();
    if run.status == RunStatus::Done && !view.files.is_empty() {
        all.push(Artifact {
            artifact_id: "files".to_string(),
            name: "files".to_string(),
            parts: view.files.iter().map(|file| file_part(version, file)).collect(),
            metadata: None,
        });
    }
    all
}

fn file_part(version: Version, file: &Written) -> Part {
    let bytes = base64::engine::general_purpose::STANDARD.encode(&file.bytes);
    match version {
        Version::V10 => Part {
            raw: Some(bytes),
            filename: Some(file.path.clone()),
            media_type: Some(file.media_type.to_string()),
            ..Part::default()
        },
        Version::V03 => Part {
            file: Some(FileContent {
                bytes,
                name: Some(file.path.clone()),
                mime_type: Some(file.media_type.to_string()),
            }),
            kind: Some("file".to_string()),
            ..Part::default()
        },
    }
}

/// A wire object as JSON.
fn to_json(object: &impl serde::Serialize) -> Value {
    serde_json::to_value(object).expect("A2A's wire objects have string keys only")
}

fn status(run: &RunRow, version: Version, question: Option<&str>) -> TaskStatus {
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
    TaskStatus {
        state: state(run.status, version).to_string(),
        message: said.map(|said| message(version, true, vec![text_part(version, said)], run)),
    }
}

/// A message of the task: the agent's (`agent`) or the user's.
pub fn message(version: Version, agent: bool, parts: Vec<Part>, run: &RunRow) -> Message {
    let role = match (version, agent) {
        (Version::V10, true) => "ROLE_AGENT",
        (Version::V10, false) => "ROLE_USER",
        (Version::V03, true) => "agent",
        (Version::V03, false) => "user",
    };
    Message {
        message_id: uuid::Uuid::new_v4().to_string(),
        role: role.to_string(),
        parts,
        task_id: Some(run.id.clone()),
        context_id: Some(run.session.clone()),
        kind: (version == Version::V03).then(|| "message".to_string()),
    }
}

pub fn text_part(version: Version, text: &str) -> Part {
    let kind = (version == Version::V03).then(|| "text".to_string());
    Part { text: Some(text.to_string()), kind, ..Part::default() }
}

/// The run's result: a text part for text, a data part (with the schema in
/// the artifact's metadata, when known) for anything else.
fn artifact(run: &RunRow, version: Version, schema: Option<&Value>) -> Option<Artifact> {
    let result = run.result.as_ref().filter(|_| run.status == RunStatus::Done)?;
    let part = match (result, version) {
        (Value::String(text), _) => text_part(version, text),
        (data, Version::V10) => {
            Part { data: Some(data.clone()), media_type: Some("application/json".into()), ..Part::default() }
        }
        (data, Version::V03) => Part { data: Some(data.clone()), kind: Some("data".into()), ..Part::default() },
    };
    Some(Artifact {
        artifact_id: "result".to_string(),
        name: "result".to_string(),
        parts: vec![part],
        metadata: schema.filter(|_| !result.is_string()).map(|schema| json!({"schema": schema})),
    })
}

pub fn status_update(run: &RunRow, version: Version, question: Option<&str>) -> Value {
    let v03 = version == Version::V03;
    to_json(&TaskStatusUpdate {
        task_id: run.id.clone(),
        context_id: run.session.clone(),
        status: status(run, version, question),
        kind: v03.then(|| "status-update".to_string()),
        r#final: v03.then(|| run.status.is_stopped()),
    })
}

pub fn artifact_update(run: &RunRow, version: Version, artifact: Artifact) -> Value {
    let v03 = version == Version::V03;
    to_json(&TaskArtifactUpdate {
        task_id: run.id.clone(),
        context_id: run.session.clone(),
        artifact,
        last_chunk: true,
        kind: v03.then(|| "artifact-update".to_string()),
        append: v03.then_some(false),
    })
}

/// What a stream or a send answers with: 1.0 wraps each object in a field
/// naming its kind; 0.3's objects carry their `kind`.
pub fn wrapped(version: Version, kind: &str, value: Value) -> Value {
    match version {
        Version::V10 => json!({ kind: value }),
        Version::V03 => value,
    }
}
