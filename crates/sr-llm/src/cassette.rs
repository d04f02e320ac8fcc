//! Cassettes: the append-only JSON-lines files runs are journaled to, and the
//! normalized form in which model requests are recorded and compared. The
//! format is described in the crate docs.

use std::collections::HashMap;
use std::fmt;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde_json::{Map, Value};

use crate::{ChatRequest, LlmError};

/// The `kind` of the lines this crate writes and reads.
pub const LLM_KIND: &str = "llm";
/// The format version of `llm` lines.
pub const CASSETTE_VERSION: u64 = 1;

/// A copy of a cassette's lines kept elsewhere (`sr serve`'s store of
/// record): each line, as written to the file, is handed over before
/// [`Cassette::append`] returns and in the file's order, so the copy can
/// make an entry durable before the step it records counts as done (it may
/// hold back lines that record no step). An error fails the append; its
/// type is the copy's owner's (this crate only shows it).
pub trait LineCopy: Send + Sync {
    fn copy(&self, line: &str) -> Result<(), Box<dyn std::error::Error + Send + Sync>>;
}

/// An append-only JSON-lines file. One handle is shared by every writer of a
/// run (the runtime appends its own kinds of entries to the same file).
pub struct Cassette {
    path: PathBuf,
    file: Mutex<File>,
    /// Secrets replaced in every entry before it is written.
    redactor: Option<Arc<crate::Redactor>>,
    /// Another cassette every entry is also appended to.
    mirror: Option<Arc<Cassette>>,
    /// Where every line is copied too.
    copy: Option<Arc<dyn LineCopy>>,
}

impl fmt::Debug for Cassette {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Cassette").field("path", &self.path).field("copied", &self.copy.is_some()).finish()
    }
}

impl Cassette {
    /// Starts an empty cassette at `path`, replacing any file there.
    pub fn create(path: impl AsRef<Path>) -> Result<Cassette, LlmError> {
        Cassette::open(path.as_ref(), OpenOptions::new().write(true).create(true).truncate(true))
    }

    /// Opens the cassette at `path` to add to it, e.g. for a resumed run.
    pub fn append_to(path: impl AsRef<Path>) -> Result<Cassette, LlmError> {
        Cassette::open(path.as_ref(), OpenOptions::new().append(true).create(true))
    }

    fn open(path: &Path, options: &OpenOptions) -> Result<Cassette, LlmError> {
        let file = options.open(path).map_err(|err| cassette_error(path, &err.to_string()))?;
        Ok(Cassette { path: path.to_owned(), file: Mutex::new(file), redactor: None, mirror: None, copy: None })
    }

    /// Every entry is also appended to `mirror` (a run's journal and its
    /// `--record` file get the same lines).
    pub fn mirrored_to(mut self, mirror: Arc<Cassette>) -> Cassette {
        self.mirror = Some(mirror);
        self
    }

    /// Every line is also handed to `copy`, after the file has it.
    pub fn copying_to(mut self, copy: Arc<dyn LineCopy>) -> Cassette {
        self.copy = Some(copy);
        self
    }

