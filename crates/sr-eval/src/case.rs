//! One run of one case: a fresh work directory holding the case's files, a
//! session of its own, and the run launched through `sr_runtime::launch`.
//! The sessions of one evaluation's cases share one store ([`Sessions`]).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde_json::Value;
use sr_llm::Provider;
use sr_runtime::RunOptions;
use sr_runtime::compile::Compiled;
use sr_runtime::event::{Event, EventSink, Payload};
use sr_runtime::human::Unattended;
use sr_runtime::launch::{LaunchSpec, Models as RunModels, Recording, Storage, launch};
use sr_runtime::session::SessionStore;
use sr_runtime::state::StateDir;
use sr_runtime::tools::{Entry, Jail, Opened};

pub use crate::case_error::CaseError;
use crate::dataset::Files;
use crate::remote::{Ask, Servers};

/// Where a case's model answers come from.
#[derive(Clone)]
pub enum Models {
    /// Real providers, configured by the environment.
    Live,
    /// Real providers, every exchange and tool result (with the files each
    /// tool changed) kept in the case's cassette in this directory: the run's journal.
    Record(PathBuf),
    /// Served from the case's cassette in this directory, as `Record` wrote
    /// it (offline), read through a jail on the directory; the journal makes
    /// the recorded tools' file changes again in the work directory.
    Replay(PathBuf),
    /// This provider (a scripted model, or one a program brings).
    Provider(Arc<dyn Provider>),
    /// Each case run is a run of one of these `sr serve`s ([`crate::remote`]).
    Server(Arc<Servers>),
}

/// Where the cases of one evaluation keep their sessions: one session store
/// in a temporary directory, each case a session of its own in it. The store
/// is held open while the evaluation lasts, so SQLite creates the database
/// once and checkpoints and removes its write-ahead log once (each a few
/// `fsync`s and deletes), not once per case; the directory goes when the
/// evaluation's last case is done.
pub struct Sessions {
    _held: SessionStore,
    dir: tempfile::TempDir,
}

impl Sessions {
    pub fn new() -> Result<Sessions, CaseError> {
        let dir = tempfile::Builder::new().prefix("sr-eval-sessions-").tempdir().map_err(CaseError::SessionsDir)?;
        let held = SessionStore::open(&Self::database(dir.path())).map_err(CaseError::SessionStore)?;
        Ok(Sessions { _held: held, dir })
    }

    fn database(dir: &Path) -> PathBuf {
        dir.join("sessions.db")
    }

    /// A new session in the store (the launch makes its id).
    fn storage(&self) -> Storage {
        let dir = self.dir.path();
        Storage {
            state: StateDir { dir: dir.to_path_buf() },
            sessions: Self::database(dir),
            session: None,
            resume: None,
            copies: None,
        }
    }
}

/// Everything one case run needs.
pub struct CaseSpec {
    /// The workload as the user named it (a server serves it by its file stem).
    pub workload: String,
    pub program: Arc<Compiled>,
    pub prompt: String,
    pub files: Files,
    pub options: RunOptions,
    pub models: Models,
    /// The case's cassette, relative to the `Record` or `Replay` directory.
    pub cassette: PathBuf,
    /// The run's events, one JSON object a line.
    pub events_file: PathBuf,
    /// Where the case's session goes, or why there is nowhere.
    pub sessions: Result<Arc<Sessions>, Arc<CaseError>>,
}

/// What a case run produced. The work directory lives as long as this does.
pub struct CaseRun {
    pub events: Vec<Event>,
    pub result: Option<Value>,
    pub error: Option<String>,
    /// The server's id of the run (`Models::Server`).
    pub run: Option<String>,
    /// The run's work directory; `None` when it could not be made.
    dir: Option<tempfile::TempDir>,
}

impl CaseRun {
    /// The run's work directory, as the run left it.
    pub fn work_dir(&self) -> Option<PathBuf> {
        self.dir.as_ref().map(|d| d.path().to_path_buf())
    }
}

