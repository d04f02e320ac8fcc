//! One run of one case: a fresh work directory holding the case's files, a
//! session of its own, and the run launched through `sr_runtime::launch`.
//! The sessions of one evaluation's cases share one store ([`Sessions`]).

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde_json::Value;
use sr_llm::Provider;
use sr_runtime::RunOptions;
use sr_runtime::compile::Compiled;
use sr_runtime::event::{Event, EventSink, Payload};
use sr_runtime::human::Unattended;
use sr_runtime::launch::{LaunchSpec, Storage, launch};
use sr_runtime::session::SessionStore;
use sr_runtime::state::StateDir;

use crate::dataset::Files;

/// Where a case's model answers come from.
#[derive(Clone)]
pub enum Models {
    /// Real providers, configured by the environment.
    Live,
    /// Real providers, every exchange and tool result kept in this cassette,
    /// with the files the run left in the work directory beside it.
    Record(PathBuf),
    /// Served from a cassette `Record` wrote (offline); the recorded files
    /// are restored in the work directory after the run.
    Replay(PathBuf),
    /// This provider (a scripted model, or one a program brings).
    Provider(Arc<dyn Provider>),
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
    pub fn new() -> Result<Sessions, String> {
        let dir = tempfile::Builder::new()
            .prefix("sr-eval-sessions-")
            .tempdir()
            .map_err(|e| format!("cannot make a directory for the sessions: {e}"))?;
        let held = SessionStore::open(&Self::database(dir.path()))
            .map_err(|e| format!("cannot create the session store: {e}"))?;
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
        }
    }
}

/// Everything one case run needs.
pub struct CaseSpec {
    pub program: Arc<Compiled>,
    pub prompt: String,
    pub files: Files,
    pub options: RunOptions,
    pub models: Models,
    /// The run's events, one JSON object a line.
    pub events_file: PathBuf,
    /// Where the case's session goes, or why there is nowhere.
    pub sessions: Result<Arc<Sessions>, String>,
}

/// What a case run produced. The work directory lives as long as this does.
pub struct CaseRun {
    pub events: Vec<Event>,
    pub result: Option<Value>,
    pub error: Option<String>,
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
    let failed = |error: String| CaseRun { events: Vec::new(), result: None, error: Some(error), dir: None };
    let sessions = match &spec.sessions {
        Ok(sessions) => sessions.clone(),
        Err(e) => return failed(e.clone()),
    };
    let dir = match tempfile::Builder::new().prefix("sr-eval-").tempdir() {
        Ok(dir) => dir,
        Err(e) => return failed(format!("cannot make a work directory: {e}")),
    };
    let (events, result, error) = match launch_and_run(&spec, dir.path(), &sessions).await {
        Ok(done) => done,
        Err(e) => (Vec::new(), None, Some(e)),
    };
    CaseRun { events, result, error, dir: Some(dir) }
}

type Outcome = (Vec<Event>, Option<Value>, Option<String>);

async fn launch_and_run(spec: &CaseSpec, work: &Path, sessions: &Sessions) -> Result<Outcome, String> {
    let work = work.to_path_buf();
    write_files(&spec.files, &work)?;
    let before = snapshot(&work);
    let storage = sessions.storage();
    let (record, replay) = match &spec.models {
        Models::Record(cassette) => (Some(cassette.clone()), None),
        Models::Replay(cassette) => (None, Some(cassette.clone())),
        Models::Live | Models::Provider(_) => (None, None),
    };
    let launched = launch(LaunchSpec {
        program: spec.program.clone(),
        message: spec.prompt.clone(),
        work_dir: work.clone(),
        storage: Some(storage),
        record,
        replay,
        provider: match &spec.models {
            Models::Provider(provider) => Some(provider.clone()),
            _ => None,
        },
        options: spec.options.clone(),
        human: Arc::new(Unattended),
    })?;
    let sink = Arc::new(Collect::create(&spec.events_file)?);
    let finished = launched.run(Arc::new(sr_runtime::hook::NoHook), vec![sink.clone()]).await?;
    let events = sink.take()?;
    match &spec.models {
        Models::Record(cassette) => save_files(&files_beside(cassette), &before, &snapshot(&work))?,
        Models::Replay(cassette) => restore_files(&files_beside(cassette), &work)?,
        Models::Live | Models::Provider(_) => {}
    }
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
    failed: Mutex<Option<String>>,
}