    /// Every entry is redacted by `redactor` before it is written.
    pub fn redacting(mut self, redactor: Arc<crate::Redactor>) -> Cassette {
        self.redactor = Some(redactor);
        self
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends one entry as one line and flushes it, so a crash loses at most
    /// the exchange in flight.
    pub fn append(&self, entry: &Value) -> Result<(), LlmError> {
        let mut line = match &self.redactor {
            Some(redactor) => {
                let mut entry = entry.clone();
                redactor.redact_value(&mut entry);
                entry.to_string()
            }
            None => entry.to_string(),
        };
        line.push('\n');
        let mut file = self.file.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        file.write_all(line.as_bytes())
            .and_then(|()| file.flush())
            .map_err(|err| cassette_error(&self.path, &err.to_string()))?;
        // Under the file's lock: the copy gets the lines in the file's order.
        if let Some(copy) = &self.copy {
            copy.copy(line.trim_end_matches('\n')).map_err(|err| cassette_error(&self.path, &err.to_string()))?;
        }
        drop(file);
        sim_kill_point();
        match &self.mirror {
            Some(mirror) => mirror.append(entry),
            None => Ok(()),
        }
    }
}

/// A testing hook of `cargo xtask simulate`: with
/// `SR_SIM_KILL_AFTER_JOURNAL_LINES=N` set, the process aborts (no destructor,
/// no cleanup, like `kill -9`) right after the `N`th line it wrote to a
/// cassette (a `--record` mirror's lines count too), so the simulator can cut a
/// run off after every journal write.
fn sim_kill_point() {
    static WRITTEN: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    static AFTER: std::sync::OnceLock<Option<u64>> = std::sync::OnceLock::new();
    let after = AFTER.get_or_init(|| std::env::var("SR_SIM_KILL_AFTER_JOURNAL_LINES").ok()?.parse().ok());
    if let Some(after) = after
        && WRITTEN.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1 == *after
    {
        std::process::abort();
    }
}

/// The entries of `kind` in cassette `text`, with their 1-based line numbers;
/// lines of other kinds are skipped.
pub fn cassette_entries(text: &str, kind: &str) -> Result<Vec<(usize, Value)>, LlmError> {
    let mut entries = Vec::new();
    for (number, line) in text.lines().enumerate().map(|(index, line)| (index + 1, line)) {
        if line.trim().is_empty() {
            continue;
        }
        let entry: Value = serde_json::from_str(line)
            .map_err(|err| LlmError::Cassette { message: format!("line {number} is not JSON: {err}") })?;
        if entry["kind"] == kind {
            entries.push((number, entry));
        }
    }
    Ok(entries)
}

/// The request as cassettes store and match it: object keys sorted, tool-call
/// ids renamed `call_0`, `call_1`, ... in order of appearance, since providers
/// make them up anew on every run.
pub fn normalize(request: &ChatRequest) -> Value {
    let mut value = serde_json::to_value(request).expect("a request always serializes");
    let mut ids: HashMap<String, String> = HashMap::new();
    for message in value["messages"].as_array_mut().into_iter().flatten() {
        for part in message["content"].as_array_mut().into_iter().flatten() {
            let field = match part["type"].as_str() {
                Some("tool_call") => "id",
                Some("tool_result") => "call_id",
                _ => continue,
            };
            if let Some(id) = part[field].as_str() {
                let next = ids.len();
                let renamed = ids.entry(id.to_owned()).or_insert_with(|| format!("call_{next}")).clone();
                part[field] = Value::String(renamed);
            }
        }
    }
    sorted(value)
}

fn sorted(value: Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(String, Value)> = map.into_iter().collect();
            entries.sort_by(|(a, _), (b, _)| a.cmp(b));
            Value::Object(entries.into_iter().map(|(key, value)| (key, sorted(value))).collect::<Map<_, _>>())
        }
        Value::Array(items) => Value::Array(items.into_iter().map(sorted).collect()),
        other => other,
    }
}

fn cassette_error(path: &Path, message: &str) -> LlmError {
    LlmError::Cassette { message: format!("{}: {message}", path.display()) }
}

/// Where a requested value differs from a recorded one.
struct Difference {
    path: String,
    recorded: Option<Value>,
    requested: Option<Value>,
}

impl fmt::Display for Difference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = if self.path.is_empty() { "/" } else { self.path.as_str() };
        write!(f, "{at}: recorded {}, requested {}", shown(self.recorded.as_ref()), shown(self.requested.as_ref()))
    }
}

/// Where two JSON values differ, one line per leaf, in document order, the
/// nearest leaves first: `/messages/0/text: recorded "a", requested "b"`.
pub fn differences(recorded: &Value, requested: &Value) -> Vec<String> {
    let mut out = Vec::new();
    diff(Some(recorded), Some(requested), &mut String::new(), &mut out);
    out.iter().map(ToString::to_string).collect()
}

