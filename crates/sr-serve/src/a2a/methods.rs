//! The methods that answer with one JSON-RPC response: send (blocking or
//! not), get, list and cancel. Runs are queued, answered and cancelled
//! through the functions API v1 uses (`runs::queue`, `runs::answer`,
//! `runs::cancel_run`), so A2A and /v1 share every rule of the run path.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value, json};
use sr_runtime::ids::{self, IdKind};

use super::card::{default_entry, output_schema};
use super::inbound::{self, Inbound};
use super::record::{self, Delivered, Sent};
use super::rpc::{self, RpcError, Version};
use super::shapes::{self, View};
use crate::store::{NewRun, RunRow, RunStatus, StoreError};
use crate::workloads::Workload;
use crate::{Server, runs};

/// Tasks `ListTasks` returns at most (and by default).
const MAX_PAGE: u64 = 100;
const DEFAULT_PAGE: u64 = 50;

/// One request to one workload's agent.
pub struct Call {
    pub server: Arc<Server>,
    pub workload: Arc<Workload>,
    pub version: Version,
}

impl Call {
    /// Task `id` of this agent; another workload's run is not found here.
    pub async fn find(&self, id: &str) -> Result<RunRow, RpcError> {
        let run = self.server.store.run(id).await.map_err(|e| RpcError::from(crate::error::ApiError::from(e)))?;
        run.filter(|run| run.workload == self.workload.name).ok_or_else(|| RpcError::task_not_found(id))
    }

    /// What a task of `run` shows (its artifacts too, with `artifacts`; the
    /// files it wrote among them, with `files`).
    pub async fn view(&self, run: &RunRow, history: usize, artifacts: bool, files: bool) -> Result<View, RpcError> {
        let program = &self.workload.program;
        let entry = run.entry.clone().or_else(|| default_entry(program));
        let question = if run.status == RunStatus::Paused { question(&self.server, &run.id).await } else { None };
        let record = record::read(&self.server, &run.id).await.map_err(internal)?;
        let files = match artifacts && files && run.status == RunStatus::Done {
            true => super::files::written(&self.server, run).await.map_err(|e| RpcError::internal(e.to_string()))?,
            false => Vec::new(),
        };
        Ok(View {
            question,
            schema: entry.and_then(|entry| output_schema(program, &entry)),
            history,
            artifacts,
            sent: record.sent,
            files,
        })
    }

    /// The task, with at most `history` of its newest messages.
    pub async fn task(&self, run: &RunRow, history: usize) -> Result<Value, RpcError> {
        Ok(shapes::task(run, self.version, &self.view(run, history, true, true).await?))
    }
}

fn internal(e: StoreError) -> RpcError {
    RpcError::from(crate::error::ApiError::from(e))
}

/// What a paused run asks: its last `human_input_requested` event.
pub async fn question(server: &Server, run: &str) -> Option<String> {
    let last = server.store.last_event(run).await.ok()?;
    let events = server.store.events_after(run, last.saturating_sub(16), 16).await.ok()?;
    events.iter().rev().find_map(|(_, text)| {
        let event: Value = serde_json::from_str(text).ok()?;
        (event["type"] == "human_input_requested").then(|| event["message"].as_str().map(str::to_string)).flatten()
    })
}

