//! What A2A adds to a run, kept beside its work directory
//! (`runs/{id}/a2a.json` in the state directory): the messages the client
//! sent (with their own `messageId`s and context parts), the files they
//! brought (so that the run's own files can be told from them) and the
//! task's push notification configurations. A run started over API v1 has
//! none until a push method gives it a webhook. The store does not hold it:
//! a replica shows what it took itself.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::Server;

/// One message a client sent to the task: the one that started it, then
/// each answer.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Sent {
    pub message_id: String,
    /// The message's own text (the run's input or answer).
    pub text: String,
    /// Its context parts (ADK's "For context:" block), one text each.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub context: Vec<String>,
}

/// A file a message brought into the work directory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Delivered {
    /// Relative to the work directory (`inbox/NAME`).
    pub path: String,
    pub sha256: String,
}

/// A push notification configuration of the task, in the protocol version
/// it was given in.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Push {
    pub id: String,
    pub url: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
    /// The `Authorization` header's scheme and credentials.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheme: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credentials: Option<String>,
    /// Given with 0.3's methods: notified with 0.3's shapes.
    pub v03: bool,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Record {
    #[serde(default)]
    pub sent: Vec<Sent>,
    #[serde(default)]
    pub files: Vec<Delivered>,
    #[serde(default)]
    pub push: Vec<Push>,
}

/// Serializes the read-modify-writes of every run's record in this process.
static WRITING: Mutex<()> = Mutex::new(());

/// The run's directory in the state directory (its work directory is `work/` in it).
pub fn run_dir(server: &Server, run: &str) -> PathBuf {
    server.settings.state_dir.join("runs").join(run)
}

pub fn work_dir(server: &Server, run: &str) -> PathBuf {
    run_dir(server, run).join("work")
}

fn path(server: &Server, run: &str) -> PathBuf {
    run_dir(server, run).join("a2a.json")
}

/// The run's record; empty when it has none (or it cannot be read, which
/// the log says).
pub fn read(server: &Server, run: &str) -> Record {
    read_at(&path(server, run))
}

fn read_at(path: &Path) -> Record {
    match std::fs::read(path) {
        Ok(bytes) => serde_json::from_slice(&bytes).unwrap_or_else(|error| {
            tracing::warn!(%error, path = %path.display(), "an A2A record is not readable; ignored");
            Record::default()
        }),
        Err(_) => Record::default(),
    }
}

/// Changes the run's record with `change`, written before this returns.
pub fn update<T>(server: &Server, run: &str, change: impl FnOnce(&mut Record) -> T) -> std::io::Result<T> {
    let _writing = WRITING.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let path = path(server, run);
    let mut record = read_at(&path);
    let answer = change(&mut record);
    std::fs::create_dir_all(run_dir(server, run))?;
    let text: Value = serde_json::to_value(&record).expect("a record has string keys only");
    let temporary = path.with_extension("json.tmp");
    std::fs::write(&temporary, text.to_string())?;
    std::fs::rename(&temporary, &path)?;
    Ok(answer)
}
