//! Record and replay of provider exchanges, so any run can be reproduced
//! offline. The file format is described in the crate docs.

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use futures::stream::{Stream, StreamExt};
use serde_json::{Map, Value, json};

use crate::turns::Turns;
use crate::{ChatEvent, ChatRequest, ChatStream, LlmError, Provider};

/// The `kind` of the lines this crate writes and reads.
pub const LLM_KIND: &str = "llm";
/// The format version of `llm` lines; the replayer refuses newer ones.
pub const CASSETTE_VERSION: u64 = 1;

/// An append-only JSON-lines file. One handle is shared by every writer of a
/// run (the runtime appends its own kinds of entries to the same file).
#[derive(Debug)]
pub struct Cassette {
    path: PathBuf,
    file: Mutex<File>,
    /// Secrets replaced in every entry before it is written.
    redactor: Option<Arc<crate::Redactor>>,
    /// Another cassette every entry is also appended to.
    mirror: Option<Arc<Cassette>>,
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
        Ok(Cassette { path: path.to_owned(), file: Mutex::new(file), redactor: None, mirror: None })
    }

    /// Every entry is also appended to `mirror` (a run's journal and its
    /// `--record` file get the same lines).
    pub fn mirrored_to(mut self, mirror: Arc<Cassette>) -> Cassette {
        self.mirror = Some(mirror);
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
        drop(file);
        match &self.mirror {
            Some(mirror) => mirror.append(entry),
            None => Ok(()),
        }
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

/// Passes every exchange of `inner` through, live, and appends it to the cassette.
pub struct Recorder {
    inner: Arc<dyn Provider>,
    cassette: Arc<Cassette>,
    /// Requests made so far; each exchange records the count when it ends,
    /// so a replay can serve it at the same point.
    asked: Arc<AtomicUsize>,
}

impl Recorder {
    pub fn new(inner: Arc<dyn Provider>, cassette: Arc<Cassette>) -> Recorder {
        Recorder { inner, cassette, asked: Arc::default() }
    }
}

impl Provider for Recorder {
    fn chat(&self, request: ChatRequest) -> ChatStream {
        self.asked.fetch_add(1, Ordering::SeqCst);
        let pending = Some((normalize(&request), self.cassette.clone()));
        let (inner, asked) = (self.inner.chat(request), self.asked.clone());
        Box::pin(Recording { inner, pending, asked, events: Vec::new(), ended: false })
    }
}

/// Writes its exchange when the reply finishes or fails, or, marked
/// `cancelled`, when the consumer drops it before that.
struct Recording {
    inner: ChatStream,
    pending: Option<(Value, Arc<Cassette>)>,
    asked: Arc<AtomicUsize>,
    events: Vec<ChatEvent>,
    ended: bool,
}

impl Recording {
    fn write(&mut self, error: Option<&LlmError>, cancelled: bool) -> Result<(), LlmError> {
        let Some((request, cassette)) = self.pending.take() else { return Ok(()) };
        let mut entry = json!({
            "kind": LLM_KIND,
            "version": CASSETTE_VERSION,
            "request": request,
            "events": std::mem::take(&mut self.events),
            "asked": self.asked.load(Ordering::SeqCst),
        });
        if let Some(error) = error {
            entry["error"] = serde_json::to_value(error).expect("errors always serialize");
        }
        if cancelled {
            entry["cancelled"] = json!(true);
        }
        cassette.append(&entry)
    }
}

impl Stream for Recording {
    type Item = Result<ChatEvent, LlmError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        if self.ended {
            return Poll::Ready(None);
        }
        let item = match self.inner.poll_next_unpin(cx) {
            Poll::Pending => return Poll::Pending,
            Poll::Ready(item) => item,
        };
        Poll::Ready(match item {
            Some(Ok(event)) => {
                self.events.push(event.clone());
                match event {
                    // Nothing follows `Finished`: the exchange is complete even if the
                    // consumer stops polling now.
                    ChatEvent::Finished { .. } => match self.write(None, false) {
                        Ok(()) => Some(Ok(event)),
                        Err(err) => Some(Err(err)),
                    },
                    event => Some(Ok(event)),
                }
            }
            Some(Err(err)) => {
                self.ended = true;
                // The provider's error matters more than a failed write of it.
                let _ = self.write(Some(&err), false);
                Some(Err(err))
            }
            None => {
                self.ended = true;
                self.write(None, false).err().map(Err)
            }
        })
    }
}

impl Drop for Recording {
    fn drop(&mut self) {
        // Nobody is left to report a failed write to.
        let _ = self.write(None, true);
    }
}

/// Serves recorded exchanges by matching the normalized request: identical
/// requests get their answers in recorded order, different ones in any order.
/// A request that was not recorded fails with the nearest recorded request and
/// where it differs. An exchange the live run cancelled (a timeout, a failed
/// sibling branch) sends what it had sent and then nothing, so the replay
/// cancels it at the same point instead of seeing a reply cut short. Replies
/// are served in the order the live run finished them (`turns.rs`).
pub struct Replayer {
    state: Mutex<Replay>,
    turns: Arc<Turns>,
}

