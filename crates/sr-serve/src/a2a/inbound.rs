//! A client's message as a run takes it: its own text (the run's input or
//! answer), its context parts kept apart (the work directory's
//! `inbox/.context.txt` holds those of every message sent to the task, where
//! the workload can read them), and its file parts, which become files of
//! the run's work directory (`inbox/NAME`), kept by the store until the
//! replica that runs the task puts them there (`place`).
//!
//! Context parts are what Google ADK's `RemoteA2aAgent` sends beside the
//! user's own parts: what other agents of its session did. A context block
//! is a text part starting `For context:` followed by parts that start
//! `[AGENT] said:`, `[AGENT] thought:`, `[AGENT] called tool ` or
//! `[AGENT] `TOOL` tool returned result:`, one block per other agent's turn.
//! (ADK 2 also marks parts `metadata.is_user_input`, but it marks these
//! blocks too, so the mark does not tell them apart.)

use std::path::Path;

use base64::Engine;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use super::record::{self, Delivered, Sent};
use super::rpc::RpcError;
use crate::Server;
use crate::store::StoreError;

/// Why the files messages brought cannot be put in a task's work directory.
#[derive(Debug, thiserror::Error)]
pub enum PlaceError {
    #[error("cannot read the task's A2A record: {0}")]
    Record(#[source] StoreError),
    #[error("cannot read the task's files: {0}")]
    Files(#[source] StoreError),
    #[error("the store lacks the bytes of {path} (sha256 {sha256})")]
    NoBytes { path: String, sha256: String },
    #[error("cannot put {path} into the work directory: {source}")]
    Write { path: String, source: std::io::Error },
    #[error("cannot record the task's files as placed: {0}")]
    Placed(#[source] StoreError),
}

/// Files one message may bring.
pub const MAX_FILES: usize = 16;

/// The longest name a delivered file keeps (in bytes).
const MAX_NAME: usize = 100;

/// Where a run's context parts are kept, one part a line, each message's
/// after the last's: a name no delivered file can take (they never start
/// with a dot).
pub const CONTEXT_FILE: &str = "inbox/.context.txt";

/// The text part that opens one of ADK's context blocks.
const CONTEXT_OPENER: &str = "For context:";

/// A message, read.
#[derive(Debug, Default, PartialEq)]
pub struct Inbound {
    pub sent: Sent,
    pub files: Vec<File>,
}

/// A file part's file.
#[derive(Debug, PartialEq)]
pub struct File {
    /// Its name in `inbox/`: the part's name made safe, unique in the message.
    pub name: String,
    pub bytes: Vec<u8>,
}

/// Reads a message: its `messageId` (a new one when it has none), its own
/// text (text parts' texts and data parts' JSON, one part a line), its
/// context parts, and its files (bytes only: a file by URL is refused, as
/// fetching it would reach a host the client chose).
pub fn read(message: &Map<String, Value>) -> Result<Inbound, RpcError> {
    let Some(parts) = message.get("parts").and_then(Value::as_array).filter(|p| !p.is_empty()) else {
        return Err(RpcError::invalid_params("message.parts: must be a non-empty list of parts"));
    };
    let message_id = match message.get("messageId") {
        Some(Value::String(id)) if !id.is_empty() => id.chars().take(200).collect(),
        None | Some(Value::Null) | Some(Value::String(_)) => uuid::Uuid::new_v4().to_string(),
        Some(_) => return Err(RpcError::invalid_params("message.messageId: must be a string")),
    };
    let mut own = Vec::new();
    let mut context = Vec::new();
    let mut files = Vec::new();
    let mut in_context = false;
    for (index, part) in parts.iter().enumerate() {
        let at = |what: &str| format!("message.parts[{index}]{what}");
        if let Some(text) = part.get("text") {
            let Some(text) = text.as_str() else {
                return Err(RpcError::invalid_params(format!("{}: must be a string", at(".text"))));
            };
            in_context = text.starts_with(CONTEXT_OPENER) || (in_context && is_context_line(text));
            if in_context {
                context.push(text.to_string());
            } else {
                own.push(text.to_string());
            }
        } else if let Some(data) = part.get("data") {
            in_context = false;
            own.push(data.to_string());
        } else if let Some(file) = file_part(part, &at)? {
            in_context = false;
            if files.len() == MAX_FILES {
                return Err(RpcError::invalid_params(format!(
                    "{}: a message brings at most {MAX_FILES} files",
                    at("")
                )));
            }
            let name = unique(safe_name(file.0.as_deref(), index), &files);
            files.push(File { name, bytes: file.1 });
        } else {
            return Err(RpcError::invalid_params(format!("{}: a part needs text, data or a file", at(""))));
        }
    }
    Ok(Inbound { sent: Sent { message_id, text: own.join("\n"), context }, files })
}

/// A context block's line after its opener: `[AGENT] said: …` and the like.
fn is_context_line(text: &str) -> bool {
    let Some(rest) = text.strip_prefix('[') else { return false };
    let Some((agent, rest)) = rest.split_once("] ") else { return false };
    !agent.is_empty()
        && (rest.starts_with("said:")
            || rest.starts_with("thought:")
            || rest.starts_with("called tool `")
            || (rest.starts_with('`') && rest.contains("` tool returned result:")))
}

/// A file part's name (when it has one) and bytes.
type Named = (Option<String>, Vec<u8>);

/// A file part's name and bytes (1.0: `raw`, `filename`; 0.3: `file.bytes`,
/// `file.name`); `None` for a part that is no file.
fn file_part(part: &Value, at: &dyn Fn(&str) -> String) -> Result<Option<Named>, RpcError> {
    let (name, encoded, url, field) = if let Some(file) = part.get("file") {
        (file.get("name"), file.get("bytes"), file.get("uri"), ".file.bytes")
    } else if part.get("raw").is_some() || part.get("url").is_some() {
        (part.get("filename"), part.get("raw"), part.get("url"), ".raw")
    } else {
        return Ok(None);
    };
    if url.is_some_and(|u| !u.is_null()) {
        return Err(RpcError::content_type(format!(
            "{}: a file by URL is not fetched (this server reaches no host a client names); send its bytes",
            at("")
        )));
    }
    let Some(encoded) = encoded.and_then(Value::as_str) else {
        return Err(RpcError::invalid_params(format!("{}: missing or not a string", at(field))));
    };
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(encoded)
        .map_err(|e| RpcError::invalid_params(format!("{}: not base64: {e}", at(field))))?;
    Ok(Some((name.and_then(Value::as_str).map(str::to_string), bytes)))
}

/// A file name that is one plain path component: the part after the last
/// `/` or `\`, letters, digits, `.`, `-` and `_` kept, anything else `_`,
/// no leading dot, at most 100 bytes; `file-N` when nothing is left.
pub fn safe_name(name: Option<&str>, index: usize) -> String {
    let last = name.unwrap_or_default().rsplit(['/', '\\']).next().unwrap_or_default();
    let mut safe: String =
        last.chars().map(|c| if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') { c } else { '_' }).collect();
    safe = safe.trim_start_matches('.').to_string();
    safe.truncate(MAX_NAME);
    if safe.is_empty() { format!("file-{index}") } else { safe }
}

/// `name`, or `N-name` when an earlier file of the message has it.
fn unique(name: String, files: &[File]) -> String {
    if !files.iter().any(|f| f.name == name) {
        return name;
    }
    (2..).map(|n| format!("{n}-{name}")).find(|candidate| !files.iter().any(|f| &f.name == candidate)).unwrap_or(name)
}

/// What the store keeps of files that message `message` brought: the
/// record's entry of each (`inbox/NAME`) and its bytes by hash.
pub fn delivery(message: &str, files: &[File]) -> (Vec<Delivered>, Vec<(String, Vec<u8>)>) {
    files
        .iter()
        .map(|file| {
            let sha256 = sha256(&file.bytes);
            let delivered = Delivered {
                path: format!("inbox/{}", file.name),
                sha256: sha256.clone(),
                message: message.to_string(),
                placed: false,
            };
            (delivered, (sha256, file.bytes.clone()))
        })
        .unzip()
}

/// Puts the files messages brought to task `run` into its work directory
/// `work`, before an attempt of the run: every one when the directory is
/// `fresh` (new on this replica: the runtime then makes the journal's own
/// file changes again, over them), else those no attempt had yet (an
/// answer's); then marks them placed. The context file's text is the
/// context parts of every message sent so far.
pub async fn place(server: &Server, run: &str, work: &Path, fresh: bool) -> Result<(), PlaceError> {
    let record = record::read(server, run).await.map_err(PlaceError::Record)?;
    let due: Vec<&Delivered> = record.files.iter().filter(|d| fresh || !d.placed).collect();
    if due.is_empty() {
        return Ok(());
    }
    let bytes = server.store.a2a_files(run).await.map_err(PlaceError::Files)?;
    let context = record.context_text();
    for delivered in &due {
        let content = match delivered.path.as_str() {
            CONTEXT_FILE => context.as_bytes(),
            _ => bytes.get(&delivered.sha256).map(Vec::as_slice).ok_or_else(|| PlaceError::NoBytes {
                path: delivered.path.clone(),
                sha256: delivered.sha256.clone(),
            })?,
        };
        let path = work.join(&delivered.path);
        let written =
            path.parent().map_or(Ok(()), std::fs::create_dir_all).and_then(|()| std::fs::write(&path, content));
        written.map_err(|source| PlaceError::Write { path: delivered.path.clone(), source })?;
    }
    let placed: Vec<(String, String)> = due.iter().map(|d| (d.path.clone(), d.sha256.clone())).collect();
    record::update(server, run, &[], |record| {
        let mut changed = false;
        for delivered in record.files.iter_mut().filter(|d| !d.placed) {
            if placed.iter().any(|(path, sha256)| *path == delivered.path && *sha256 == delivered.sha256) {
                delivered.placed = true;
                changed = true;
            }
        }
        changed
    })
    .await
    .map_err(PlaceError::Placed)?;
    Ok(())
}

pub fn sha256(bytes: &[u8]) -> String {
    use std::fmt::Write;
    Sha256::digest(bytes).iter().fold(String::with_capacity(64), |mut hex, b| {
        let _ = write!(hex, "{b:02x}");
        hex
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn parts(parts: Value) -> Result<Inbound, RpcError> {
        read(json!({"messageId": "m-1", "parts": parts}).as_object().expect("an object"))
    }

    #[test]
    fn adk_context_blocks_are_kept_apart_from_the_message_s_own_text() {
        let read = parts(json!([
            {"text": "For context:"},
            {"text": "[approver] said: Ship it? Answer yes or no."},
            {"text": "[approver] called tool `lookup` with parameters: {'q': 1}"},
            {"text": "For context:"},
            {"text": "[helper] `lookup` tool returned result: {'a': 2}"},
            {"text": "yes"},
        ]))
        .expect("read");
        assert_eq!(read.sent.text, "yes");
        assert_eq!(read.sent.message_id, "m-1");
        assert_eq!(read.sent.context.len(), 5);
        assert_eq!(read.sent.context[1], "[approver] said: Ship it? Answer yes or no.");
    }

    #[test]
    fn adk_2_s_fenced_blocks_are_context_though_it_marks_every_part_as_user_input() {
        let mark = json!({"is_user_input": true});
        let read = parts(json!([
            {"text": "For context: below is a transcript of what another agent did, quoted between …", "metadata": mark},
            {"text": "[planner] said:\n<<<BEGIN_QUOTED_AGENT_CONTENT>>>\nReady.\n<<<END_QUOTED_AGENT_CONTENT>>>", "metadata": mark},
            {"text": "yes", "metadata": mark},
        ]))
        .expect("read");
        assert_eq!(read.sent.text, "yes");
        assert_eq!(read.sent.context.len(), 2);
        let own = parts(json!([{"text": "For contextual reasons: yes"}])).expect("read");
        assert!(own.sent.context.is_empty(), "only `For context:` opens a block");
    }

    #[test]
    fn text_that_only_looks_like_context_outside_a_block_is_the_message_s_own() {
        let read = parts(json!([{"text": "[me] said: hello"}, {"data": {"a": 1}}])).expect("read");
        assert_eq!(read.sent.text, "[me] said: hello\n{\"a\":1}");
        assert!(read.sent.context.is_empty());
    }

    #[test]
    fn file_parts_of_both_versions_become_files_with_safe_unique_names() {
        let read = parts(json!([
            {"text": "see attached"},
            {"raw": "aGVsbG8=", "filename": "../../etc/passwd", "mediaType": "text/plain"},
            {"kind": "file", "file": {"bytes": "d29ybGQ=", "name": "passwd"}},
            {"raw": "", "filename": ".."},
            {"raw": "", "filename": "a b\u{e9}.txt"},
        ]))
        .expect("read");
        let names: Vec<&str> = read.files.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["passwd", "2-passwd", "file-3", "a_b_.txt"]);
        assert_eq!(read.files[0].bytes, b"hello");
        assert_eq!(read.files[1].bytes, b"world");
    }

    #[test]
    fn bad_file_parts_are_refused_naming_the_part() {
        let by_url = parts(json!([{"url": "http://169.254.169.254/", "filename": "x"}])).unwrap_err();
        assert_eq!((by_url.code, by_url.message.starts_with("message.parts[0]: a file by URL")), (-32005, true));
        let v03_uri = parts(json!([{"kind": "file", "file": {"uri": "file:///etc/passwd"}}])).unwrap_err();
        assert_eq!(v03_uri.code, -32005);
        let not_base64 = parts(json!([{"text": "x"}, {"raw": "%%%"}])).unwrap_err();
        assert_eq!(not_base64.code, -32602);
        assert!(not_base64.message.starts_with("message.parts[1].raw: not base64"), "{}", not_base64.message);
        let many: Vec<Value> = (0..=MAX_FILES).map(|_| json!({"raw": "eA=="})).collect();
        let too_many = parts(Value::Array(many)).unwrap_err();
        assert!(too_many.message.contains("at most 16 files"), "{}", too_many.message);
    }

    #[test]
    fn a_message_without_an_id_gets_one() {
        let read = read(json!({"parts": [{"text": "hi"}]}).as_object().expect("an object")).expect("read");
        assert_eq!(read.sent.message_id.len(), 36);
    }
}
