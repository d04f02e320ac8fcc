//! The one composition root for runs. `sr run` and the debugger
//! describe a run as a [`LaunchSpec`]; [`launch`] assembles what it needs from
//! the outside world (providers, MCP servers, tools, the jail, the session,
//! its journal and lease, the recording) as a [`Launched`], so every front end
//! runs programs the same way.

mod resume;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use futures::StreamExt;
use serde_json::Value;
use sr_llm::{Cassette, HttpClient, HttpOptions, Provider, Recorder, Redactor, Replayer, Router};

use crate::compile::Compiled;
use crate::event::{EventSink, Payload, RunStatus};
use crate::hook::StepHook;
use crate::human::{Answers, Human};
use crate::ids::{self, IdKind};
use crate::lease::Lease;
use crate::mcp::{McpHub, McpOptions};
use crate::record::{LiveTools, ReplayedTools, Resumed, ResumedTools, ToolGate, meta_entry, recorded_invocation};
use crate::session::{PausedRun, SessionStore};
use crate::state::StateDir;
use crate::tools::Jail;
use crate::workload::{ProgramWorkload, SessionRef, Workload};
use crate::{Env, RunOptions};

pub use resume::Resume;

/// What to run, and against what.
pub struct LaunchSpec {
    pub program: Arc<Compiled>,
    /// The message the run starts with (a resumed run keeps its own).
    pub message: String,
    /// The directory file tools work in.
    pub work_dir: PathBuf,
    /// Where sessions, journals and leases live; `None` runs without a
    /// session (the debugger), so nothing is journaled.
    pub storage: Option<Storage>,
    /// Mirror every model exchange and tool result to this file.
    pub record: Option<PathBuf>,
    /// Serve model exchanges and tool results from this recording (offline).
    pub replay: Option<Recording>,
    pub options: RunOptions,
    /// Answers `escalate to human` when no recorded answer is left.
    pub human: Arc<dyn Human>,
}

/// A recording a run is served from.
pub enum Recording {
    /// A file the user named.
    File(PathBuf),
    /// A recording already read (`sr eval` reads cassettes through a jail on
    /// their directory).
    Text(String),
}

/// The session a run belongs to.
pub struct Storage {
    pub state: StateDir,
    /// The sessions database.
    pub sessions: PathBuf,
    /// Continue this session (default: a new one).
    pub session: Option<String>,
    /// Continue the last run of this session, with this answer when it is
    /// paused for a human.
    pub resume: Option<(String, Option<String>)>,
}

impl Storage {
    /// The state directory and the sessions database: an explicit sessions
    /// file alone puts the state (journals, leases) next to it.
    pub fn resolve(state_dir: Option<&Path>, sessions: Option<&Path>, work_dir: &Path) -> Result<Storage, String> {
        let beside = sessions.map(|db| db.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new(".")));
        let state = StateDir::resolve(state_dir.or(beside), work_dir)?;
        let sessions = sessions.map(PathBuf::from).unwrap_or_else(|| state.sessions_db());
        Ok(Storage { state, sessions, session: None, resume: None })
    }
}

/// A run ready to start.
pub struct Launched {
    pub program: Arc<Compiled>,
    pub message: String,
    /// Answers recorded by the run this one resumes.
    pub answers: Vec<String>,
    pub invocation_id: String,
    pub provider: Arc<dyn Provider>,
    pub tools: Arc<dyn ToolGate>,
    pub jail: Jail,
    pub human: Arc<dyn Human>,
    pub options: RunOptions,
    pub mcp: Arc<McpHub>,
    /// The run's secrets, replaced in everything it writes or sends.
    pub redactor: Arc<Redactor>,
    /// The stored run, when the spec has storage.
    pub stored: Option<StoredRun>,
    /// Problems with the setup that do not stop the run, for the user.
    pub warnings: Vec<String>,
}

/// A run reserved in a session, alive while its lease is held.
pub struct StoredRun {
    pub store: SessionStore,
    pub session: String,
    pub run: i64,
    pub journal: PathBuf,
    lease: Lease,
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq)]
pub struct Finished {
    /// `None` when the run never reported its end.
    pub status: Option<RunStatus>,
    pub result: Option<Value>,
    pub error: Option<String>,
}

