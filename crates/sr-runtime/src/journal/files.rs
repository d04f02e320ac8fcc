//! What a journal keeps of the work directory: each path's state before and
//! after a tool call, and the `blob` lines holding the bytes.

use std::collections::BTreeMap;

use base64::Engine;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// The kind of the line holding a file's bytes.
pub(crate) const BLOB_KIND: &str = "blob";

/// One path's state. Permission bits are part of it (`mode`; journals of an
/// earlier `sr` lack them, and then they are left as they are).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "is", rename_all = "snake_case")]
pub enum State {
    Absent,
    Dir {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        mode: Option<u32>,
    },
    File {
        sha256: String,
        size: u64,
        /// Whether the journal holds the bytes (a `blob` line).
        kept: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        mode: Option<u32>,
    },
    /// A symbolic link, by its target's text (never followed).
    Symlink {
        target: String,
    },
}

impl State {
    /// Why the journal cannot put this state back, if it cannot.
    pub(crate) fn unrestorable(
        &self,
        path: &str,
        blobs: &std::collections::HashMap<String, std::sync::Arc<[u8]>>,
    ) -> Option<String> {
        match self {
            State::File { kept: false, size, .. } => Some(format!(
                "{path} ({size} bytes) is recorded by its hash only: it was past the journal's limits when it was recorded"
            )),
            State::File { sha256, .. } if !blobs.contains_key(sha256) => {
                Some(format!("{path}: the journal lacks its bytes (blob {sha256})"))
            }
            _ => None,
        }
    }
}

/// What one tool call did to one path.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Change {
    /// Relative to the work directory, `/`-separated.
    pub path: String,
    pub before: State,
    pub after: State,
}

/// A blob line: UTF-8 bytes as text (so the journal stays readable and its
/// redaction applies), other bytes as base64.
pub(crate) fn blob_entry(sha256: &str, bytes: &[u8]) -> Value {
    match std::str::from_utf8(bytes) {
        Ok(text) => json!({"kind": BLOB_KIND, "sha256": sha256, "text": text}),
        Err(_) => {
            json!({"kind": BLOB_KIND, "sha256": sha256, "base64": base64::engine::general_purpose::STANDARD.encode(bytes)})
        }
    }
}

/// A blob line's bytes.
pub(crate) fn blob_bytes(entry: &Value) -> Option<Vec<u8>> {
    match (entry["text"].as_str(), entry["base64"].as_str()) {
        (Some(text), _) => Some(text.as_bytes().to_vec()),
        (None, Some(encoded)) => base64::engine::general_purpose::STANDARD.decode(encoded).ok(),
        (None, None) => None,
    }
}

/// `view` after `changes`.
pub(crate) fn see(view: &mut BTreeMap<String, State>, changes: &[Change]) {
    for change in changes {
        set(view, &change.path, &change.after);
    }
}

/// `view` with `path` in `state`.
pub(crate) fn set(view: &mut BTreeMap<String, State>, path: &str, state: &State) {
    match state {
        State::Absent => {
            view.remove(path);
        }
        state => {
            view.insert(path.to_string(), state.clone());
        }
    }
}
