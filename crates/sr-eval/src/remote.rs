//! `sr eval --server URL`: each case run is a run of an `sr serve` (its API
//! v1), in a session of its own. The run is submitted with `POST /v1/runs`,
//! its events are read from `GET /v1/runs/{id}/events` (Server-Sent Events,
//! resumed after the last event seen when the stream breaks), and its result,
//! error and status from `GET /v1/runs/{id}`, so the scorers get what a local
//! run gives them. The work directory stays on the server: cases with files
//! and scorers that read files are refused before anything runs
//! ([`unsupported`]).
//!
//! The API key is held in a header value marked sensitive (its `Debug` hides
//! it) and is sent only as `Authorization: Bearer`; no message quotes it.

use std::io::Write;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt;
use reqwest::header::HeaderValue;
use reqwest::{Method, StatusCode};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use sr_api::{ErrorAnswer, Event, Payload, Run, RunAccepted, RunEnd, RunRequest, RunStatus, WorkloadList};
use tokio::task::JoinHandle;

use crate::dataset::{Case, Files};
use crate::scorer::Scorer;

mod error;
pub use error::{RemoteError, SetupError};

/// Bound on connecting to a server.
const CONNECT: Duration = Duration::from_secs(10);
/// Bound on one request and its answer (the event stream aside).
const REQUEST: Duration = Duration::from_secs(60);
/// Bound on the silence of an event stream: the server sends a keep-alive
/// comment every 15 seconds, so a longer silence is a dead connection.
const SILENCE: Duration = Duration::from_secs(60);
/// How long a pooled connection may idle: under `sr serve`'s default
/// `--header-timeout` (10 s), after which the server closes it.
const IDLE: Duration = Duration::from_secs(5);
/// Reconnections of one run's event stream before the case fails.
const RECONNECTS: u32 = 5;
/// The largest answer read from a request (the event stream aside).
const MAX_ANSWER: usize = 64 << 20;

/// The servers an evaluation submits its case runs to, in turn.
pub struct Servers {
    servers: Vec<Server>,
    next: AtomicUsize,
}

#[derive(Clone)]
struct Server {
    /// The URL as given, without a trailing `/`.
    base: String,
    /// `Bearer KEY`, marked sensitive.
    auth: Option<HeaderValue>,
    client: reqwest::Client,
    /// Cancels sent for runs whose case was dropped ([`Servers::settle`] waits for them).
    cancels: Arc<Mutex<Vec<JoinHandle<()>>>>,
}

/// A failed request: what to say, and the HTTP status when there was an answer.
struct Failure {
    status: Option<StatusCode>,
    message: String,
}