/// Assembles the run `spec` describes. Errors are one line each, for the
/// user; nothing is left reserved when one is returned.
pub fn launch(spec: LaunchSpec) -> Result<Launched, String> {
    launch_with(spec, None)
}

/// Like [`launch`], for a run that continues `recording` (a debugger going
/// back in time): the recorded model exchanges and tool results are served
/// first, the first request the recording does not have and every one after
/// it go live; `spec.record` gets the recording followed by what is new.
pub fn launch_continuing(spec: LaunchSpec, recording: String) -> Result<Launched, String> {
    launch_with(spec, Some(recording))
}

fn launch_with(spec: LaunchSpec, continued: Option<String>) -> Result<Launched, String> {
    let LaunchSpec { program, message, work_dir, storage, record, replay, options, human } = spec;
    if let Some(storage) = &storage {
        for id in storage.session.iter().chain(storage.resume.as_ref().map(|(id, _)| id)) {
            ids::check(IdKind::Session, id).map_err(|e| e.to_string())?;
        }
    }
    let replay_text = match replay {
        Some(Recording::File(file)) => {
            Some(std::fs::read_to_string(&file).map_err(|e| format!("cannot read {}: {e}", file.display()))?)
        }
        Some(Recording::Text(text)) => Some(text),
        None => None,
    };
    let opened = match &storage {
        Some(storage) => Some(open_store(storage)?),
        None => None,
    };
    let resume = match (&storage, &opened) {
        (Some(Storage { resume: Some((id, input)), state, .. }), Some(store)) => {
            Some(resume::find(store, state, id, input.as_deref())?)
        }
        _ => None,
    };
    let (message, answers) = match &resume {
        Some(resume) => (resume.message.clone(), resume.answers.clone()),
        None => (message, Vec::new()),
    };
    let journal_text = resume.as_ref().map(|r| r.journal.clone()).or(continued);
    let invocation_id =
        replay_text.as_deref().or(journal_text.as_deref()).and_then(recorded_invocation).unwrap_or_else(new_id);
    let mcp = Arc::new(match &replay_text {
        Some(text) => McpHub::from_recording(text).map_err(|e| format!("cannot read the recording: {e}"))?,
        // Servers connect when an agent first uses them.
        None => McpHub::new(&program.tools, &McpOptions::default(), &|name| std::env::var(name).ok()),
    });
    let mut jail = Jail::new(&work_dir).map_err(|e| format!("bad work directory {}: {e}", work_dir.display()))?;
    let cwd = std::env::current_dir().unwrap_or_default();
    for path in storage.iter().flat_map(|s| [&s.state.dir, &s.sessions]).chain(record.as_ref()) {
        jail = jail.forbid(&cwd.join(path));
    }
    // The workload and its imports are read-only to the tools a model drives.
    for source in std::iter::once(&program.root).chain(program.sources.iter().map(|s| &s.path)) {
        jail = jail.protect(&cwd.join(source));
    }
    let human: Arc<dyn Human> =
        if answers.is_empty() { human } else { Arc::new(Answers(std::sync::Mutex::new(answers.clone().into()))) };
    let mut warnings = Vec::new();
    let redactor = secrets(&mcp, &mut warnings);
    let stored = match (storage, opened) {
        (Some(storage), Some(store)) => {
            let session = storage.resume.map(|(id, _)| id).or(storage.session).unwrap_or_else(new_id);
            Some(reserve(store, &storage.state, session, &program)?)
        }
        _ => None,
    };
    let seams = match &replay_text {
        Some(text) => replayed(text, mcp.clone()),
        None => {
            let meta = Meta { invocation_id: &invocation_id, program: &program, message: &message, answers: &answers };
            live(
                stored.as_ref().map(|s| s.journal.as_path()),
                record.as_deref(),
                journal_text.as_deref(),
                meta,
                &mcp,
                &redactor,
            )
        }
    };
    let (provider, tools) = match seams {
        Ok(seams) => seams,
        Err(e) => {
            if let Some(stored) = stored {
                let _ = stored.store.set_run_status(&stored.session, stored.run, "failed");
                stored.lease.release();
            }
            return Err(e);
        }
    };
    Ok(Launched {
        program,
        message,
        answers,
        invocation_id,
        provider,
        tools,
        jail,
        human,
        options,
        mcp,
        redactor,
        stored,
        warnings,
    })
}

