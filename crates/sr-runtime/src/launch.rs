//! The one composition root for runs. `sr run`, `sr eval`, `sr serve` and the
//! debugger describe a run as a [`LaunchSpec`]; [`launch`] assembles what it needs from
//! the outside world (providers, MCP servers, tools, the jail, the session,
//! its journal and lease, the recording) as a [`Launched`], so every front end
//! runs programs the same way.

mod error;
mod resume;
mod stored;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;
use sr_llm::{Cassette, HttpClient, LineCopy, Provider, Redactor, Router};

use crate::compile::Compiled;
use crate::event::{Emitter, EventSink, RunStatus};
use crate::hook::StepHook;
use crate::human::{Answers, Human};
use crate::ids::{self, IdKind};
use crate::in_doubt::{Decider, Question};
use crate::journal::times::EventTimes;
use crate::journal::{Journal, JournalError, Meta, Mode, Recorded, Workspace, cut_torn, torn_warning};
use crate::lease::Lease;
use crate::mcp::{McpHub, McpOptions};
use crate::run::RunOutcome;
use crate::session::SessionStore;
use crate::state::{NoStateDir, StateDir};
use crate::tools::Jail;
use crate::{Env, RunOptions, Runtime};

pub use error::LaunchError;
pub use resume::{Resume, ResumeError};
use stored::{SessionRun, StoredRun};

/// What to run, and against what.
pub struct LaunchSpec {
    pub program: Arc<Compiled>,
    /// The message the run starts with. A resumed run keeps its own, and a
    /// replay starts with its recording's: a message given to a replay must
    /// be that one (empty: none given).
    pub message: String,
    /// The directory file tools work in.
    pub work_dir: PathBuf,
    /// File tools only read the work directory (sr-eval's grading flow
    /// reads the case's, which it must not change).
    pub read_only: bool,
    /// Where sessions, journals and leases live; `None` runs without a
    /// session (the debugger), journaled only to a recording.
    pub storage: Option<Storage>,
    pub models: Models,
    pub options: RunOptions,
    /// Answers `escalate to human` when no recorded answer is left (never
    /// in a replay); its answers are journaled.
    pub human: Arc<dyn Human>,
    /// Decides about a tool call a crash cut off, when its tool is not
    /// idempotent and the journal holds no decision (`crate::in_doubt`).
    pub in_doubt: Arc<dyn Decider>,
}

/// Where the run's model answers come from, and whether its journal is
/// mirrored to a file.
pub enum Models {
    /// The providers the environment configures (`sr_llm::Router`).
    Live,
    /// The environment's providers, the run's journal mirrored to this file.
    Record(PathBuf),
    /// Every model exchange, tool result and value served from this
    /// recording (offline). A replay observes nothing new: it records nothing.
    Replay(Recording),
    /// This provider answers (a scripted model, sr-eval's judge, a model a
    /// program brings). Its run may be recorded too: a test records what a
    /// scripted model answered, to replay it without the script.
    Provider { provider: Arc<dyn Provider>, record: Option<PathBuf> },
}

impl Models {
    /// The models of a command line's `--record FILE` and `--replay FILE`,
    /// which conflict (clap): a recording when one is given, else live.
    pub fn from_flags(record: Option<PathBuf>, replay: Option<PathBuf>) -> Models {
        match (record, replay) {
            (Some(file), _) => Models::Record(file),
            (None, Some(file)) => Models::Replay(Recording::File(file)),
            (None, None) => Models::Live,
        }
    }
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
    /// Continue the last run of this session.
    pub resume: Option<ResumeSpec>,
    /// Where the run's journal is also kept, line by line (`sr serve`'s
    /// store of record); `None`: the file alone.
    pub copies: Option<Arc<dyn JournalCopies>>,
}

/// Where a stored run's journal is copied as it is written (see
/// [`sr_llm::LineCopy`]).
pub trait JournalCopies: Send + Sync {
    /// The copy of the journal of run `run` of `session`, which continues
    /// `origin` (its run, and the step it goes live from) and starts with
    /// `inherited` (the lines the file starts with, already written).
    /// Opening cannot fail: a copy that cannot be kept fails the line's write.
    fn open(&self, session: &str, run: i64, origin: Option<(i64, Option<u64>)>, inherited: &str) -> Arc<dyn LineCopy>;
}