impl Servers {
    /// Clients for `urls` (`http://` or `https://`), sending `key` when given.
    pub fn new(urls: &[String], key: Option<&str>) -> Result<Servers, SetupError> {
        let auth = match key {
            Some(key) => {
                let mut value =
                    HeaderValue::from_str(&format!("Bearer {key}")).map_err(|_| SetupError::KeyNotHeader)?;
                value.set_sensitive(true);
                Some(value)
            }
            None => None,
        };
        let client = reqwest::Client::builder()
            .connect_timeout(CONNECT)
            .read_timeout(SILENCE)
            .pool_idle_timeout(IDLE)
            .user_agent(concat!("sr-eval/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(SetupError::Client)?;
        let cancels = Arc::default();
        let mut servers = Vec::new();
        for url in urls {
            let parsed =
                reqwest::Url::parse(url).map_err(|e| SetupError::BadUrl { url: url.clone(), cause: e.to_string() })?;
            if !matches!(parsed.scheme(), "http" | "https") || parsed.host().is_none() {
                return Err(SetupError::NotHttp(url.clone()));
            }
            if !parsed.username().is_empty() || parsed.password().is_some() {
                return Err(SetupError::KeyInUrl(url.clone()));
            }
            if parsed.query().is_some() || parsed.fragment().is_some() {
                return Err(SetupError::QueryOrFragment(url.clone()));
            }
            let base = url.trim_end_matches('/').to_string();
            servers.push(Server { base, auth: auth.clone(), client: client.clone(), cancels: Arc::clone(&cancels) });
        }
        if servers.is_empty() {
            return Err(SetupError::NoServer);
        }
        Ok(Servers { servers, next: AtomicUsize::new(0) })
    }

    /// Every server serves every workload (by its file stem) and entry that
    /// `wanted` names; every problem, each naming the server.
    pub async fn check(&self, wanted: &[(String, Option<String>)]) -> Vec<String> {
        let mut problems = Vec::new();
        for server in &self.servers {
            let served: WorkloadList = match server.request(Method::GET, "/v1/workloads", None::<&Value>).await {
                Ok(answer) => answer,
                Err(failure) => {
                    problems.push(server.explain(failure));
                    continue;
                }
            };
            let names: Vec<&str> = served.workloads.iter().map(|w| w.name.as_str()).collect();
            for (workload, entry) in wanted {
                let name = served_name(workload);
                let Some(found) = served.workloads.iter().find(|w| w.name == name) else {
                    let serves = if names.is_empty() { "nothing".to_string() } else { names.join(", ") };
                    problems.push(format!(
                        "{}: the server serves no workload named `{name}` (for {workload}); it serves: {serves}",
                        server.base
                    ));
                    continue;
                };
                let entries: Vec<&str> = found.entries.iter().map(|e| e.name.as_str()).collect();
                if let Some(entry) = entry
                    && !entries.contains(&entry.as_str())
                {
                    problems.push(format!(
                        "{}: the server's workload `{name}` has no entry `{entry}`; its entries: {}",
                        server.base,
                        entries.join(", ")
                    ));
                }
            }
        }
        problems.sort();
        problems.dedup();
        problems
    }

    /// Waits (at most [`REQUEST`]) for the cancels of runs whose case was
    /// dropped (a timeout, a stop) to be sent, so none is lost when sr exits.
    pub async fn settle(&self) {
        let Some(server) = self.servers.first() else { return };
        let pending = std::mem::take(&mut *server.cancels.lock().unwrap_or_else(|poisoned| poisoned.into_inner()));
        let _ = tokio::time::timeout(REQUEST, futures::future::join_all(pending)).await;
    }

    /// The servers' URLs, as given.
    pub fn urls(&self) -> Vec<String> {
        self.servers.iter().map(|s| s.base.clone()).collect()
    }

    /// Runs one case on the next server in turn.
    pub(crate) async fn run(&self, ask: &Ask<'_>) -> Ran {
        let at = self.next.fetch_add(1, Ordering::Relaxed) % self.servers.len();
        self.servers[at].run(ask).await
    }
}

/// The name a server gives the workload in `file`: its file stem.
pub fn served_name(file: &str) -> String {
    Path::new(file).file_stem().map_or_else(|| file.to_string(), |s| s.to_string_lossy().into_owned())
}

/// What the cases ask that a server cannot do, one problem per case: starting
/// files (the run's work directory is the server's, and the API takes no
/// files), variables to start with (the API takes a message only) and
/// scorers that read the work directory (`file`, `flow`).
pub fn unsupported(cases: &[Case]) -> Vec<String> {
    let mut problems = Vec::new();
    for case in cases {
        if !case.vars.is_empty() {
            problems.push(format!(
                "case {}: has `vars`, which --server cannot send (the server's runs start from a message only)",
                case.id
            ));
        }
        if !matches!(&case.files, Files::Map(files) if files.is_empty()) {
            problems.push(format!(
                "case {}: has starting files, which --server cannot send (the server's runs start in an empty work directory)",
                case.id
            ));
        }
        for scorer in &case.expect {
            if matches!(scorer, Scorer::File { .. } | Scorer::Flow(_)) {
                problems.push(format!(
                    "case {}: the `{}` scorer reads the run's work directory, which stays on the server with --server",
                    case.id,
                    scorer.kind()
                ));
            }
        }
    }
    problems
}

/// One case run to submit.
pub(crate) struct Ask<'a> {
    pub workload: &'a str,
    pub entry: Option<&'a str>,
    pub model: Option<&'a str>,
    pub prompt: &'a str,
    pub events_file: &'a Path,
}

/// What a server's run gave: its id once submitted, its events (text deltas
/// left out), its result and its error.
pub(crate) struct Ran {
    pub run: Option<String>,
    pub events: Vec<Event>,
    pub result: Option<Value>,
    pub error: Option<String>,
}

impl Server {
    async fn run(&self, ask: &Ask<'_>) -> Ran {
        let mut ran = Ran { run: None, events: Vec::new(), result: None, error: None };
        let body = RunRequest {
            workload: served_name(ask.workload),
            entry: ask.entry.map(str::to_string),
            prompt: Some(ask.prompt.to_string()),
            input: None,
            session: None,
            model: ask.model.map(str::to_string),
            wait: false,
            on_conflict: sr_api::OnConflict::Reject,
        };
        let id = match self.request::<RunAccepted>(Method::POST, "/v1/runs", Some(&body)).await {
            Ok(answer) => answer.id,
            Err(failure) => {
                ran.error = Some(self.explain(failure));
                return ran;
            }
        };
        ran.run = Some(id.clone());
        // Should this future be dropped (a timeout, Ctrl-C), the run is cancelled.
        let mut pending = Pending { server: self.clone(), id: id.clone(), ended: false };
        let outcome = self.follow(&id, ask.events_file).await;
        pending.ended = true;
        match outcome {
            Ok((events, row)) => {
                ran.events = events;
                ran.result = row.result.filter(|r| !r.is_null());
                ran.error = row.error;
                if row.status != RunStatus::Done && ran.error.is_none() {
                    ran.error = Some(format!("the run ended {} on the server", row.status));
                }
            }
            Err(e) => ran.error = Some(e.to_string()),
        }
        ran
    }