/// Runs one case. Problems setting it up are the run's error, like a failed run's.
pub async fn run_case(spec: CaseSpec) -> CaseRun {
    if let Models::Server(servers) = &spec.models {
        return run_on_server(&spec, servers).await;
    }
    let failed = |error: String| CaseRun { events: Vec::new(), result: None, error: Some(error), run: None, dir: None };
    let sessions = match &spec.sessions {
        Ok(sessions) => sessions.clone(),
        Err(e) => return failed(e.to_string()),
    };
    let dir = match tempfile::Builder::new().prefix("sr-eval-").tempdir() {
        Ok(dir) => dir,
        Err(e) => return failed(CaseError::WorkDir(e).to_string()),
    };
    let (events, result, error) = match launch_and_run(&spec, dir.path(), &sessions).await {
        Ok(done) => done,
        Err(e) => (Vec::new(), None, Some(e.to_string())),
    };
    CaseRun { events, result, error, run: None, dir: Some(dir) }
}

/// Runs one case on a server. The local work directory stays empty: the
/// run's is the server's (`remote::unsupported` refuses what would read it).
async fn run_on_server(spec: &CaseSpec, servers: &Servers) -> CaseRun {
    let dir = tempfile::Builder::new().prefix("sr-eval-").tempdir().ok();
    let ask = Ask {
        workload: &spec.workload,
        entry: spec.options.entry.as_deref(),
        model: spec.options.override_model.as_deref(),
        prompt: &spec.prompt,
        events_file: &spec.events_file,
    };
    let ran = servers.run(&ask).await;
    let error = ran.error.or_else(|| dir.is_none().then(|| "cannot make a work directory".to_string()));
    CaseRun { events: ran.events, result: ran.result, error, run: ran.run, dir }
}

type Outcome = (Vec<Event>, Option<Value>, Option<String>);

async fn launch_and_run(spec: &CaseSpec, work: &Path, sessions: &Sessions) -> Result<Outcome, CaseError> {
    let work = work.to_path_buf();
    write_files(&spec.files, &work)?;
    let storage = sessions.storage();
    let models = match &spec.models {
        Models::Record(dir) => RunModels::Record(dir.join(&spec.cassette)),
        Models::Replay(dir) => {
            let text = read_text(dir, &spec.cassette)?
                .ok_or_else(|| CaseError::NoSuchFile { path: dir.join(&spec.cassette) })?;
            RunModels::Replay(Recording::Text(text))
        }
        Models::Provider(provider) => RunModels::Provider { provider: provider.clone(), record: None },
        Models::Live | Models::Server(_) => RunModels::Live,
    };
    let launched = launch(LaunchSpec {
        program: spec.program.clone(),
        message: spec.prompt.clone(),
        work_dir: work.clone(),
        read_only: false,
        storage: Some(storage),
        models,
        options: spec.options.clone(),
        human: Arc::new(Unattended),
        in_doubt: sr_runtime::in_doubt::skip_all(),
    })?;
    let sink = Arc::new(Collect::create(&spec.events_file)?);
    let finished = launched.run(Arc::new(sr_runtime::hook::NoHook), vec![sink.clone()]).await?;
    let events = sink.take()?;
    let error = finished.error.or_else(|| {
        let ended = events.iter().any(|e| matches!(e.payload, Payload::RunFinished { .. }));
        (!ended).then(|| "the run ended without finishing".to_string())
    });
    Ok((events, finished.result, error))
}

/// Keeps a run's events and writes them to its events file as they come.
struct Collect {
    events: Mutex<Vec<Event>>,
    file: Mutex<std::io::BufWriter<std::fs::File>>,
    failed: Mutex<Option<std::io::Error>>,
}

