//! Workloads: anything runnable, found by name or path, run on a session with a
//! message, producing a stream of events.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use futures::StreamExt;
use futures::stream::BoxStream;
use serde_json::Value;
use sr_hir::RootDatabase;
use sr_llm::Message;

use crate::compile::{CompileError, Compiled, compile_path};
use crate::event::{Emitter, Event, EventSink, Payload};
use crate::run::{Env, RunOutcome, Runtime};
use crate::session::SessionStore;

/// Something a user can run.
pub trait Workload: Send + Sync {
    fn name(&self) -> &str;
    /// Runs on `session` with the user's `message`; events arrive as they happen
    /// (already stored in the session), the last being `run_finished`.
    fn run(&self, session: SessionRef, message: String) -> BoxStream<'static, Event>;
}

/// A session a run belongs to.
#[derive(Clone)]
pub struct SessionRef {
    pub store: SessionStore,
    pub id: String,
    /// The run's number, reserved by the caller (with its lease); `None`
    /// reserves one when the run starts.
    pub run: Option<i64>,
}

/// The directories under the current directory that workloads named on the
/// command line are searched in, in order. The file tools and the cli sandbox
/// keep them read-only ([`crate::protected::search_dirs`]).
pub const LOCAL_SEARCH_DIRS: [&str; 2] = ["agents", ".streetrace/agents"];

/// The extensions of workload files.
pub const EXTENSIONS: [&str; 3] = ["sr", "yaml", "yml"];

/// Directories searched for workloads named on the command line, in order:
/// `$STREETRACE_AGENT_PATHS` (colon-separated), [`LOCAL_SEARCH_DIRS`] under
/// `cwd`, `~/.streetrace/agents`.
pub fn search_path(cwd: &Path) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::env::var("STREETRACE_AGENT_PATHS")
        .map(|v| v.split(':').filter(|p| !p.is_empty()).map(PathBuf::from).collect())
        .unwrap_or_default();
    dirs.extend(LOCAL_SEARCH_DIRS.iter().map(|dir| cwd.join(dir)));
    if let Some(home) = std::env::var_os("HOME") {
        dirs.push(PathBuf::from(home).join(".streetrace/agents"));
    }
    dirs
}

/// The file of a workload given by path or by name (`reviewer` finds
/// `reviewer.sr`, `reviewer.yaml` or `reviewer.yml`, names compared in
/// lowercase). A path is a text with a `/` or a workload extension: a bare
/// name is only searched for, so a file a tool made in the current directory
/// (`./reviewer`) is never what `sr run reviewer` runs.
pub fn discover(name_or_path: &str, cwd: &Path) -> Result<PathBuf, String> {
    let direct = cwd.join(name_or_path);
    let is_path = name_or_path.contains('/')
        || Path::new(name_or_path).extension().and_then(|e| e.to_str()).is_some_and(|e| EXTENSIONS.contains(&e));
    if is_path && direct.is_file() {
        return Ok(direct);
    }
    let wanted = name_or_path.to_lowercase();
    let dirs = search_path(cwd);
    for dir in &dirs {
        let Ok(entries) = std::fs::read_dir(dir) else { continue };
        let mut entries: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
        entries.sort();
        for path in entries {
            let stem = path.file_stem().map(|s| s.to_string_lossy().to_lowercase()).unwrap_or_default();
            let ext = path.extension().and_then(|e| e.to_str()).unwrap_or_default();
            if stem == wanted && EXTENSIONS.contains(&ext) {
                return Ok(path);
            }
        }
    }
    Err(format!(
        "no workload '{name_or_path}': {}found in {}",
        if is_path { "not a file, and not " } else { "not " },
        dirs.iter().map(|d| d.display().to_string()).collect::<Vec<_>>().join(", ")
    ))
}

/// Compiles a `.sr` file or an upstream YAML agent.
pub fn load(db: &mut RootDatabase, path: &Path) -> Result<Arc<Compiled>, CompileError> {
    match path.extension().and_then(|e| e.to_str()) {
        Some("yaml" | "yml") => crate::yaml::load(path),
        _ => compile_path(db, path),
    }
}

/// A compiled program as a workload. Each run gets a fresh environment from
/// `env`, so runs are independent.
pub struct ProgramWorkload {
    pub name: String,
    pub program: Arc<Compiled>,
    pub env: Arc<dyn Fn() -> Env + Send + Sync>,
    /// Extra sinks (a terminal, the debugger) beside the session.
    pub sinks: Vec<Arc<dyn EventSink>>,
    pub invocation_id: Arc<dyn Fn() -> String + Send + Sync>,
    /// The run's secrets, replaced in events, session rows and tool results.
    pub redactor: Arc<sr_llm::Redactor>,
}