fn diff(recorded: Option<&Value>, requested: Option<&Value>, path: &mut String, out: &mut Vec<Difference>) {
    let len = path.len();
    match (recorded, requested) {
        (Some(Value::Object(a)), Some(Value::Object(b))) => {
            let mut keys: Vec<&String> = a.keys().chain(b.keys().filter(|key| !a.contains_key(*key))).collect();
            keys.sort();
            for key in keys {
                path.push('/');
                path.push_str(&key.replace('~', "~0").replace('/', "~1"));
                diff(a.get(key), b.get(key), path, out);
                path.truncate(len);
            }
        }
        (Some(Value::Array(a)), Some(Value::Array(b))) => {
            for index in 0..a.len().max(b.len()) {
                path.push_str(&format!("/{index}"));
                diff(a.get(index), b.get(index), path, out);
                path.truncate(len);
            }
        }
        (a, b) if a != b => {
            out.push(Difference { path: path.clone(), recorded: a.cloned(), requested: b.cloned() });
        }
        _ => {}
    }
}

fn shown(value: Option<&Value>) -> String {
    const LIMIT: usize = 60;
    let Some(value) = value else { return "(nothing)".to_owned() };
    let text = value.to_string();
    match text.char_indices().nth(LIMIT) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::{Message, Part, Role, ToolCall, ToolResult};

    #[test]
    fn normalization_renames_ids_and_sorts_keys() {
        let conversation = |id: &str, arguments: Value| ChatRequest {
            messages: vec![
                Message::user("go"),
                Message { role: Role::Assistant, content: vec![Part::ToolCall(ToolCall::new(id, "f", arguments))] },
                Message::tool_results(vec![ToolResult {
                    call_id: id.into(),
                    name: "f".into(),
                    content: json!("ok"),
                    is_error: false,
                }]),
            ],
            ..ChatRequest::new("m", vec![])
        };
        let a = normalize(&conversation("call_XYZ", json!({"b": 1, "a": 2})));
        let b = normalize(&conversation("toolu_123", json!({"a": 2, "b": 1})));
        assert_eq!(a.to_string(), b.to_string());
        assert_eq!(a["messages"][1]["content"][0]["id"], "call_0");
        assert_eq!(a["messages"][2]["content"][0]["call_id"], "call_0");
        assert!(a.to_string().contains(r#"{"a":2,"b":1}"#));
    }

    #[test]
    fn differences_point_at_leaves() {
        let recorded = json!({"model": "m", "messages": [{"text": "hello"}], "temperature": 0.5});
        let requested = json!({"model": "m", "messages": [{"text": "hi"}, {"text": "more"}]});
        let differences = differences(&recorded, &requested);
        assert_eq!(
            differences,
            vec![
                r#"/messages/0/text: recorded "hello", requested "hi""#,
                r#"/messages/1: recorded (nothing), requested {"text":"more"}"#,
                "/temperature: recorded 0.5, requested (nothing)",
            ]
        );
    }

    #[test]
    fn entries_of_other_kinds_are_skipped() {
        let text = "{\"kind\":\"tool\",\"result\":1}\n\n{\"kind\":\"llm\",\"version\":1}\n";
        let entries = cassette_entries(text, "tool").unwrap();
        assert_eq!(entries.len(), 1);
        assert_eq!(entries[0].0, 1);
        let err = cassette_entries("not json", "llm").unwrap_err();
        assert!(err.to_string().contains("line 1"), "{err}");
    }

    #[test]
    fn create_replaces_and_append_to_adds() {
        let path = std::env::temp_dir().join(format!("sr-llm-unit-{}.jsonl", std::process::id()));
        Cassette::create(&path).unwrap().append(&json!({"kind": "x", "n": 1})).unwrap();
        Cassette::append_to(&path).unwrap().append(&json!({"kind": "x", "n": 2})).unwrap();
        assert_eq!(cassette_entries(&std::fs::read_to_string(&path).unwrap(), "x").unwrap().len(), 2);
        Cassette::create(&path).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "");
        std::fs::remove_file(&path).unwrap();
    }
}
