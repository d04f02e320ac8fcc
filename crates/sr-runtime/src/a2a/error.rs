//! Why a call to a remote agent failed. Each is a tool error the model sees
//! (its text is the message), never a run failure: the kinds are the ones the
//! module's doc lists, so a new way to fail is a new variant, not a new string.
//! What a remote wrote is kept cut to 200 characters ([`super::wire::short`]).

/// A failed call to a remote agent, before the timeout.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CallError {
    /// A header's `${env:VAR}` names a variable the run's environment lacks.
    #[error("environment variable '{0}' is not set")]
    MissingVar(String),
    /// The HTTP request failed (its causes, the definition's URL only).
    #[error("cannot reach the remote agent: {0}")]
    Unreachable(String),
    #[error("{what} was cut off: {cause}")]
    CutOff { what: &'static str, cause: String },
    #[error("{what} is larger than {limit} bytes")]
    TooLarge { what: &'static str, limit: usize },
    #[error("{what}: HTTP {status}")]
    Status { what: &'static str, status: reqwest::StatusCode },
    #[error("{what} is not JSON: {cause}")]
    NotJson { what: &'static str, cause: String },
    #[error("{problem} ({card_url})")]
    Card { problem: CardProblem, card_url: String },
    /// The remote answered with a JSON-RPC error.
    #[error("JSON-RPC error {code}: {message}")]
    Rpc { code: String, message: String },
    #[error("{what} is not a JSON-RPC response (no result and no error)")]
    NotRpcResponse { what: &'static str },
    #[error("the reply's result is neither a task nor a message")]
    NeitherTaskNorMessage,
    #[error("the remote task is in an unknown state '{0}'")]
    UnknownState(String),
    #[error("a stream event is neither a task, a message, a status update nor an artifact update")]
    UnknownStreamEvent,
    #[error("the stream has a line that is not UTF-8")]
    NotUtf8Line,
    #[error("the stream has a line that is not Server-Sent Events: '{0}'")]
    NotSse(String),
    #[error("the stream sent an event of task '{0}', not of the call's task")]
    OtherTask(String),
    #[error("a stream's {0} names no task")]
    NoTask(&'static str),
    #[error("the stream ended before it named a task")]
    StreamEndedEarly,
    /// The remote task ended failed, rejected, cancelled or wanting
    /// authentication; the text says which, with what the remote said.
    #[error("{0}")]
    TaskFailed(String),
    #[error("the remote task never ended")]
    NeverEnded,
}

/// Why a card gives no endpoint the tool may call.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CardProblem {
    #[error("the card is not a JSON object")]
    NotAnObject,
    #[error("the card names no JSON-RPC interface of A2A 1.0 or 0.3")]
    NoJsonRpcInterface,
    #[error("the card URL '{0}' is not an http(s) URL")]
    NotHttp(String),
    /// A card cannot send the tool, and its key, to another host.
    #[error("the card's interface '{url}' is not on the card's host {origin}")]
    OffOrigin { url: String, origin: String },
}