impl Workload for ProgramWorkload {
    fn name(&self) -> &str {
        &self.name
    }

    fn run(&self, session: SessionRef, message: String) -> BoxStream<'static, Event> {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel::<Event>();
        let mut session = session;
        let run = match session.run {
            Some(run) => run,
            None => match session.store.reserve_run(&session.id, None) {
                Ok(run) => run,
                Err(e) => return refused(format!("cannot reserve a run of session {}: {e}", session.id)),
            },
        };
        session.run = Some(run);
        let mut sinks = vec![session.store.sink(&session.id, run)];
        sinks.extend(self.sinks.iter().cloned());
        sinks.push(Arc::new(move |e: &Event| {
            let _ = tx.send(e.clone());
        }));
        let emitter = Emitter::new((self.invocation_id)(), sinks).with_redactor(self.redactor.clone());
        let runtime = Runtime::new(self.program.clone(), (self.env)());
        let task = tokio::spawn(async move {
            run_in_session(&runtime, &session, emitter, message).await;
        });
        tokio_stream_of(rx, AbortOnDrop(task.abort_handle()))
    }
}

/// Runs with the session's conversation and records the new turns.
pub async fn run_in_session(runtime: &Runtime, session: &SessionRef, emitter: Emitter, message: String) -> RunOutcome {
    let history = session.store.messages(&session.id).map_err(|e| e.to_string()).and_then(|messages| {
        messages
            .into_iter()
            .map(serde_json::from_value::<Message>)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| format!("a message of session {} is not a conversation message: {e}", session.id))
    });
    let _ = session.store.set_status(&session.id, "running");
    let outcome = match history {
        Ok(history) => runtime.run(emitter.clone(), message.clone(), history).await,
        Err(e) => runtime.refuse(&emitter, format!("cannot read the conversation: {e}")),
    };
    let mut turn = vec![serde_json::to_value(Message::user(message)).unwrap_or(Value::Null)];
    if let Some(result) = &outcome.result {
        turn.push(serde_json::to_value(Message::assistant(crate::value::display(result))).unwrap_or(Value::Null));
    }
    let redactor = emitter.redactor();
    turn.iter_mut().for_each(|message| {
        redactor.redact_value(message);
    });
    // A run stopped in doubt about a tool call has not finished its turn: it
    // is recorded when the run, decided, continues (its requests must not
    // see its own message twice).
    let in_doubt = runtime.env.journal.undecided().is_some();
    if !in_doubt && let Err(e) = session.store.append_messages(&session.id, &turn) {
        emitter.emit(Payload::Warning { message: format!("cannot save the conversation: {e}") });
    }
    let (status, run_status) = match outcome.status {
        // Resumed like an interrupted run, its decider deciding.
        crate::event::RunStatus::Paused if in_doubt => ("paused", crate::in_doubt::STATUS),
        crate::event::RunStatus::Paused => ("paused", "paused"),
        crate::event::RunStatus::Failed => ("failed", "failed"),
        crate::event::RunStatus::Completed => ("open", "completed"),
    };
    if let Some(run) = session.run {
        let _ = session.store.set_run_status(&session.id, run, run_status);
    }
    let _ = session.store.set_status(&session.id, status);
    outcome
}

/// The events of a run that cannot start: an error and `run_finished`.
fn refused(message: String) -> BoxStream<'static, Event> {
    let events = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = events.clone();
    let emitter = Emitter::new(
        "refused",
        vec![Arc::new(move |e: &Event| sink.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).push(e.clone()))],
    );
    emitter.emit(Payload::Error { message: message.clone(), location: None });
    emitter.emit(Payload::RunFinished {
        status: crate::event::RunStatus::Failed,
        result: None,
        error: Some(message),
        usage: Default::default(),
    });
    let events = std::mem::take(&mut *events.lock().unwrap_or_else(|poisoned| poisoned.into_inner()));
    futures::stream::iter(events).boxed()
}

/// Ends a run's task when whoever reads its events lets go of them (a case
/// abandoned at its timeout): its model and tool calls are dropped, and the
/// processes they started with them.
struct AbortOnDrop(tokio::task::AbortHandle);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

fn tokio_stream_of(mut rx: tokio::sync::mpsc::UnboundedReceiver<Event>, run: AbortOnDrop) -> BoxStream<'static, Event> {
    futures::stream::poll_fn(move |cx| {
        let _running = &run;
        rx.poll_recv(cx)
    })
    .boxed()
}