impl Launched {
    /// The environment of one run of the program, stepping through `hook`.
    pub fn env(&self, hook: Arc<dyn StepHook>) -> Env {
        Env {
            provider: self.provider.clone(),
            hook,
            jail: self.jail.clone(),
            tools: self.tools.clone(),
            human: self.human.clone(),
            options: self.options.clone(),
        }
    }

    /// Runs in the stored session, every event also going to `sinks`; then
    /// closes the MCP servers, keeps what a paused run needs to resume, and
    /// releases the run's lease.
    pub async fn run(self, sinks: Vec<Arc<dyn EventSink>>) -> Result<Finished, String> {
        let Some(stored) = self.stored else {
            return Err("a run without storage cannot run in a session".to_string());
        };
        let invocation_id = self.invocation_id.clone();
        let env_parts = (self.provider, self.tools, self.human, self.jail, self.options);
        let workload = ProgramWorkload {
            name: self.program.root.display().to_string(),
            program: self.program,
            env: Arc::new(move || Env {
                provider: env_parts.0.clone(),
                hook: Arc::new(crate::hook::NoHook),
                jail: env_parts.3.clone(),
                tools: env_parts.1.clone(),
                human: env_parts.2.clone(),
                options: env_parts.4.clone(),
            }),
            sinks,
            invocation_id: Arc::new(move || invocation_id.clone()),
            redactor: self.redactor,
        };
        let session = SessionRef { store: stored.store.clone(), id: stored.session.clone(), run: Some(stored.run) };
        let mut events = workload.run(session, self.message.clone());
        let mut finished = Finished { status: None, result: None, error: None };
        while let Some(event) = events.next().await {
            if let Payload::RunFinished { status, result, error, .. } = event.payload {
                finished = Finished { status: Some(status), result, error };
            }
        }
        self.mcp.close().await;
        let saved = match finished.status {
            Some(RunStatus::Completed) => stored.store.set_pause(&stored.session, None),
            Some(RunStatus::Paused) => {
                let paused = PausedRun { input: self.message, answers: self.answers };
                stored.store.set_pause(&stored.session, Some(&paused))
            }
            _ => Ok(()),
        };
        stored.lease.release();
        saved.map_err(|e| format!("cannot save the paused run: {e}"))?;
        let lost = stored.store.take_lost();
        if let Some(first) = lost.first() {
            return Err(format!("{} event(s) of the run were not saved: {first}", lost.len()));
        }
        Ok(finished)
    }
}

fn open_store(storage: &Storage) -> Result<SessionStore, String> {
    let store = SessionStore::open(&storage.sessions)
        .map_err(|e| format!("cannot open {}: {e}", storage.sessions.display()))?;
    // Runs whose process died are marked interrupted, by their leases.
    store.recover().map_err(|e| format!("cannot read {}: {e}", storage.sessions.display()))?;
    Ok(store)
}

/// Reserves the next run of `session`, held by a new lease.
fn reserve(store: SessionStore, state: &StateDir, session: String, program: &Compiled) -> Result<StoredRun, String> {
    store
        .ensure(&session, &program.root.display().to_string())
        .map_err(|e| format!("cannot create session {session}: {e}"))?;
    // Held until the run ends or its process dies: while it is held, the run is alive.
    let lease = Lease::take(&state.leases(), &new_id()).map_err(|e| format!("cannot take the run's lease: {e}"))?;
    let run = match store.reserve_run(&session, Some(lease.path())) {
        Ok(run) => run,
        Err(e) => {
            lease.release();
            return Err(format!("cannot start a run of session {session}: {e}"));
        }
    };
    let journal = match state.journal(&session, run) {
        Ok(journal) => journal,
        Err(e) => {
            let _ = store.set_run_status(&session, run, "failed");
            lease.release();
            return Err(e.to_string());
        }
    };
    Ok(StoredRun { store, session, run, journal, lease })
}

type Seams = (Arc<dyn Provider>, Arc<dyn ToolGate>);