/// How to continue a session's last run (`sr run --resume ID`).
#[derive(Debug, Clone, Default)]
pub struct ResumeSpec {
    pub session: String,
    /// The answer to the question a paused run is waiting on.
    pub input: Option<String>,
    /// Go live from this step of the journal on (`--from STEP`): what the run
    /// did from there is done again, for real (a tool retried after fixing
    /// its cause).
    pub from: Option<u64>,
    /// The work directory is new (another machine ran the run so far): the
    /// file changes its journal holds are made again before it goes on.
    pub rebuild_files: bool,
    /// Which work directory the resumed run works in.
    pub work_dir: ResumeWorkDir,
}

/// Which work directory a resumed run works in: the files it left are
/// there, so by default the one its journal records.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ResumeWorkDir {
    /// The spec's, whatever the run recorded (`sr serve`: the server's own).
    #[default]
    Spec,
    /// None was named (`sr run --resume` without `--work-dir`): the one the
    /// run recorded, or the spec's for a journal that records none.
    Recorded,
    /// The spec's, named by the user: refused when it is not the recorded
    /// one and that one still exists (a project moved away is resumed
    /// where it is now).
    Named,
}

impl Storage {
    /// The state directory and the sessions database: an explicit sessions
    /// file alone puts the state (journals, leases) next to it.
    pub fn resolve(state_dir: Option<&Path>, sessions: Option<&Path>, work_dir: &Path) -> Result<Storage, NoStateDir> {
        let beside = sessions.map(|db| db.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new(".")));
        let state = StateDir::resolve(state_dir.or(beside), work_dir)?;
        let sessions = sessions.map(PathBuf::from).unwrap_or_else(|| state.sessions_db());
        Ok(Storage { state, sessions, session: None, resume: None, copies: None })
    }
}

/// A run ready to start: [`Launched::run`] runs it.
pub struct Launched {
    program: Arc<Compiled>,
    message: String,
    invocation_id: String,
    provider: Arc<dyn Provider>,
    journal: Arc<Journal>,
    jail: Jail,
    human: Arc<dyn Human>,
    options: RunOptions,
    mcp: Arc<McpHub>,
    /// The run's secrets, replaced in everything it writes or sends.
    redactor: Arc<Redactor>,
    /// The stored run, when the spec has storage.
    stored: Option<StoredRun>,
    /// Problems with the setup that do not stop the run, for the user.
    warnings: Vec<String>,
    /// Every event's time: the recorded run's where it is served.
    clock: Arc<EventTimes>,
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq)]
pub struct Finished {
    /// `None` when the run never reported its end (its task panicked).
    pub status: Option<RunStatus>,
    pub result: Option<Value>,
    pub error: Option<String>,
    /// The run paused at this call in doubt, which nobody decided about.
    pub in_doubt: Option<Question>,
}

/// Assembles the run `spec` describes. Nothing is left reserved when an
/// error is returned.
pub fn launch(spec: LaunchSpec) -> Result<Launched, LaunchError> {
    launch_with(spec, None)
}

/// Like [`launch`], for a run that goes back in time in `recording` (its own
/// journal, for a debugger): the work directory is first put back as it was
/// when the recorded run started, the recorded effects are served (and their
/// file changes made again) where the run makes the same ones, a thread goes
/// live where its recording ends or where it forks (an edit), and a differing
/// effect stops the run with a divergence. The spec's record file gets the recording
/// followed by what is new (a replay is refused: this run goes live).
pub fn launch_continuing(spec: LaunchSpec, recording: String) -> Result<Launched, LaunchError> {
    launch_with(spec, Some((recording, Vec::new())))
}

/// Like [`launch_continuing`], for a run given `answers`: those the recorded
/// run's `escalate to human`s got before the point the new run goes live
/// from. They answer its questions in order and its journal's `meta` keeps
/// them, as a resumed run's does, so that the new run pauses, resumes and is
/// replayed with them (`sr serve`'s forks).
pub fn launch_continuing_answered(
    spec: LaunchSpec,
    recording: String,
    answers: Vec<String>,
) -> Result<Launched, LaunchError> {
    launch_with(spec, Some((recording, answers)))
}