struct Replay {
    queues: HashMap<String, VecDeque<Exchange>>,
    recorded: Vec<Recorded>,
}

struct Recorded {
    line: usize,
    request: Value,
}

struct Exchange {
    /// Its place in the recorded order.
    position: usize,
    /// Requests the live run had made when it finished.
    after_asked: usize,
    events: Vec<ChatEvent>,
    error: Option<LlmError>,
    cancelled: bool,
}

impl Replayer {
    pub fn open(path: impl AsRef<Path>) -> Result<Replayer, LlmError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|err| cassette_error(path, &err.to_string()))?;
        Replayer::parse(&text).map_err(|err| match err {
            LlmError::Cassette { message } => cassette_error(path, &message),
            other => other,
        })
    }

    pub fn parse(text: &str) -> Result<Replayer, LlmError> {
        Replayer::parse_with(text, true)
    }

    /// A journal's completed exchanges only: a resumed run asks the model
    /// again for what was cancelled, as it never reached the run.
    pub fn parse_completed(text: &str) -> Result<Replayer, LlmError> {
        Replayer::parse_with(text, false)
    }

    fn parse_with(text: &str, keep_cancelled: bool) -> Result<Replayer, LlmError> {
        let mut queues: HashMap<String, VecDeque<Exchange>> = HashMap::new();
        let mut recorded = Vec::new();
        for (line, mut entry) in cassette_entries(text, LLM_KIND)? {
            if entry["version"].as_u64().is_some_and(|version| version > CASSETTE_VERSION) {
                return Err(LlmError::Cassette {
                    message: format!("line {line} has format version {}, newer than this program's", entry["version"]),
                });
            }
            let invalid = |what: &str, err: serde_json::Error| LlmError::Cassette {
                message: format!("line {line}: invalid {what}: {err}"),
            };
            // Parsed and normalized again, so hand-edited lines still match.
            let request: ChatRequest =
                serde_json::from_value(entry["request"].take()).map_err(|err| invalid("request", err))?;
            let events = serde_json::from_value(entry["events"].take()).map_err(|err| invalid("events", err))?;
            let error = match entry["error"].take() {
                Value::Null => None,
                error => Some(serde_json::from_value(error).map_err(|err| invalid("error", err))?),
            };
            let cancelled = entry["cancelled"] == json!(true);
            if cancelled && !keep_cancelled {
                continue;
            }
            let request = normalize(&request);
            let (position, after_asked) = (recorded.len(), entry["asked"].as_u64().unwrap_or(0) as usize);
            let exchange = Exchange { position, after_asked, events, error, cancelled };
            queues.entry(request.to_string()).or_default().push_back(exchange);
            recorded.push(Recorded { line, request });
        }
        Ok(Replayer { state: Mutex::new(Replay { queues, recorded }), turns: Arc::default() })
    }

    /// Exchanges not served yet; a complete replay leaves none.
    pub fn remaining(&self) -> usize {
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).queues.values().map(VecDeque::len).sum()
    }
}

impl Provider for Replayer {
    fn chat(&self, request: ChatRequest) -> ChatStream {
        self.turns.asked();
        let request = normalize(&request);
        let mut state = self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(exchange) = state.queues.get_mut(&request.to_string()).and_then(VecDeque::pop_front) {
            let items = exchange.events.into_iter().map(Ok).chain(exchange.error.map(Err)).collect();
            return self.turns.serve(exchange.position, exchange.after_asked, items, exchange.cancelled).boxed();
        }
        crate::provider::failed(LlmError::NotRecorded { message: state.miss(&request) })
    }
}

impl Replay {
    fn miss(&self, request: &Value) -> String {
        let mut message = format!("no recorded answer for a request to `{}`", request["model"].as_str().unwrap_or("?"));
        let nearest =
            self.recorded.iter().map(|recorded| (recorded, differences(&recorded.request, request))).min_by_key(
                |(recorded, diffs)| (diffs.len(), diffs.iter().map(Difference::weight).sum::<usize>(), recorded.line),
            );
        match nearest {
            None => message.push_str("; the cassette holds no LLM exchanges"),
            Some((recorded, diffs)) if diffs.is_empty() => {
                let times = self.recorded.iter().filter(|other| other.request == *request).count();
                message.push_str(&format!(
                    "; it was recorded {times} time(s) (first at line {}) and every answer was already served",
                    recorded.line
                ));
            }
            Some((recorded, diffs)) => {
                message.push_str(&format!("; the nearest recorded request (line {}) differs at:", recorded.line));
                const SHOWN: usize = 8;
                for diff in diffs.iter().take(SHOWN) {
                    message.push_str(&format!("\n  {diff}"));
                }
                if diffs.len() > SHOWN {
                    message.push_str(&format!("\n  ... and {} more", diffs.len() - SHOWN));
                }
            }
        }
        message
    }
}

/// Where a requested value differs from a recorded one.
struct Difference {
    path: String,
    recorded: Option<Value>,
    requested: Option<Value>,
}

