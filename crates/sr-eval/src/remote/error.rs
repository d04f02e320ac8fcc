//! Why an evaluation could not use its servers, and why a case run on one
//! gave no outcome. The texts name the server (its URL as given) and never
//! the API key.

use std::path::PathBuf;

use super::RECONNECTS;

/// `--server` and `--api-key-file` as given cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    #[error("the API key holds characters an HTTP header cannot carry")]
    KeyNotHeader,
    #[error("cannot make an HTTP client: {0}")]
    Client(reqwest::Error),
    #[error("--server {url}: {cause}")]
    BadUrl { url: String, cause: String },
    #[error("--server {0}: not an http:// or https:// URL")]
    NotHttp(String),
    #[error("--server {0}: give the key with --api-key-file, not in the URL")]
    KeyInUrl(String),
    #[error("--server {0}: a server's URL has no query or fragment")]
    QueryOrFragment(String),
    #[error("no --server given")]
    NoServer,
    #[error("--api-key-file {}: {source}", path.display())]
    KeyFile { path: PathBuf, source: std::io::Error },
    #[error("--api-key-file {}: the file holds no key", path.display())]
    NoKey { path: PathBuf },
}

/// Why a case run on a server has no outcome (a run that ended failed has
/// one: its error is the run's).
#[derive(Debug, thiserror::Error)]
pub enum RemoteError {
    /// A request failed: what the server answered (cut to 500 characters),
    /// or why it did not, as `Server::explain` tells it.
    #[error("{0}")]
    Request(String),
    #[error("cannot write {}: {source}", path.display())]
    Write { path: PathBuf, source: std::io::Error },
    #[error("cannot write the events: {0}")]
    Events(std::io::Error),
    #[error("the run asked a human ({0}); sr eval answers no question, so the run was cancelled")]
    AskedHuman(String),
    /// The stream broke more than [`RECONNECTS`] times; `why` is the last
    /// break, `None` when the stream ended cleanly before the run did.
    #[error("{base}: the run's event stream broke {} times: {}", RECONNECTS, broke_why(why.as_deref()))]
    Broke { base: String, why: Option<Box<RemoteError>> },
    /// The event stream is not Server-Sent Events.
    #[error(transparent)]
    NotSse(#[from] sr_llm::sse::SseError),
    #[error("{base}: an event is not JSON: {source}")]
    EventNotJson { base: String, source: serde_json::Error },
    #[error("{0}: an event has no `seq`")]
    NoSeq(String),
}

fn broke_why(why: Option<&RemoteError>) -> String {
    why.map_or_else(|| "it kept ending before the run did".to_string(), ToString::to_string)
}