/// Sends a message: a new task (queued as a run), or, with the `taskId` of
/// a task waiting for input, its answer. Returns the task's id.
pub async fn deliver(call: &Call, params: &Map<String, Value>) -> Result<String, RpcError> {
    let Some(message) = params.get("message").and_then(Value::as_object) else {
        return Err(RpcError::invalid_params("message: missing or not an object"));
    };
    let Inbound { sent, files } = inbound::read(message)?;
    let context = rpc::string(message, "contextId").map_err(prefixed("message."))?;
    if let Some(task) = rpc::string(message, "taskId").map_err(prefixed("message."))? {
        let run = call.find(task).await?;
        if let Some(context) = context
            && context != run.session
        {
            return Err(RpcError::invalid_params(format!(
                "message.contextId: task {task} is in context {}, not {context}",
                run.session
            )));
        }
        if run.status.is_ended() {
            return Err(RpcError::unsupported(format!(
                "task {task} has ended ({}): send the message without taskId to start a new task",
                shapes::state(run.status, call.version)
            )));
        }
        // An answer's files and context reach the attempt it starts (on
        // whichever replica): they are kept before the answer queues it.
        let paused = run.status == RunStatus::Paused;
        let id = sent.message_id.clone();
        let text = sent.text.clone();
        if paused {
            keep(call, task, sent.clone(), &files).await?;
        }
        if let Err(error) = runs::answer(&call.server, task, &text).await {
            if paused {
                unkeep(call, task, &id).await;
            }
            return Err(error.into());
        }
        if !paused {
            keep(call, task, sent, &[]).await?;
        }
        return Ok(task.to_string());
    }
    let skill = skill(params).or_else(|| skill(message)).transpose()?;
    if let Some(skill) = skill
        && !call.workload.has_entry(skill)
    {
        let program = &call.workload.program;
        let skills: Vec<&str> = program.flows.keys().chain(program.agents.keys()).map(|n| n.as_str()).collect();
        return Err(RpcError::invalid_params(format!(
            "metadata.skill: {} has no skill {skill:?} (skills: {})",
            call.workload.name,
            skills.join(", ")
        )));
    }
    let session = match context {
        Some(context) => {
            ids::check(IdKind::Session, context)
                .map_err(|e| RpcError::invalid_params(format!("message.contextId: {e}")))?;
            context.to_string()
        }
        None => uuid::Uuid::new_v4().to_string(),
    };
    let id = uuid::Uuid::new_v4().to_string();
    let entry = skill.map(str::to_string).or_else(|| call.workload.default_entry());
    let input = sent.text.clone();
    let new = NewRun {
        id: &id,
        session: &session,
        workload: &call.workload.name,
        entry: entry.as_deref(),
        message: &input,
        model: None,
        a2a: true,
    };
    keep(call, &id, sent, &files).await?;
    let queued = runs::queue(&call.server, &new, true).await;
    if queued.is_err()
        && let Err(error) = call.server.store.forget_a2a(&id).await
    {
        tracing::warn!(%error, task = %id, "the A2A record of a task that was not queued is left in the store");
    }
    queued.map_err(|e| match e.code {
        "session_busy" => RpcError::unsupported(format!(
            "context {session} has a task in progress; this agent runs one task of a context at a time: \
             wait for it, answer it or cancel it, or use another context"
        )),
        _ => e.into(),
    })?;
    Ok(id)
}

/// Records a message the client sent to task `run`, with the files it
/// brought (their bytes kept by the store) and its context parts (the
/// context file, rewritten with them).
async fn keep(call: &Call, run: &str, sent: Sent, files: &[inbound::File]) -> Result<(), RpcError> {
    let (delivered, bytes) = inbound::delivery(&sent.message_id, files);
    record::update(&call.server, run, &bytes, |record| {
        record.sent.push(sent.clone());
        let mut brought = delivered.clone();
        if !sent.context.is_empty() {
            let sha256 = inbound::sha256(record.context_text().as_bytes());
            let path = inbound::CONTEXT_FILE.to_string();
            brought.push(Delivered { path, sha256, message: sent.message_id.clone(), placed: false });
        }
        record.files.retain(|kept| !brought.iter().any(|d| d.path == kept.path));
        record.files.extend(brought);
        true
    })
    .await
    .map(drop)
    .map_err(|e| RpcError::internal(format!("cannot record the message: {e}")))
}

/// Takes back what `keep` recorded of message `message` (its answer was refused).
async fn unkeep(call: &Call, run: &str, message: &str) {
    let taken = record::update(&call.server, run, &[], |record| {
        record.sent.retain(|sent| sent.message_id != message);
        record.files.retain(|file| file.message != message);
        true
    });
    if let Err(error) = taken.await {
        tracing::warn!(%error, task = %run, "a refused answer's message is left in the task's A2A record");
    }
}

fn skill(holder: &Map<String, Value>) -> Option<Result<&str, RpcError>> {
    match holder.get("metadata")?.get("skill")? {
        Value::String(skill) => Some(Ok(skill)),
        _ => Some(Err(RpcError::invalid_params("metadata.skill: must be a string"))),
    }
}

fn prefixed(prefix: &'static str) -> impl Fn(RpcError) -> RpcError {
    move |e| RpcError { message: format!("{prefix}{}", e.message), ..e }
}