impl Collect {
    fn create(path: &Path) -> Result<Collect, String> {
        let cannot = |e: std::io::Error| format!("cannot write {}: {e}", path.display());
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

    fn take(&self) -> Result<Vec<Event>, String> {
        if let Some(e) = self.failed.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).take() {
            return Err(e);
        }
        self.file
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .flush()
            .map_err(|e| format!("cannot write the events: {e}"))?;
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
            self.failed
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner())
                .get_or_insert(format!("cannot write the events: {e}"));
        }
        self.events.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).push(event.clone());
    }
}

fn write_files(files: &Files, work: &Path) -> Result<(), String> {
    match files {
        Files::Map(map) => {
            for (path, text) in map {
                write_file(&work.join(path), text)?;
            }
            Ok(())
        }
        Files::Dir(dir) => copy_dir(dir, work),
    }
}

fn write_file(path: &Path, text: &str) -> Result<(), String> {
    let cannot = |e: std::io::Error| format!("cannot write {}: {e}", path.display());
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(cannot)?;
    }
    std::fs::write(path, text).map_err(cannot)
}

/// Copies regular files and directories; symbolic links are not followed.
fn copy_dir(from: &Path, to: &Path) -> Result<(), String> {
    let cannot = |e: std::io::Error| format!("cannot copy {}: {e}", from.display());
    std::fs::create_dir_all(to).map_err(cannot)?;
    for entry in std::fs::read_dir(from).map_err(cannot)? {
        let entry = entry.map_err(cannot)?;
        let kind = entry.file_type().map_err(cannot)?;
        let target = to.join(entry.file_name());
        if kind.is_dir() {
            copy_dir(&entry.path(), &target)?;
        } else if kind.is_file() {
            std::fs::copy(entry.path(), &target).map_err(cannot)?;
        }
    }
    Ok(())
}

/// Text files a snapshot keeps; larger or binary files are left out.
const MAX_SNAPSHOT_FILE: u64 = 1 << 20;

/// The text files under `dir`, by relative path (with `/`).
fn snapshot(dir: &Path) -> BTreeMap<String, String> {
    let mut files = BTreeMap::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(at) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&at) else { continue };
        for entry in entries.flatten() {
            let Ok(kind) = entry.file_type() else { continue };
            let path = entry.path();
            if kind.is_dir() {
                pending.push(path);
            } else if kind.is_file()
                && entry.metadata().is_ok_and(|m| m.len() <= MAX_SNAPSHOT_FILE)
                && let Ok(text) = std::fs::read_to_string(&path)
                && let Ok(relative) = path.strip_prefix(dir)
            {
                let key = relative.components().map(|c| c.as_os_str().to_string_lossy()).collect::<Vec<_>>().join("/");
                files.insert(key, text);
            }
        }
    }
    files
}

/// `case.jsonl` → `case.files.json`.
fn files_beside(cassette: &Path) -> PathBuf {
    let stem = cassette.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    cassette.with_file_name(format!("{stem}.files.json"))
}

/// Keeps the files a run wrote or changed, and the ones it removed.
fn save_files(path: &Path, before: &BTreeMap<String, String>, after: &BTreeMap<String, String>) -> Result<(), String> {
    let written: BTreeMap<&String, &String> = after.iter().filter(|(k, v)| before.get(*k) != Some(*v)).collect();
    let removed: Vec<&String> = before.keys().filter(|k| !after.contains_key(*k)).collect();
    let json = serde_json::json!({"written": written, "removed": removed});
    std::fs::write(path, serde_json::to_string_pretty(&json).unwrap_or_default())
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// Puts back what a recorded run left in its work directory.
fn restore_files(path: &Path, work: &Path) -> Result<(), String> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        // A recording made without one changed no files.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
    };
    let bad = |what: &str| format!("{}: {what}", path.display());
    let saved: Value = serde_json::from_str(&text).map_err(|e| bad(&e.to_string()))?;
    let inside = |key: &str| {
        let relative = Path::new(key);
        if relative.components().all(|c| matches!(c, std::path::Component::Normal(_))) {
            Ok(work.join(relative))
        } else {
            Err(bad(&format!("{key:?} is not inside the work directory")))
        }
    };
    for (key, content) in saved["written"].as_object().into_iter().flatten() {
        write_file(&inside(key)?, content.as_str().ok_or_else(|| bad("a written file is not text"))?)?;
    }
    for key in saved["removed"].as_array().into_iter().flatten() {
        let _ = std::fs::remove_file(inside(key.as_str().unwrap_or_default())?);
    }
    Ok(())
}
