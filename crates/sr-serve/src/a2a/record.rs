//! What A2A adds to a run, held by the store (`RunStore::a2a_record`,
//! migration 0004) so that any replica answers for any task: the messages
//! the client sent (with their own `messageId`s and context parts), the
//! files they brought (their bytes kept by hash, `RunStore::a2a_files`; the
//! replica that runs the task puts them into its work directory,
//! `inbound::place`) and the task's push notification configurations. A run
//! started over API v1 has none until a push method gives it a webhook.

use serde::{Deserialize, Serialize};

use crate::Server;
use crate::store::StoreError;

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
    /// The `messageId` of the message that brought it.
    pub message: String,
    /// Whether an attempt of the run had it in its work directory (a later
    /// attempt on the same replica finds it there, as the run left it).
    #[serde(default)]
    pub placed: bool,
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

impl Record {
    /// The context parts of every message sent so far, one a line: the
    /// context file's text.
    pub fn context_text(&self) -> String {
        self.sent.iter().flat_map(|sent| &sent.context).fold(String::new(), |mut text, line| {
            text.push_str(line);
            text.push('\n');
            text
        })
    }
}

/// The run's record; empty when it has none.
pub async fn read(server: &Server, run: &str) -> Result<Record, StoreError> {
    decode(run, server.store.a2a_record(run).await?.as_deref())
}

/// Keeps `files` (hash, bytes) for the run and changes its record with
/// `change` (which says whether it changed anything), committed before this
/// returns; whether the record changed.
pub async fn update(
    server: &Server,
    run: &str,
    files: &[(String, Vec<u8>)],
    change: impl Fn(&mut Record) -> bool + Send + Sync,
) -> Result<bool, StoreError> {
    let apply = |stored: Option<&str>| -> Result<Option<String>, StoreError> {
        let mut record = decode(run, stored)?;
        Ok(change(&mut record).then(|| serde_json::to_string(&record).expect("a record has string keys only")))
    };
    server.store.change_a2a(run, files, &apply).await
}

fn decode(run: &str, stored: Option<&str>) -> Result<Record, StoreError> {
    stored.map_or_else(
        || Ok(Record::default()),
        |text| {
            serde_json::from_str(text)
                .map_err(|e| StoreError::Undecodable(format!("the A2A record of run {run} in the store: {e}")))
        },
    )
}
