//! Remote A2A agents (`tool reviewer = a2a "CARD_URL" [with auth bearer "…",
//! HEADER "…"]`, our extension): an agent that names one in `use`, `delegate`
//! or `tools` gets a tool of that name taking a `request`, whose answer is
//! what the remote agent answers.
//!
//! The card is fetched at the first call (not at start, so a run that never
//! calls the agent never contacts it), and the call is an A2A `SendMessage`
//! (1.0, preferred) or `message/send` (0.3) to the card's JSON-RPC interface,
//! which must be on the card URL's origin; when the card says it streams,
//! `SendStreamingMessage` (`message/stream`) instead, whose status updates,
//! artifact updates and messages are reported while the call runs (each a
//! `remote_update` event, journaled with the call: see [`stream`]). The
//! request is one text part; the answer is the completed task's artifacts
//! (else its status message, or the message the remote answered with), a part
//! a line, data parts as JSON. A task still `working` (or a stream that ended
//! before its task did) is polled with `GetTask`. A remote that asks for input
//! gives a result saying what it asks, with the task's id: the model answers
//! by calling the tool again with that `task_id`. Every failure (unreachable,
//! bad card, JSON-RPC error, failed task, timeout, a reply or a stream over
//! the size limit, a stream that is not Server-Sent Events of the call's
//! task) is a tool error the model sees, never a run failure.
//!
//! `${env:VAR}` in the auth and option values is read when the run starts;
//! the values are secrets of the run (redacted from events, logs, sessions and
//! recordings). The tool is journaled like every tool: a replay serves its
//! recorded answers and needs neither the remote agent nor its card; the
//! tool's description comes from the program alone for that reason.

mod error;
mod stream;
mod wire;

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use futures::FutureExt;
use futures::future::BoxFuture;
use indexmap::IndexMap;
use serde_json::{Value, json};
use sr_hir::{Name, ToolData};

use crate::tools::{Report, Tool, ToolError, ToolSpec};
use error::CallError;
use wire::{Endpoint, Outcome};

/// Limits of the calls to remote agents.
#[derive(Debug, Clone)]
pub struct A2aOptions {
    /// One call, card fetch, stream and polling included.
    pub timeout: Duration,
    /// The largest card, reply or stream (all its events together) read; a
    /// larger one is a tool error.
    pub max_reply_bytes: usize,
}

impl Default for A2aOptions {
    fn default() -> Self {
        A2aOptions { timeout: Duration::from_secs(300), max_reply_bytes: 4 * 1024 * 1024 }
    }
}

/// How long to wait between two `GetTask`s of a task still working.
const POLL: Duration = Duration::from_millis(500);

/// The process's client for remote agents (no redirects), built by the first
/// program that has one: a run without `a2a` tools never loads TLS roots for
/// it, and every run of a server shares one connection pool.
fn client() -> Option<reqwest::Client> {
    static CLIENT: OnceLock<Option<reqwest::Client>> = OnceLock::new();
    CLIENT.get_or_init(|| reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().ok()).clone()
}

/// The remote agents a program defines, with their secrets resolved; nothing
/// is contacted until a call.
#[derive(Default)]
pub struct Remotes {
    agents: HashMap<String, Arc<Remote>>,
    secrets: Vec<String>,
    notices: Vec<String>,
}