impl Difference {
    /// How far apart the two values are, to rank requests that differ in as
    /// many places: the characters outside a common prefix and suffix.
    fn weight(&self) -> usize {
        let text = |value: &Option<Value>| match value {
            Some(Value::String(text)) => text.clone(),
            Some(value) => value.to_string(),
            None => String::new(),
        };
        let (a, b) = (text(&self.recorded), text(&self.requested));
        let prefix = a.chars().zip(b.chars()).take_while(|(x, y)| x == y).count();
        let suffix = a.chars().rev().zip(b.chars().rev()).take_while(|(x, y)| x == y).count();
        let shared = (prefix + suffix).min(a.chars().count()).min(b.chars().count());
        a.chars().count() + b.chars().count() - 2 * shared
    }
}

impl fmt::Display for Difference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = if self.path.is_empty() { "/" } else { self.path.as_str() };
        write!(f, "{at}: recorded {}, requested {}", shown(self.recorded.as_ref()), shown(self.requested.as_ref()))
    }
}

/// Where two JSON values differ, one entry per leaf, in document order.
fn differences(recorded: &Value, requested: &Value) -> Vec<Difference> {
    let mut out = Vec::new();
    diff(Some(recorded), Some(requested), &mut String::new(), &mut out);
    out
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
    use crate::{FinishReason, Message, Part, Role, ToolCall, ToolResult};

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
        let differences: Vec<String> = differences(&recorded, &requested).iter().map(ToString::to_string).collect();
        assert_eq!(
            differences,
            vec![
                r#"/messages/0/text: recorded "hello", requested "hi""#,
                r#"/messages/1: recorded (nothing), requested {"text":"more"}"#,
                "/temperature: recorded 0.5, requested (nothing)",
            ]
        );
    }

    fn line(request: &ChatRequest, text: &str) -> String {
        json!({
            "kind": "llm",
            "version": 1,
            "request": normalize(request),
            "events": [ChatEvent::TextDelta(text.into()), ChatEvent::Finished { reason: FinishReason::Stop }],
        })
        .to_string()
    }

    #[test]
    fn entries_of_other_kinds_are_skipped_and_newer_versions_refused() {
        let text = "{\"kind\":\"tool\",\"result\":1}\n\n{\"kind\":\"llm\",\"version\":1}\n";
        let entries = cassette_entries(text, "tool").unwrap();
        assert_eq!(entries.len(), 1);
        assert_eq!(entries[0].0, 1);
        let err = Replayer::parse("{\"kind\":\"tool\",\"version\":7}\n{\"kind\":\"llm\",\"version\":2}").err().unwrap();
        assert_eq!(err.to_string(), "cassette: line 2 has format version 2, newer than this program's");
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

    #[tokio::test]
    async fn replay_matches_requests_and_explains_misses() {
        let first = ChatRequest::new("m", vec![Message::user("one")]);
        let second = ChatRequest::new("m", vec![Message::user("two")]);
        let text = [line(&first, "1a"), line(&second, "2"), line(&first, "1b")].join("\n");
        let replayer = Replayer::parse(&text).unwrap();
        let reply = |request: &ChatRequest| {
            let stream = replayer.chat(request.clone());
            async move { crate::ChatResponse::collect(stream).await }
        };
        // Out of recorded order across requests, in order for identical ones.
        assert_eq!(reply(&second).await.unwrap().text, "2");
        assert_eq!(reply(&first).await.unwrap().text, "1a");
        assert_eq!(reply(&first).await.unwrap().text, "1b");
        assert_eq!(replayer.remaining(), 0);

        let err = reply(&first).await.unwrap_err();
        assert!(err.to_string().contains("recorded 2 time(s) (first at line 1)"), "{err}");
        let err = reply(&ChatRequest::new("m", vec![Message::user("twx")])).await.unwrap_err();
        assert_eq!(
            err.to_string(),
            "replay: no recorded answer for a request to `m`; the nearest recorded request (line 2) differs at:\n  \
             /messages/0/content/0/text: recorded \"two\", requested \"twx\""
        );
    }

    #[tokio::test]
    async fn a_cancelled_exchange_stalls_in_a_replay_and_is_asked_again_on_resume() {
        use futures::StreamExt;
        let request = ChatRequest::new("m", vec![Message::user("slow")]);
        let cancelled = json!({
            "kind": "llm", "version": 1, "request": normalize(&request),
            "events": [ChatEvent::TextDelta("half".into())], "cancelled": true,
        });
        let text = format!("{cancelled}\n{}", line(&request, "whole"));

        let replayer = Replayer::parse(&text).unwrap();
        let mut stream = replayer.chat(request.clone());
        assert!(matches!(stream.next().await, Some(Ok(ChatEvent::TextDelta(t))) if t == "half"));
        let rest = tokio::time::timeout(std::time::Duration::from_millis(50), stream.next()).await;
        assert!(rest.is_err(), "the replayed exchange waits to be cancelled again: {rest:?}");
        assert_eq!(crate::ChatResponse::collect(replayer.chat(request.clone())).await.unwrap().text, "whole");

        let journal = Replayer::parse_completed(&text).unwrap();
        assert_eq!(crate::ChatResponse::collect(journal.chat(request.clone())).await.unwrap().text, "whole");
        assert_eq!(journal.remaining(), 0);
    }
}
