//! What can go wrong opening a server's session or reading a recorded listing.

/// Why a server could not be connected. Its text may quote what the server
/// or an HTTP library said, so the hub redacts secrets from it before it
/// becomes a warning.
#[cfg(feature = "client")]
#[derive(Debug, thiserror::Error)]
pub(crate) enum ConnectError {
    #[error("cannot start '{program}': {source}")]
    Start { program: String, source: std::io::Error },
    #[error("bad URL: {0}")]
    Url(#[from] url::ParseError),
    #[error("cannot open the event stream: {0}")]
    Stream(#[source] reqwest::Error),
    #[error("the event stream was refused: HTTP {0}")]
    Refused(reqwest::StatusCode),
    #[error("bad event stream: {0}")]
    BadStream(String),
    #[error("the event stream ended before naming its endpoint")]
    NoEndpoint,
    #[error("bad endpoint '{data}': {source}")]
    Endpoint { data: String, source: url::ParseError },
    #[error("the endpoint {endpoint} is not on the origin of {stream}")]
    OtherOrigin { endpoint: String, stream: String },
    #[error("the MCP handshake failed: {0}")]
    Handshake(#[source] Box<rmcp::service::ClientInitializeError>),
    #[error("cannot list its tools: {0}")]
    ListTools(#[source] rmcp::ServiceError),
    #[error("no answer within {seconds}s")]
    Timeout { seconds: f64 },
    /// A stdio server's failure, with the last lines it wrote to stderr.
    #[error("{error}; the server said: {said}")]
    ServerSaid { error: Box<ConnectError>, said: String },
}

/// Why a recording's MCP lines cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum RecordingError {
    #[error(transparent)]
    Cassette(#[from] sr_llm::LlmError),
    #[error("line {line}: the MCP listing has {what}")]
    Listing { line: usize, what: &'static str },
}