fn launch_with(spec: LaunchSpec, continued: Option<(String, Vec<String>)>) -> Result<Launched, LaunchError> {
    let LaunchSpec { program, message, work_dir, read_only, storage, models, mut options, human, in_doubt } = spec;
    if let Some(storage) = &storage {
        for id in storage.session.iter().chain(storage.resume.as_ref().map(|r| &r.session)) {
            ids::check(IdKind::Session, id)?;
        }
    }
    let (replay, record, provider) = match models {
        Models::Live => (None, None, None),
        Models::Record(file) => (None, Some(file), None),
        Models::Replay(_) if continued.is_some() => return Err(LaunchError::ReplayContinued),
        Models::Replay(recording) => (Some(recording), None, None),
        Models::Provider { provider, record } => (None, record, Some(provider)),
    };
    let mut warnings = Vec::new();
    let replay_text = match replay {
        Some(Recording::File(path)) => {
            let mut text = std::fs::read_to_string(&path)
                .map_err(|source| LaunchError::UnreadableRecording { path: path.clone(), source })?;
            if let Some(line) = cut_torn(&mut text) {
                warnings.push(torn_warning(&path.display().to_string(), line));
            }
            Some(text)
        }
        Some(Recording::Text(mut text)) => {
            if let Some(line) = cut_torn(&mut text) {
                warnings.push(torn_warning("the recording", line));
            }
            Some(text)
        }
        None => None,
    };
    let provider = match provider {
        Some(provider) => provider,
        None => Arc::new(Router::from_env(HttpClient::shared())),
    };
    let opened = match &storage {
        Some(storage) => Some(open_store(storage)?),
        None => None,
    };
    let resume = match (&storage, &opened) {
        (Some(Storage { resume: Some(spec), state, .. }), Some(store)) => Some(resume::find(store, state, spec)?),
        _ => None,
    };
    warnings.extend(resume.iter().flat_map(|resume| resume.warnings.iter().cloned()));
    let work_dir = match (&resume, storage.as_ref().and_then(|s| s.resume.as_ref())) {
        (Some(resume), Some(spec)) => resumed_work_dir(work_dir, resume.work_dir.as_deref(), spec.work_dir)?,
        _ => work_dir,
    };
    // What the run is served from, and how.
    let (mode, served) = match (&replay_text, &resume, &continued) {
        (Some(text), _, _) => (Mode::Replay, text.clone()),
        (None, Some(resume), _) => (Mode::Resume, resume.journal.clone()),
        (None, None, Some((text, _))) => (Mode::Travel, text.clone()),
        (None, None, None) => (Mode::Live, String::new()),
    };
    let recorded = match mode {
        Mode::Live => Recorded::default(),
        _ => Recorded::parse(&served)?,
    };
    let recorded_times = crate::journal::times::read(&served);
    let (message, answers) = match (&resume, continued, recorded.meta.as_ref()) {
        (Some(resume), _, _) => (resume.message.clone(), resume.answers.clone()),
        (None, Some((_, answers)), _) => (message, answers),
        // A replay is given what the recorded run was given: its input and
        // every answer its `escalate to human`s got.
        (None, None, Some(meta)) if mode == Mode::Replay => (replayed_input(message, meta)?, meta.answers.clone()),
        (None, None, _) => (message, Vec::new()),
    };
    // A replayed or continued run starts where the recorded one did.
    if let (Mode::Replay | Mode::Resume | Mode::Travel, Some(meta)) = (mode, recorded.meta.as_ref()) {
        match (&options.entry, &meta.entry) {
            // `greet` and `prompt:greet` start the same prompt when no flow or agent is named so.
            (Some(given), recorded)
                if !recorded.as_deref().is_some_and(|r| {
                    r == given || program.resolve_entry(r).is_some_and(|r| program.resolve_entry(given) == Some(r))
                }) =>
            {
                return Err(LaunchError::EntryDiffers { recorded: recorded.clone(), given: given.clone() });
            }
            _ => options.entry.clone_from(&meta.entry),
        }
    }
    let invocation_id = recorded.meta.as_ref().map(|m| m.invocation_id.clone()).unwrap_or_else(new_id);
    let mcp = Arc::new(match &replay_text {
        Some(text) => {
            let hub = McpHub::from_recording(text)?;
            if recorded.ended() { hub.cut_off_unlisted(&program.tools) } else { hub }
        }
        // Servers connect when an agent first uses them.
        None => McpHub::new(&program.tools, &McpOptions::default(), &|name| std::env::var(name).ok()),
    });
    let jail = if read_only { Jail::read_only(&work_dir) } else { Jail::new(&work_dir) };
    let mut jail = jail.map_err(|source| LaunchError::BadWorkDir { path: work_dir.clone(), source })?;
    let cwd = std::env::current_dir().unwrap_or_default();
    for path in storage.iter().flat_map(|s| [&s.state.dir, &s.sessions]).chain(record.as_ref()) {
        jail = jail.forbid(&cwd.join(path));
    }
    // The workload and its imports are read-only to the tools a model drives.
    for source in std::iter::once(&program.root).chain(program.sources.iter().map(|s| &s.path)) {
        jail = jail.protect(&cwd.join(source));
    }
    for path in &options.protected {
        jail = jail.protect_given(&work_dir.join(path));
    }
    // A run killed while a sandboxed command ran left the empty stand-ins
    // for missing protected paths (`.git/`, `agents/`, …) in the work directory.
    if !read_only {
        sr_sandbox::command::remove_left_behind(jail.root(), &jail.protected(), jail.forbidden());
    }
    let redactor = secrets(&mcp, &mut warnings);
    let rebuild_files = storage.as_ref().and_then(|s| s.resume.as_ref()).is_some_and(|r| r.rebuild_files);
    let (stored, copied) = match (storage, opened) {
        (Some(storage), Some(store)) => {
            let origin = resume.as_ref().map(|r| (r.run, storage.resume.as_ref().and_then(|spec| spec.from)));
            let session = storage.resume.map(|r| r.session).or(storage.session).unwrap_or_else(new_id);
            let mut stored = reserve(store, &storage.state, session, &program, origin)?;
            stored.keeps_events = storage.copies.is_none();
            let copied =
                storage.copies.map(|copies| copies.open(&stored.session.id, stored.session.run, origin, &served));
            (Some(stored), copied)
        }
        _ => (None, None),
    };
    let meta = Meta {
        invocation_id: invocation_id.clone(),
        workload: crate::compile::display_path(&program.root),
        input: message.clone(),
        entry: options.entry.clone(),
        answers: answers.clone(),
        work_dir: Some(std::fs::canonicalize(&work_dir).unwrap_or_else(|_| cwd.join(&work_dir)).display().to_string()),
    };
    let files = Workspace::new(jail.clone());
    let journaled = match mode {
        // A stored replay's journal is its recording and its own `meta`, so
        // that a replay paused where its recording ends resumes from there.
        // Nothing is added: a replay observes nothing new.
        Mode::Replay => match &stored {
            Some(stored) => open_cassette(&stored.journal, &served, redactor.clone(), copied)
                .and_then(|cassette| cassette.append(&meta.to_entry()).map_err(|e| JournalError::Meta(Box::new(e))))
                .map(|()| Journal::new(mode, recorded, None, Some(files))),
            None => Ok(Journal::new(mode, recorded, None, Some(files))),
        },
        _ => {
            let paths = (stored.as_ref().map(|s| s.journal.as_path()), record.as_deref());
            open_journal(paths, &served, (&redactor, copied), &meta, &mcp)
                .map(|cassette| Journal::new(mode, recorded, cassette, Some(files)))
        }
    };
    let restored = |journal: Journal| match rebuild_files {
        true => journal.rebuild_files().map(|()| journal).map_err(JournalError::from),
        false => journal.rewind_files().map(|()| journal).map_err(JournalError::from),
    };
    let journal = match journaled.and_then(restored) {
        Ok(journal) => Arc::new(journal.deciding(&invocation_id, in_doubt)),
        Err(e) => {
            if let Some(stored) = stored {
                let SessionRun { store, id, run } = &stored.session;
                let _ = store.set_run_status(id, *run, "failed");
                stored.lease.release();
            }
            return Err(e.into());
        }
    };
    // A replay asks nobody: past its recorded answers it pauses where the
    // recorded run did.
    let human: Arc<dyn Human> =
        Arc::new(Answers::new(answers, (mode != Mode::Replay).then_some(human), journal.clone()));
    let clock = Arc::new(EventTimes::new(journal.clone(), recorded_times));
    Ok(Launched {
        program,
        message,
        invocation_id,
        provider,
        journal,
        jail,
        human,
        options,
        mcp,
        redactor,
        stored,
        warnings,
        clock,
    })
}