impl Remotes {
    /// The `a2a` tools among `tools`, with `${env:VAR}` read from `env`.
    pub fn new(
        tools: &IndexMap<Name, ToolData>,
        options: &A2aOptions,
        env: &(dyn Fn(&str) -> Option<String> + Sync),
    ) -> Remotes {
        let mut remotes = Remotes::default();
        if !tools.values().any(|data| matches!(data, ToolData::A2a { .. })) {
            return remotes;
        }
        let Some(client) = client() else {
            return remotes;
        };
        for (name, data) in tools {
            let ToolData::A2a { url, auth, options: written, .. } = data else { continue };
            let mut headers = Vec::new();
            let mut missing = None;
            let values = auth.iter().map(|a| {
                let scheme = match a.kind {
                    sr_hir::AuthKind::Bearer => "Bearer",
                    sr_hir::AuthKind::Basic => "Basic",
                };
                ("Authorization".to_string(), format!("{scheme} {}", a.value))
            });
            for (header, value) in values.chain(written.iter().map(|(k, v)| (k.to_string(), v.clone()))) {
                match substitute(&value, env, &mut remotes.secrets) {
                    Ok(resolved) => headers.push((header, resolved)),
                    Err(error) => missing = Some(error),
                }
            }
            let headers = match missing {
                Some(error) => Err(error),
                None => Ok(headers),
            };
            let remote = Remote {
                card_url: url.clone(),
                headers,
                client: client.clone(),
                options: options.clone(),
                endpoint: tokio::sync::Mutex::new(None),
            };
            remotes.agents.insert(name.to_string(), Arc::new(remote));
        }
        let too_short: Vec<String> =
            remotes.secrets.iter().filter(|s| s.len() < sr_llm::Redactor::MIN_LEN).cloned().collect();
        if !too_short.is_empty() {
            remotes.notices.push(format!(
                "a value an a2a tool's definition reads from the environment is shorter than {} characters: \
                 it is not treated as a secret and may appear in events, sessions and recordings",
                sr_llm::Redactor::MIN_LEN
            ));
        }
        remotes.secrets.retain(|s| s.len() >= sr_llm::Redactor::MIN_LEN);
        remotes
    }

    /// Adds the values of the variables the definitions use to `redactor`.
    pub fn add_secrets(&self, redactor: &sr_llm::Redactor) {
        for value in &self.secrets {
            let _ = redactor.add(value);
        }
    }

    /// Warnings for the start of a run: variables too short to be kept secret.
    pub fn notices(&self) -> Vec<String> {
        self.notices.clone()
    }

    /// The tool of the remote agent defined as `name` by `data`. It can be
    /// offered in every run (a replay's included); only a live run can call it.
    pub fn tool(&self, name: &str, data: &ToolData) -> Option<Arc<dyn Tool>> {
        let ToolData::A2a { url, .. } = data else { return None };
        Some(Arc::new(A2aTool {
            name: name.to_string(),
            card_url: url.clone(),
            remote: self.agents.get(name).cloned(),
        }))
    }
}

/// Tool names only: the headers hold secrets.
impl std::fmt::Debug for Remotes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Remotes").field("agents", &self.agents.keys().collect::<Vec<_>>()).finish_non_exhaustive()
    }
}

/// `${env:VAR}` and `${VAR}` replaced as in MCP servers' definitions
/// (`sr_mcp::substitute`), each value used noted in `secrets`.
fn substitute(
    text: &str,
    env: &(dyn Fn(&str) -> Option<String> + Sync),
    secrets: &mut Vec<String>,
) -> Result<String, CallError> {
    let used = std::cell::RefCell::new(Vec::new());
    let resolved = sr_mcp::substitute(text, |name| {
        let value = env(name);
        used.borrow_mut().extend(value.clone());
        value
    })
    .map_err(|sr_mcp::MissingVar(name)| CallError::MissingVar(name))?;
    for value in used.into_inner() {
        if !secrets.contains(&value) {
            secrets.push(value);
        }
    }
    Ok(resolved)
}

/// One remote agent: its card URL, headers and, once read, its endpoint.
struct Remote {
    card_url: String,
    /// `Authorization` and the options, or why they cannot be made.
    headers: Result<Vec<(String, String)>, CallError>,
    client: reqwest::Client,
    options: A2aOptions,
    endpoint: tokio::sync::Mutex<Option<Endpoint>>,
}

impl Remote {
    /// Sends `text` (the answer to `task` when given) and waits for the
    /// answer, reporting a stream's updates to `report`.
    async fn call(&self, text: &str, task: Option<(&str, Option<&str>)>, report: &Report) -> Result<Value, CallError> {
        let endpoint = self.endpoint().await?;
        let message_id = uuid::Uuid::new_v4().to_string();
        let mut outcome = if endpoint.streaming {
            let request = wire::stream_request(endpoint.version, &message_id, text, task);
            self.stream(&endpoint, &request, task.map(|(id, _)| id), report).await?
        } else {
            let request = wire::send_request(endpoint.version, &message_id, text, task);
            wire::outcome(&self.post(&endpoint, &request).await?)?
        };
        while let Outcome::Working { task_id } = &outcome {
            tokio::time::sleep(POLL).await;
            let request = wire::get_task_request(endpoint.version, task_id);
            outcome = wire::outcome(&self.post(&endpoint, &request).await?)?;
        }
        match outcome {
            Outcome::Answer(text) => Ok(Value::String(text)),
            Outcome::InputRequired { question, task_id, context_id } => Ok(json!({
                "input_required": question,
                "task_id": task_id,
                "context_id": context_id,
                "note": "the remote agent waits for an answer: call this tool again with the answer as `request` and this `task_id` (and `context_id`)",
            })),
            Outcome::Failed(why) => Err(CallError::TaskFailed(why)),
            Outcome::Working { .. } => Err(CallError::NeverEnded),
        }
    }

