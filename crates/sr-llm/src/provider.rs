//! The seam between the runtime and a model: one method that returns a stream.

use std::sync::Arc;

use futures::stream::{self, BoxStream, StreamExt};

use crate::{ApiKey, ChatEvent, ChatRequest, LlmError};

/// A streamed reply. Dropping it cancels the request.
pub type ChatStream = BoxStream<'static, Result<ChatEvent, LlmError>>;

/// Something that answers chat requests: a real protocol client, or a
/// [`Router`](crate::Router) over several (the runtime's journal records and
/// serves what they answer).
///
/// `chat` returns at once; all I/O happens as the stream is polled, so the caller
/// can show deltas live and cancel by dropping the stream.
pub trait Provider: Send + Sync {
    fn chat(&self, request: ChatRequest) -> ChatStream;
}

impl<P: Provider + ?Sized> Provider for Arc<P> {
    fn chat(&self, request: ChatRequest) -> ChatStream {
        (**self).chat(request)
    }
}

/// A stream that fails at once, for errors found before any I/O.
pub(crate) fn failed(err: LlmError) -> ChatStream {
    stream::once(async move { Err(err) }).boxed()
}

/// Where and how to reach one provider.
#[derive(Debug, Clone)]
pub struct Endpoint {
    /// The name errors mention, e.g. `openai` or `ollama`.
    pub name: String,
    pub base_url: String,
    pub api_key: Option<ApiKey>,
    /// Ask for a streamed (SSE) reply; either kind of reply is understood anyway.
    pub stream: bool,
}

impl Endpoint {
    pub fn new(name: impl Into<String>, base_url: impl Into<String>, api_key: Option<ApiKey>) -> Endpoint {
        Endpoint { name: name.into(), base_url: base_url.into(), api_key, stream: true }
    }
}