impl Collect {
    fn create(path: &Path) -> Result<Collect, CaseError> {
        let cannot = |source| CaseError::Write { path: path.to_path_buf(), source };
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(cannot)?;
        }
        let file = std::fs::File::create(path).map_err(cannot)?;
        Ok(Collect {
            events: Mutex::new(Vec::new()),
            file: Mutex::new(std::io::BufWriter::new(file)),
            failed: Mutex::new(None),
        })
    }

    fn take(&self) -> Result<Vec<Event>, CaseError> {
        if let Some(e) = self.failed.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).take() {
            return Err(CaseError::Events(e));
        }
        self.file.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).flush().map_err(CaseError::Events)?;
        Ok(std::mem::take(&mut *self.events.lock().unwrap_or_else(|poisoned| poisoned.into_inner())))
    }
}

impl EventSink for Collect {
    fn record(&self, event: &Event) {
        // Deltas are the model's text in pieces: the responses carry it whole.
        if matches!(event.payload, Payload::TextDelta { .. }) {
            return;
        }
        let line = serde_json::to_string(event).unwrap_or_default();
        if let Err(e) = writeln!(self.file.lock().unwrap_or_else(|poisoned| poisoned.into_inner()), "{line}") {
            self.failed.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).get_or_insert(e);
        }
        self.events.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).push(event.clone());
    }
}

fn write_files(files: &Files, work: &Path) -> Result<(), CaseError> {
    match files {
        Files::Map(map) => {
            for (path, text) in map {
                write_file(&work.join(path), text)?;
            }
            Ok(())
        }
        Files::Dir { base, relative } => copy_dir(base, relative, work),
    }
}

/// Writes into the case's fresh work directory, which holds only what the
/// dataset put there (no symlinks): the dataset's own paths, `.git/` included.
fn write_file(path: &Path, text: &str) -> Result<(), CaseError> {
    let cannot = |source| CaseError::Write { path: path.to_path_buf(), source };
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(cannot)?;
    }
    std::fs::write(path, text).map_err(cannot)
}

/// Copies the regular files and directories under `relative`, read through a
/// jail on the dataset's directory `base`: symbolic links are not followed,
/// FIFOs and devices not read.
fn copy_dir(base: &Path, relative: &Path, to: &Path) -> Result<(), CaseError> {
    let cannot = |at: &Path, source| CaseError::Copy { path: base.join(at), source };
    let jail = Jail::read_only(base).map_err(|e| cannot(Path::new("."), e))?;
    let mut pending = vec![(relative.to_path_buf(), to.to_path_buf())];
    while let Some((from, into)) = pending.pop() {
        std::fs::create_dir_all(&into).map_err(|e| cannot(&from, e))?;
        for Entry { name, is_dir, is_file } in jail.entries(&from).map_err(|e| cannot(&from, e))? {
            let (source, target) = (from.join(&name), into.join(&name));
            if is_dir {
                pending.push((source, target));
            } else if is_file {
                // Whatever it became since it was listed, only a regular file is copied.
                let Opened::File(mut file) = jail.open_read(&source).map_err(|e| cannot(&source, e))? else { continue };
                let mut out = std::fs::File::create(&target).map_err(|e| cannot(&source, e))?;
                std::io::copy(&mut file, &mut out).map_err(|e| cannot(&source, e))?;
            }
        }
    }
    Ok(())
}

/// The largest cassette read.
const MAX_CASSETTE: u64 = 256 << 20;

/// The text of `relative` in `dir`, read through a jail on `dir` (beneath
/// it, no symlink out, a regular file of at most [`MAX_CASSETTE`]); `None`
/// when there is no such file.
pub(crate) fn read_text(dir: &Path, relative: &Path) -> Result<Option<String>, CaseError> {
    let cannot = |source| CaseError::Read { path: dir.join(relative), source };
    let jail = Jail::read_only(dir).map_err(cannot)?;
    match jail.read(relative, MAX_CASSETTE) {
        Ok(bytes) => String::from_utf8(bytes)
            .map(Some)
            .map_err(|e| cannot(std::io::Error::new(std::io::ErrorKind::InvalidData, e))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(cannot(e)),
    }
}

#[cfg(test)]
mod tests;
