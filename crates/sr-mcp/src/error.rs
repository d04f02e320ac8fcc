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
    BadStream(sr_llm::sse::SseError),
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

/// Why a server's definition cannot be used; nothing was contacted.
#[cfg(feature = "client")]
#[derive(Debug, thiserror::Error)]
pub(crate) enum DefinitionError {
    #[error("environment variable '{var}' (needed by {what}) is not set")]
    MissingVar { var: String, what: String },
    #[error(
        "`with auth` needs an HTTP server; pass a stdio server its secrets as options, \
         which become its environment variables"
    )]
    AuthOnStdio,
    #[error("the stdio command line has an unclosed quote")]
    UnclosedQuote,
    #[error("the stdio command line is empty: write `mcp \"stdio:COMMAND ARGS\"`")]
    EmptyCommand,
    /// An option's key.
    #[error("option '{0}' is not a valid HTTP header name")]
    HeaderName(String),
    /// What the value is (the auth value, an option).
    #[error("{0} is not a valid HTTP header value")]
    HeaderValue(String),
    #[error("the URL must start with http://, https:// or stdio:")]
    Scheme,
}

/// Why a call to a server's tool gave no result. Its text is what the model
/// is told, free of the run's secrets.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ToolCallError {
    #[error("the arguments must be a JSON object, got {0}")]
    NotAnObject(serde_json::Value),
    #[error("MCP tool '{tool}' of server '{server}' did not answer within {seconds}s")]
    Timeout { tool: String, server: String, seconds: f64 },
    /// The request failed: `MCP server 'NAME': why`, secrets redacted.
    #[error("{0}")]
    Server(String),
    /// The result was flagged an error: what the tool said.
    #[error("{0}")]
    Failed(String),
    /// The model's name of the tool.
    #[error("MCP tool '{0}' is only listed in the recording; its server is not contacted")]
    OnlyListed(String),
}
