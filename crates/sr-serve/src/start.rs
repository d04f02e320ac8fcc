//! Why `sr serve` cannot start, or stopped failing: each one line for the
//! operator (a workload's problems, one a line).

use std::net::SocketAddr;
use std::path::PathBuf;

use crate::auth::KeysError;
use crate::store::StoreError;

#[derive(Debug, thiserror::Error)]
pub enum BindError {
    #[error(transparent)]
    Keys(#[from] KeysError),
    #[error("refusing to listen on {0} without API keys: pass --api-key-file FILE, or bind a loopback address")]
    NoKeys(SocketAddr),
    #[error("no workload to serve: name one or more .sr files")]
    NoWorkload,
    #[error("--trace-url {0:?} does not say where the trace id goes: put {trace_id} in it", trace_id = crate::TRACE_ID)]
    TraceUrl(String),
    /// `--cors-origin` or `--public-url` refused (`gate`'s flag checks say why).
    #[error("{0}")]
    Flag(String),
    /// A `--cors-origin` that cannot be a header's value.
    #[error("--cors-origin {0:?} is not a header value")]
    CorsHeader(String),
    /// The workloads' problems, one a line.
    #[error("{}", .0.join("\n"))]
    Workloads(Vec<String>),
    #[error("cannot create {}: {source}", path.display())]
    CreateStateDir { path: PathBuf, source: std::io::Error },
    #[error("cannot resolve {}: {source}", path.display())]
    ResolveStateDir { path: PathBuf, source: std::io::Error },
    #[error("cannot use the database of --database-url: {0}")]
    Database(#[source] StoreError),
    #[error("another `sr serve` is using {}: give each server its own --state-dir", .0.display())]
    StateDirBusy(PathBuf),
    #[error("cannot open {}: {source}", path.display())]
    Store { path: PathBuf, source: StoreError },
    #[error("cannot open {}: {source}", path.display())]
    Sessions { path: PathBuf, source: rusqlite::Error },
    #[error("cannot read the queue: {0}")]
    Queue(#[source] StoreError),
    #[error("cannot listen on {addr}: {source}")]
    Listen { addr: SocketAddr, source: std::io::Error },
    #[error("cannot read the bound address: {0}")]
    Address(#[source] std::io::Error),
}

/// The HTTP server's task ended in a panic.
#[derive(Debug, thiserror::Error)]
#[error("the HTTP server failed: {0}")]
pub struct HttpFailed(#[source] pub tokio::task::JoinError);