    /// The card's endpoint, fetched at the first call (a failure is not kept:
    /// the next call tries again).
    async fn endpoint(&self) -> Result<Endpoint, CallError> {
        let mut known = self.endpoint.lock().await;
        if let Some(endpoint) = &*known {
            return Ok(endpoint.clone());
        }
        let request = self.with_headers(self.client.get(&self.card_url))?;
        let card = self.read_json(request, "the card").await?;
        let endpoint = wire::endpoint(&card, &self.card_url)
            .map_err(|problem| CallError::Card { problem, card_url: self.card_url.clone() })?;
        *known = Some(endpoint.clone());
        Ok(endpoint)
    }

    async fn post(&self, endpoint: &Endpoint, body: &Value) -> Result<Value, CallError> {
        self.read_json(self.rpc(endpoint, body)?, "the reply").await
    }

    /// A JSON-RPC request of `body` to `endpoint`, with the headers.
    fn rpc(&self, endpoint: &Endpoint, body: &Value) -> Result<reqwest::RequestBuilder, CallError> {
        let version = match endpoint.version {
            wire::Version::V10 => "1.0",
            wire::Version::V03 => "0.3",
        };
        self.with_headers(self.client.post(&endpoint.url).header("A2A-Version", version).json(body))
    }

    /// Sends the streaming `request` (answering `task` when given) and reads
    /// its events until one ends the call, reporting each; a stream that ends
    /// before leaves the task `Working`, to be polled. A server that answers
    /// with plain JSON (an error, say) is read as a reply.
    async fn stream(
        &self,
        endpoint: &Endpoint,
        request: &Value,
        task: Option<&str>,
        report: &Report,
    ) -> Result<Outcome, CallError> {
        let request = self.rpc(endpoint, request)?.header("Accept", "text/event-stream");
        let mut response = request.send().await.map_err(|e| CallError::Unreachable(plain(&e)))?;
        let is_stream = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.trim_start().to_ascii_lowercase().starts_with("text/event-stream"));
        if !is_stream || !response.status().is_success() {
            return wire::outcome(&self.json_body(response, "the reply").await?);
        }
        let limit = self.options.max_reply_bytes;
        let (mut sse, mut follow, mut read) = (stream::Sse::default(), stream::Follow::new(task), 0);
        while let Some(chunk) =
            response.chunk().await.map_err(|e| CallError::CutOff { what: "the stream", cause: plain(&e) })?
        {
            read += chunk.len();
            if read > limit {
                return Err(CallError::TooLarge { what: "the stream", limit });
            }
            for data in sse.feed(&chunk)? {
                let event: Value = serde_json::from_str(&data).map_err(|e| CallError::NotJson {
                    what: "a stream event",
                    cause: format!("{e}: '{}'", wire::short(&data)),
                })?;
                let (update, end) = follow.event(&event)?;
                report(update);
                if let Some(outcome) = end {
                    return Ok(outcome);
                }
            }
        }
        match follow.task_id() {
            Some(task_id) => Ok(Outcome::Working { task_id: task_id.to_string() }),
            None => Err(CallError::StreamEndedEarly),
        }
    }

    fn with_headers(&self, mut request: reqwest::RequestBuilder) -> Result<reqwest::RequestBuilder, CallError> {
        for (name, value) in self.headers.as_ref().map_err(Clone::clone)? {
            request = request.header(name.as_str(), value.as_str());
        }
        Ok(request)
    }

    /// Sends `request` and reads its JSON body, at most `max_reply_bytes`.
    async fn read_json(&self, request: reqwest::RequestBuilder, what: &'static str) -> Result<Value, CallError> {
        let response = request.send().await.map_err(|e| CallError::Unreachable(plain(&e)))?;
        self.json_body(response, what).await
    }

    /// `response`'s JSON body, at most `max_reply_bytes`.
    async fn json_body(&self, mut response: reqwest::Response, what: &'static str) -> Result<Value, CallError> {
        let status = response.status();
        let limit = self.options.max_reply_bytes;
        if response.content_length().is_some_and(|n| n > limit as u64) {
            return Err(CallError::TooLarge { what, limit });
        }
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(|e| CallError::CutOff { what, cause: plain(&e) })? {
            if body.len() + chunk.len() > limit {
                return Err(CallError::TooLarge { what, limit });
            }
            body.extend_from_slice(&chunk);
        }
        if !status.is_success() {
            return Err(CallError::Status { what, status });
        }
        serde_json::from_slice(&body).map_err(|e| CallError::NotJson { what, cause: e.to_string() })
    }
}