    /// Reads the run's events to the end of its stream (reconnecting after
    /// the last one seen), writing them to `events_file`; then the run's row.
    async fn follow(&self, id: &str, events_file: &Path) -> Result<(Vec<Event>, Run), RemoteError> {
        let cannot = |source| RemoteError::Write { path: events_file.to_path_buf(), source };
        if let Some(parent) = events_file.parent() {
            std::fs::create_dir_all(parent).map_err(cannot)?;
        }
        let mut file = std::io::BufWriter::new(std::fs::File::create(events_file).map_err(cannot)?);
        let mut events = Vec::new();
        let mut after = 0u64;
        // A question the run asked, until its pause's `run_finished` comes.
        let mut asked = None;
        let mut broken = 0;
        loop {
            let failure = match self.stream(id, &mut after, &mut asked, &mut events, &mut file).await {
                Ok(Some(question)) => {
                    self.cancel(id).await;
                    return Err(RemoteError::AskedHuman(question));
                }
                Ok(None) => None,
                Err(e) => Some(e),
            };
            file.flush().map_err(cannot)?;
            // A broken stream is the first thing to tell, before what asking for the row gave.
            let row: Run = match self.request(Method::GET, &format!("/v1/runs/{id}"), None::<&Value>).await {
                Ok(row) => row,
                Err(f) => return Err(failure.unwrap_or_else(|| RemoteError::Request(self.explain(f)))),
            };
            if row.status.is_ended() && failure.is_none() {
                return Ok((events, row));
            }
            broken += 1;
            if broken > RECONNECTS {
                return Err(RemoteError::Broke { base: self.base.clone(), why: failure.map(Box::new) });
            }
            tokio::time::sleep(Duration::from_millis(100 << broken.min(4))).await;
        }
    }

    /// One connection to the run's event stream, from the event after
    /// `after`. `Ok(Some(question))`: the run waits for a human's answer.
    async fn stream(
        &self,
        id: &str,
        after: &mut u64,
        asked: &mut Option<String>,
        events: &mut Vec<Event>,
        file: &mut impl Write,
    ) -> Result<Option<String>, RemoteError> {
        let url = format!("{}/v1/runs/{id}/events?after={after}", self.base);
        let response = self
            .with_key(self.client.get(&url))
            .send()
            .await
            .map_err(|e| RemoteError::Request(unreachable(&self.base, &e)))?;
        if !response.status().is_success() {
            return Err(RemoteError::Request(self.explain(answer_failure(response).await)));
        }
        let mut stream = sr_llm::sse::events(response.bytes_stream());
        while let Some(next) = stream.next().await {
            let data = next.map_err(RemoteError::NotSse)?.data;
            let value: Value = serde_json::from_str(&data)
                .map_err(|source| RemoteError::EventNotJson { base: self.base.clone(), source })?;
            let Some(seq) = value["seq"].as_u64() else {
                return Err(RemoteError::NoSeq(self.base.clone()));
            };
            if seq <= *after {
                continue;
            }
            *after = seq;
            // Deltas are the model's text in pieces: the responses carry it whole.
            if value["type"] == "text_delta" {
                continue;
            }
            let mut paused = false;
            let line = match serde_json::from_value::<Event>(value.clone()) {
                Ok(event) => {
                    let line = serde_json::to_string(&event).unwrap_or_default();
                    paused = matches!(event.payload, Payload::RunFinished { status: RunEnd::Paused, .. });
                    events.push(event);
                    line
                }
                // An event the server cut down (`event_too_large`) is kept as it came.
                Err(_) => data,
            };
            writeln!(file, "{line}").map_err(RemoteError::Events)?;
            if value["type"] == "human_input_requested" {
                *asked = Some(value["message"].as_str().unwrap_or("a question").to_string());
            }
            // The server stores a pause's `run_finished` with the run's status
            // (one transaction): the run is paused, waiting for an answer.
            if paused && let Some(question) = asked.take() {
                return Ok(Some(question));
            }
        }
        Ok(None)
    }