impl Launched {
    pub fn program(&self) -> &Arc<Compiled> {
        &self.program
    }

    /// The message the run starts with (a resumed run's own).
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The run's invocation id (a replay's is the recorded run's).
    pub fn invocation_id(&self) -> &str {
        &self.invocation_id
    }

    /// How the run uses its journal: live, replayed, resumed or travelling.
    pub fn journal_mode(&self) -> Mode {
        self.journal.mode()
    }

    pub fn options(&self) -> &RunOptions {
        &self.options
    }

    /// Problems with the setup that do not stop the run, for the user.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// The session the run is stored in, if any.
    pub fn session(&self) -> Option<&str> {
        self.stored.as_ref().map(|stored| stored.session.id.as_str())
    }

    /// The number of the run in its session, if stored.
    pub fn run_number(&self) -> Option<i64> {
        self.stored.as_ref().map(|stored| stored.session.run)
    }

    /// Runs, stepping through `hook`, every event going to `sinks` (and to the
    /// session first, when the spec had storage, the run continuing its
    /// conversation); then closes the MCP servers and, in a session, keeps
    /// the run's turn and end and releases its lease. The run is a task of
    /// its own (on a worker thread's large stack): dropping this future ends
    /// it, with its model and tool calls and the processes they started.
    pub async fn run(
        self,
        hook: Arc<dyn StepHook>,
        mut sinks: Vec<Arc<dyn EventSink>>,
    ) -> Result<Finished, LaunchError> {
        let Launched {
            program,
            message,
            invocation_id,
            provider,
            journal,
            jail,
            human,
            options,
            mcp,
            redactor,
            stored,
            warnings: _,
            clock,
        } = self;
        journal.report_parked_to(&hook);
        let env = Env { provider, hook, jail, mcp: mcp.clone(), journal: journal.clone(), human, options };
        let session = stored.as_ref().map(|stored| stored.session.clone());
        if let Some(stored) = stored.as_ref().filter(|stored| stored.keeps_events) {
            sinks.insert(0, stored.session.sink());
        }
        let emitter = Emitter::new(invocation_id, sinks).with_redactor(redactor.clone()).with_clock(clock);
        let runtime = Runtime::new(program, env);
        let mut task = AbortOnDrop(tokio::spawn(async move {
            let history = session.as_ref().map_or(Ok(Vec::new()), SessionRun::start);
            let outcome = match history {
                Ok(history) => runtime.run(emitter.clone(), message.clone(), history).await,
                Err(e) => runtime.refuse(&emitter, format!("cannot read the conversation: {e}")),
            };
            if let Some(session) = &session {
                session.end(&emitter, message, &outcome, runtime.env.journal.undecided().is_some());
            }
            outcome
        }));
        let joined = (&mut task.0).await;
        mcp.close().await;
        // A run whose task panicked never reported its end.
        let mut finished = match joined {
            Ok(outcome) => Finished::redacted(outcome, &redactor),
            Err(_) => Finished { status: None, result: None, error: None, in_doubt: None },
        };
        if finished.status == Some(RunStatus::Paused) {
            finished.in_doubt = journal.undecided();
        }
        let Some(stored) = stored else { return Ok(finished) };
        // A paused run needs nothing more kept: its journal's `meta` says
        // what it started with and was answered (`resume::find`).
        stored.lease.release();
        let lost = stored.session.store.take_lost();
        if let Some(first) = lost.first() {
            return Err(LaunchError::EventsLost { count: lost.len(), first: first.clone() });
        }
        Ok(finished)
    }
}