/// An HTTP error with its causes (the URL it names is the definition's).
fn plain(error: &reqwest::Error) -> String {
    let mut text = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(inner) = source {
        text.push_str(&format!(": {inner}"));
        source = inner.source();
    }
    text
}

/// A remote agent as the runtime's `Tool`.
struct A2aTool {
    name: String,
    card_url: String,
    /// None in a replay: the journal serves every call.
    remote: Option<Arc<Remote>>,
}

impl Tool for A2aTool {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: self.name.clone(),
            description: format!(
                "The remote agent '{}' (A2A, {}): send it a request; its answer comes back.",
                self.name, self.card_url
            ),
            parameters: json!({
                "type": "object",
                "properties": {
                    "request": {"type": "string", "description": "What to ask the agent (or the answer to its question)."},
                    "task_id": {"type": "string", "description": "Only to answer a question the agent asked: the task_id it gave."},
                    "context_id": {"type": "string", "description": "Only with task_id: the context_id the agent gave."},
                },
                "required": ["request"],
            }),
        }
    }

    fn name(&self) -> String {
        self.name.clone()
    }

    fn call(&self, args: Value) -> BoxFuture<'_, Result<Value, ToolError>> {
        self.call_reporting(args, "", Arc::new(|_| {}))
    }

    fn call_reporting(&self, args: Value, _key: &str, report: Report) -> BoxFuture<'_, Result<Value, ToolError>> {
        async move {
            let Some(remote) = &self.remote else {
                return Err(ToolError(format!("the remote agent '{}' cannot be called in this run", self.name)));
            };
            let request = match args.get("request") {
                Some(Value::String(text)) => text.clone(),
                Some(other) => other.to_string(),
                None => return Err(ToolError("missing argument 'request'".to_string())),
            };
            let task_id = args.get("task_id").and_then(Value::as_str);
            let context_id = args.get("context_id").and_then(Value::as_str);
            let call = remote.call(&request, task_id.map(|t| (t, context_id)), &report);
            let timeout = remote.options.timeout;
            match tokio::time::timeout(timeout, call).await {
                Ok(Ok(value)) => Ok(value),
                Ok(Err(why)) => Err(ToolError(format!("the remote agent '{}': {why}", self.name))),
                Err(_) => Err(ToolError(format!(
                    "the remote agent '{}' did not answer within {}s",
                    self.name,
                    timeout.as_secs_f64()
                ))),
            }
        }
        .boxed()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_substituted_as_for_mcp_and_each_used_value_is_a_secret() {
        let env = |name: &str| (name == "KEY").then(|| "k-0123456789".to_string());
        let mut secrets = Vec::new();
        // An unclosed `${` and a `${…}` that names no variable stay as written.
        let text = substitute("Bearer ${env:KEY} ${KEY} ${1x} ${KEY", &env, &mut secrets).unwrap();
        assert_eq!(text, "Bearer k-0123456789 k-0123456789 ${1x} ${KEY");
        assert_eq!(secrets, ["k-0123456789"]);
        assert_eq!(substitute("${env:NOPE}", &env, &mut secrets), Err(CallError::MissingVar("NOPE".to_string())));
    }
}