    async fn cancel(&self, id: &str) {
        // `{}`: the server takes only JSON bodies on POST.
        let _ = self.request::<Value>(Method::POST, &format!("/v1/runs/{id}/cancel"), Some(&json!({}))).await;
    }

    fn with_key(&self, request: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        match &self.auth {
            Some(auth) => request.header(reqwest::header::AUTHORIZATION, auth.clone()),
            None => request,
        }
    }

    /// A JSON request and its answer (a 2xx) as API v1 shapes it, within [`REQUEST`].
    async fn request<T: DeserializeOwned>(
        &self,
        method: Method,
        path: &str,
        body: Option<&impl Serialize>,
    ) -> Result<T, Failure> {
        let mut request = self.with_key(self.client.request(method, format!("{}{path}", self.base))).timeout(REQUEST);
        if let Some(body) = body {
            let text = serde_json::to_string(body).expect("the API's requests serialise to JSON");
            request = request.header("content-type", "application/json").body(text);
        }
        let response =
            request.send().await.map_err(|e| Failure { status: None, message: unreachable(&self.base, &e) })?;
        if !response.status().is_success() {
            return Err(answer_failure(response).await);
        }
        let status = response.status();
        let text = bounded_text(response).await.map_err(|message| Failure { status: Some(status), message })?;
        serde_json::from_str(&text).map_err(|e| Failure {
            status: Some(status),
            message: format!("its answer to {path} is not what API v1 answers: {e}"),
        })
    }

    /// A failure as the user reads it: the server, and what went wrong.
    fn explain(&self, failure: Failure) -> String {
        match failure.status {
            None => failure.message,
            Some(StatusCode::UNAUTHORIZED) => format!(
                "{}: the server refused the API key (401 Unauthorized): give the right one with --api-key-file",
                self.base
            ),
            Some(status) => format!("{}: {} ({status})", self.base, failure.message),
        }
    }
}

/// Cancels the run if the case is dropped before its run ended.
struct Pending {
    server: Server,
    id: String,
    ended: bool,
}

impl Drop for Pending {
    fn drop(&mut self) {
        if self.ended {
            return;
        }
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            let (server, id) = (self.server.clone(), std::mem::take(&mut self.id));
            let cancels = Arc::clone(&server.cancels);
            let task = runtime.spawn(async move { server.cancel(&id).await });
            cancels.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).push(task);
        }
    }
}

fn unreachable(base: &str, error: &reqwest::Error) -> String {
    let why = if error.is_timeout() { "it did not answer in time".to_string() } else { chain(error) };
    format!("cannot reach the server at {base}: {why}")
}

/// An error and its causes, which say what failed (refused, reset, DNS).
fn chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

/// The server's `{error: {code, message}}`, or its text.
async fn answer_failure(response: reqwest::Response) -> Failure {
    let status = response.status();
    let text = bounded_text(response).await.unwrap_or_default();
    let message = match serde_json::from_str::<ErrorAnswer>(&text) {
        Ok(body) => format!("{}: {}", body.error.code, body.error.message),
        _ if text.trim().is_empty() => "the server answered with no detail".to_string(),
        _ => text.chars().take(500).collect(),
    };
    Failure { status: Some(status), message }
}

/// A response's body as text, refused beyond [`MAX_ANSWER`].
async fn bounded_text(response: reqwest::Response) -> Result<String, String> {
    let mut body = Vec::new();
    let mut chunks = response.bytes_stream();
    while let Some(chunk) = chunks.next().await {
        let chunk = chunk.map_err(|e| format!("its answer broke off: {}", chain(&e)))?;
        if body.len() + chunk.len() > MAX_ANSWER {
            return Err(format!("its answer is over {} MiB", MAX_ANSWER >> 20));
        }
        body.extend_from_slice(&chunk);
    }
    String::from_utf8(body).map_err(|_| "its answer is not UTF-8".to_string())
}

/// The key in `path`: its first line that is neither blank nor a `#` comment
/// (the format of `sr serve --api-key-file`).
pub fn read_key(path: &Path) -> Result<String, SetupError> {
    let text =
        std::fs::read_to_string(path).map_err(|source| SetupError::KeyFile { path: path.to_path_buf(), source })?;
    text.lines()
        .map(str::trim)
        .find(|line| !line.is_empty() && !line.starts_with('#'))
        .map(str::to_string)
        .ok_or_else(|| SetupError::NoKey { path: path.to_path_buf() })
}

#[cfg(test)]
mod tests;