impl Finished {
    /// How `outcome` ended, as the run's sinks saw it: its secrets replaced.
    fn redacted(outcome: RunOutcome, redactor: &Redactor) -> Finished {
        let mut result = outcome.result;
        if let Some(result) = &mut result {
            redactor.redact_value(result);
        }
        Finished {
            status: Some(outcome.status),
            result,
            error: outcome.error.map(|e| redactor.redact(&e.to_string())),
            in_doubt: None,
        }
    }
}

/// Ends a run's task when whoever awaits its end lets go of it (a case
/// abandoned at its timeout, a debugger's session closed).
struct AbortOnDrop(tokio::task::JoinHandle<RunOutcome>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

fn open_store(storage: &Storage) -> Result<SessionStore, LaunchError> {
    let failed = |source| LaunchError::Sessions { path: storage.sessions.clone(), source };
    let store = SessionStore::open(&storage.sessions).map_err(failed)?;
    // Runs whose process died are marked interrupted, by their leases.
    store.recover().map_err(failed)?;
    Ok(store)
}

/// Reserves the next run of `session`, held by a new lease; `origin` is the
/// run it continues and the step it goes live from.
fn reserve(
    store: SessionStore,
    state: &StateDir,
    session: String,
    program: &Compiled,
    origin: Option<(i64, Option<u64>)>,
) -> Result<StoredRun, LaunchError> {
    if let Err(source) = store.ensure(&session, &program.root.display().to_string()) {
        return Err(LaunchError::Reserve { session, source });
    }
    // Held until the run ends or its process dies: while it is held, the run is alive.
    let lease = Lease::take(&state.leases(), &new_id()).map_err(LaunchError::Lease)?;
    let run = match store.reserve_continuing(&session, Some(lease.path()), origin) {
        Ok(run) => run,
        Err(source) => {
            lease.release();
            return Err(LaunchError::Reserve { session, source });
        }
    };
    let journal = match state.journal(&session, run) {
        Ok(journal) => journal,
        Err(e) => {
            let _ = store.set_run_status(&session, run, "failed");
            lease.release();
            return Err(e.into());
        }
    };
    Ok(StoredRun { session: SessionRun { store, id: session, run }, journal, lease, keeps_events: true })
}

/// The run's journal file (in the session's state) mirrored to `record`,
/// each starting with `inherited` (the journal a resumed run or a run going
/// back in time continues) and the run's `meta`; the MCP listings are
/// recorded there too. `None` when the run has neither.
fn open_journal(
    (journal, record): (Option<&Path>, Option<&Path>),
    inherited: &str,
    (redactor, copy): (&Arc<Redactor>, Option<Arc<dyn LineCopy>>),
    meta: &Meta,
    mcp: &Arc<McpHub>,
) -> Result<Option<Arc<Cassette>>, JournalError> {
    // The journal file's lines are copied (`Storage::copies`), a `--record` mirror's are not.
    let mut copy = copy;
    let mut cassettes =
        journal.into_iter().chain(record).map(|path| open_cassette(path, inherited, redactor.clone(), copy.take()));
    let cassette = match (cassettes.next().transpose()?, cassettes.next().transpose()?) {
        (Some(first), Some(mirror)) => Some(first.mirrored_to(Arc::new(mirror))),
        (first, _) => first,
    };
    let Some(cassette) = cassette.map(Arc::new) else { return Ok(None) };
    cassette.append(&meta.to_entry()).map_err(|e| JournalError::Meta(Box::new(e)))?;
    mcp.record(cassette.clone()).map_err(|e| JournalError::McpTools(Box::new(e)))?;
    Ok(Some(cassette))
}

/// A new cassette at `path` holding `inherited` (already redacted lines),
/// its new lines copied to `copy`.
fn open_cassette(
    path: &Path,
    inherited: &str,
    redactor: Arc<Redactor>,
    copy: Option<Arc<dyn LineCopy>>,
) -> Result<Cassette, JournalError> {
    let cannot = |source| JournalError::Create { path: path.to_path_buf(), source };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(cannot)?;
    }
    std::fs::write(path, inherited).map_err(cannot)?;
    let cassette = Cassette::append_to(path)
        .map_err(|source| JournalError::Open { path: path.to_path_buf(), source: Box::new(source) })?
        .redacting(redactor);
    Ok(match copy {
        Some(copy) => cassette.copying_to(copy),
        None => cassette,
    })
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

/// The input a replay starts with: its recording's. A message given too must
/// be the same, or the replay would follow another path than the recording.
/// The work directory of a resumed run, given the spec's and the one its
/// journal recorded (`ResumeWorkDir` says which wins).
fn resumed_work_dir(given: PathBuf, recorded: Option<&str>, rule: ResumeWorkDir) -> Result<PathBuf, LaunchError> {
    let Some(recorded) = recorded.map(PathBuf::from) else { return Ok(given) };
    match rule {
        ResumeWorkDir::Spec => Ok(given),
        ResumeWorkDir::Recorded if recorded.is_dir() => Ok(recorded),
        ResumeWorkDir::Recorded => Err(LaunchError::WorkDirGone { recorded }),
        ResumeWorkDir::Named => {
            let same = std::fs::canonicalize(&given).is_ok_and(|given| given == recorded);
            if same || !recorded.exists() { Ok(given) } else { Err(LaunchError::WorkDirDiffers { recorded, given }) }
        }
    }
}

fn replayed_input(given: String, meta: &Meta) -> Result<String, LaunchError> {
    if given.is_empty() || given == meta.input {
        return Ok(meta.input.clone());
    }
    Err(LaunchError::InputDiffers { recorded: meta.input.clone(), requested: given })
}

fn new_id() -> String {
    uuid::Uuid::new_v4().to_string()
}