/// How the run started, written first in its journal and recording.
struct Meta<'a> {
    invocation_id: &'a str,
    program: &'a Compiled,
    message: &'a str,
    answers: &'a [String],
}

/// Everything served from a recording.
fn replayed(text: &str, mcp: Arc<McpHub>) -> Result<Seams, String> {
    let provider = Replayer::parse(text).map_err(|e| format!("cannot read the recording: {e}"))?;
    let tools = ReplayedTools::from_cassette(text, mcp).map_err(|e| format!("cannot read the recording: {e}"))?;
    Ok((Arc::new(provider), Arc::new(tools)))
}

/// Real providers and tools, recorded to the run's journal and mirrored to
/// `record`; a resumed run's journal starts as a copy of its predecessor's,
/// whose model exchanges and tool results are served first.
fn live(
    journal: Option<&Path>,
    record: Option<&Path>,
    journal_text: Option<&str>,
    meta: Meta,
    mcp: &Arc<McpHub>,
    redactor: &Arc<Redactor>,
) -> Result<Seams, String> {
    let http = HttpClient::new(HttpOptions::default()).map_err(|e| e.to_string())?;
    let router: Arc<dyn Provider> = Arc::new(Router::from_env(http));
    let inherited = journal_text.unwrap_or_default();
    let mut cassettes = journal.into_iter().chain(record).map(|path| open_cassette(path, inherited, redactor.clone()));
    let cassette = match (cassettes.next().transpose()?, cassettes.next().transpose()?) {
        (Some(first), Some(mirror)) => Some(first.mirrored_to(Arc::new(mirror))),
        (first, _) => first,
    };
    let Some(cassette) = cassette.map(Arc::new) else {
        return Ok((router, Arc::new(LiveTools { cassette: None, mcp: mcp.clone() })));
    };
    let workload = crate::compile::display_path(&meta.program.root);
    let mut entry = meta_entry(meta.invocation_id, &workload, meta.message);
    entry["answers"] = serde_json::json!(meta.answers);
    cassette.append(&entry).map_err(|e| e.to_string())?;
    mcp.record(cassette.clone()).map_err(|e| format!("cannot record the MCP tools: {e}"))?;
    let recorder: Arc<dyn Provider> = Arc::new(Recorder::new(router, cassette.clone()));
    let live_tools = LiveTools { cassette: Some(cassette), mcp: mcp.clone() };
    match journal_text {
        Some(text) => {
            let journal = Replayer::parse_completed(text).map_err(|e| format!("cannot read the journal: {e}"))?;
            let replayed = ReplayedTools::from_cassette(text, mcp.clone())?;
            Ok((
                Arc::new(Resumed { journal, live: recorder }),
                Arc::new(ResumedTools { journal: replayed, live: live_tools }),
            ))
        }
        None => Ok((recorder, Arc::new(live_tools))),
    }
}

/// A new cassette at `path` holding `inherited` (already redacted lines).
fn open_cassette(path: &Path, inherited: &str, redactor: Arc<Redactor>) -> Result<Cassette, String> {
    let cannot = |e: &dyn std::fmt::Display| format!("cannot write {}: {e}", path.display());
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| cannot(&e))?;
    }
    std::fs::write(path, inherited).map_err(|e| cannot(&e))?;
    let cassette = Cassette::append_to(path).map_err(|e| cannot(&e))?;
    Ok(cassette.redacting(redactor))
}

/// The run's secrets: the API keys in the environment and the values of the
/// variables MCP servers use. Values too short to redact are refused, with a
/// warning for the user (the hub's own warnings become events).
fn secrets(mcp: &McpHub, warnings: &mut Vec<String>) -> Arc<Redactor> {
    let redactor = Redactor::new();
    for name in Router::key_variables() {
        if let Ok(value) = std::env::var(name)
            && redactor.add(value.trim()).is_err()
        {
            warnings.push(format!(
                "{name} is shorter than {} characters: it is not treated as a secret",
                Redactor::MIN_LEN
            ));
        }
    }
    mcp.add_secrets(&redactor);
    Arc::new(redactor)
}

fn new_id() -> String {
    uuid::Uuid::new_v4().to_string()
}
