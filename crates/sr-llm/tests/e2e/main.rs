//! End-to-end tests of the real HTTP clients against the mock server.
#![allow(clippy::unwrap_used)]

mod anthropic;
mod gemini;
mod limits;
mod model_ids;
mod openai;
mod retry;
mod router;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt;
use futures::future::BoxFuture;
use sr_llm::mock::{MOCK_KEY, MockServer};
use sr_llm::{
    ApiKey, ChatEvent, ChatRequest, ChatResponse, ChatStream, Endpoint, HttpClient, HttpOptions, LlmError, Message,
    RetryPolicy, Router, Sleeper,
};

/// Records the waits asked for instead of waiting.
#[derive(Default)]
pub struct Waits(Mutex<Vec<Duration>>);

impl Waits {
    pub fn taken(&self) -> Vec<Duration> {
        self.0.lock().unwrap().clone()
    }
}

impl Sleeper for Waits {
    fn sleep(&self, duration: Duration) -> BoxFuture<'static, ()> {
        self.0.lock().unwrap().push(duration);
        Box::pin(async {})
    }
}

pub fn options(waits: &Arc<Waits>) -> HttpOptions {
    HttpOptions {
        retry: RetryPolicy { max_attempts: 4, ..RetryPolicy::default() },
        timeout: Duration::from_secs(10),
        idle_timeout: Duration::from_secs(10),
        connect_timeout: Duration::from_secs(2),
        sleeper: waits.clone(),
    }
}

pub fn http(waits: &Arc<Waits>) -> HttpClient {
    HttpClient::new(options(waits)).unwrap()
}

pub fn router(server: &MockServer, waits: &Arc<Waits>) -> Router {
    Router::from_vars(http(waits), server.vars())
}

pub fn endpoint(name: &str, base_url: String, stream: bool) -> Endpoint {
    Endpoint { stream, ..Endpoint::new(name, base_url, Some(ApiKey::new(MOCK_KEY))) }
}

pub fn ask(model: &str, text: &str) -> ChatRequest {
    ChatRequest::new(model, vec![Message::user(text)])
}

/// Every item of a stream, errors included.
pub async fn drain(stream: ChatStream) -> Vec<Result<ChatEvent, LlmError>> {
    stream.collect().await
}

pub async fn reply(stream: ChatStream) -> ChatResponse {
    ChatResponse::collect(stream).await.unwrap()
}

pub async fn failure(stream: ChatStream) -> LlmError {
    ChatResponse::collect(stream).await.unwrap_err()
}