/// `SendMessage`/`message/send`: the task once it has ended or waits for
/// input, or at once when the client asks not to wait.
pub async fn send(call: &Call, params: &Map<String, Value>, id: &str) -> Result<Value, RpcError> {
    let configuration = params.get("configuration");
    let flag = |name: &str| configuration.and_then(|c| c.get(name)).and_then(Value::as_bool);
    let immediately = match call.version {
        Version::V10 => flag("returnImmediately") == Some(true),
        Version::V03 => flag("blocking") == Some(false),
    };
    let run = if immediately { call.find(id).await? } else { runs::wait_for_end(&call.server, id).await? };
    let history = configuration.and_then(|c| c.get("historyLength")).and_then(Value::as_u64);
    Ok(shapes::wrapped(call.version, "task", call.task(&run, shown(history)).await?))
}

/// How many history messages a `historyLength` shows: all when it is not given.
fn shown(history_length: Option<u64>) -> usize {
    history_length.map_or(usize::MAX, |n| usize::try_from(n).unwrap_or(usize::MAX))
}

/// `GetTask`/`tasks/get`.
pub async fn get(call: &Call, params: &Map<String, Value>) -> Result<Value, RpcError> {
    let id = rpc::required(params, "id")?;
    let history = rpc::count(params, "historyLength", u64::from(u32::MAX))?;
    let run = call.find(id).await?;
    call.task(&run, shown(history)).await
}

/// `ListTasks` (1.0): this agent's tasks, newest first, of one context or
/// of the server's newest runs, one page.
pub async fn list(call: &Call, params: &Map<String, Value>) -> Result<Value, RpcError> {
    let context = rpc::string(params, "contextId")?;
    let statuses =
        match params.get("status") {
            None | Some(Value::Null) => None,
            Some(state) => Some(shapes::statuses_of(state).ok_or_else(|| {
                RpcError::invalid_params(format!("status: {state} is not a task state (TASK_STATE_…)"))
            })?),
        };
    let page = match rpc::count(params, "pageSize", MAX_PAGE)? {
        None => DEFAULT_PAGE,
        Some(0) => return Err(RpcError::invalid_params(format!("pageSize: must be from 1 to {MAX_PAGE}"))),
        Some(n) => n,
    };
    if rpc::string(params, "pageToken")?.is_some_and(|token| !token.is_empty()) {
        return Err(RpcError::invalid_params("pageToken: this agent lists one page; no token continues it"));
    }
    let history = rpc::count(params, "historyLength", u64::from(u32::MAX))?;
    let artifacts = match params.get("includeArtifacts") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => return Err(RpcError::invalid_params("includeArtifacts: must be true or false")),
    };
    let runs: Vec<RunRow> = match context {
        Some(context) => call.server.store.session_runs(context).await.map_err(internal)?.into_iter().rev().collect(),
        None => {
            let newest = call.server.store.recent_runs(None, crate::studio_api::MAX_LIMIT).await.map_err(internal)?;
            let mut runs = Vec::with_capacity(newest.len());
            for recent in newest {
                runs.extend(call.server.store.run(&recent.id).await.map_err(internal)?);
            }
            runs
        }
    };
    let kept: Vec<&RunRow> = runs
        .iter()
        .filter(|run| run.workload == call.workload.name)
        .filter(|run| statuses.as_ref().is_none_or(|s| s.contains(&run.status)))
        .collect();
    let mut tasks: Vec<Value> = Vec::new();
    for run in kept.iter().take(page as usize) {
        // The files a run wrote are GetTask's: a page of tasks carries their results only.
        let view = call.view(run, shown(history), artifacts, false).await?;
        tasks.push(shapes::task(run, call.version, &view));
    }
    Ok(json!({"tasks": tasks, "nextPageToken": "", "pageSize": page, "totalSize": kept.len()}))
}

/// `CancelTask`/`tasks/cancel`: the task, canceled (a running one once its
/// run has stopped, waited for a few seconds).
pub async fn cancel(call: &Call, params: &Map<String, Value>) -> Result<Value, RpcError> {
    let id = rpc::required(params, "id")?;
    let run = call.find(id).await?;
    if run.status.is_ended() {
        return Err(RpcError::not_cancelable(format!(
            "task {id} has ended ({}): nothing to cancel",
            shapes::state(run.status, call.version)
        )));
    }
    if runs::cancel_run(&call.server, id).await? == runs::Cancel::Cancelling {
        let _ = tokio::time::timeout(Duration::from_secs(10), runs::wait_for_end(&call.server, id)).await;
    }
    let run = call.find(id).await?;
    call.task(&run, usize::MAX).await
}
