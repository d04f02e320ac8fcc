//! What every protocol client shares: one reqwest client, timeouts, retries,
//! error bodies, and turning a response (SSE or plain JSON) into events.

use std::collections::VecDeque;
use std::fmt;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, SystemTime};

use bytes::Bytes;
use futures::stream::{self, BoxStream, StreamExt};
use reqwest::header::{CONTENT_TYPE, HeaderMap, HeaderValue};
use serde_json::Value;

use crate::limits::{MAX_REPLY_BODY, Out};
use crate::retry::{Sleeper, TokioSleeper, retry_after, with_retries};
use crate::sse::{SseEvent, SseParser};
use crate::{ApiKey, ChatEvent, ChatStream, LlmError, RetryPolicy};

#[derive(Clone)]
pub struct HttpOptions {
    pub retry: RetryPolicy,
    /// Bound on the wait for a response head, and for a whole non-streamed body.
    pub timeout: Duration,
    /// Bound on the silence between two chunks of a streamed body.
    pub idle_timeout: Duration,
    pub connect_timeout: Duration,
    pub sleeper: Arc<dyn Sleeper>,
}

impl Default for HttpOptions {
    fn default() -> HttpOptions {
        HttpOptions {
            retry: RetryPolicy::default(),
            timeout: Duration::from_secs(600),
            idle_timeout: Duration::from_secs(300),
            connect_timeout: Duration::from_secs(10),
            sleeper: Arc::new(TokioSleeper),
        }
    }
}

impl fmt::Debug for HttpOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpOptions")
            .field("retry", &self.retry)
            .field("timeout", &self.timeout)
            .field("idle_timeout", &self.idle_timeout)
            .field("connect_timeout", &self.connect_timeout)
            .finish_non_exhaustive()
    }
}

/// A connection pool plus the options every request is sent with; cheap to clone.
#[derive(Clone, Debug)]
pub struct HttpClient {
    /// Built by the first request (clones share it): building one loads the
    /// system's TLS roots, milliseconds that a run which never reaches the
    /// network (a scripted or replayed model) should not spend.
    client: Arc<OnceLock<Result<reqwest::Client, String>>>,
    options: Arc<HttpOptions>,
}

impl HttpClient {
    pub fn new(options: HttpOptions) -> Result<HttpClient, LlmError> {
        Ok(HttpClient { client: Arc::default(), options: Arc::new(options) })
    }

    /// The process's client with the default options: every run of a process
    /// (a server's, an evaluation's) shares its connection pool and loads the
    /// system's TLS roots once, instead of once per run.
    pub fn shared() -> HttpClient {
        static SHARED: OnceLock<HttpClient> = OnceLock::new();
        SHARED.get_or_init(|| HttpClient { client: Arc::default(), options: Arc::new(HttpOptions::default()) }).clone()
    }

    fn client(&self) -> Result<reqwest::Client, LlmError> {
        let built = self.client.get_or_init(|| {
            reqwest::Client::builder()
                .connect_timeout(self.options.connect_timeout)
                .user_agent(concat!("streetrace-rs/", env!("CARGO_PKG_VERSION")))
                .build()
                .map_err(|err| err.to_string())
        });
        built.clone().map_err(|message| LlmError::Transport { provider: "http".into(), message })
    }

    pub fn options(&self) -> &HttpOptions {
        &self.options
    }

    /// Sends `post` with retries and decodes the reply with a fresh `D` per attempt.
    pub(crate) fn send<D: Decoder + Default>(&self, post: Post) -> ChatStream {
        let client = match self.client() {
            Ok(client) => client,
            Err(err) => return crate::provider::failed(err),
        };
        let options = self.options.clone();
        let post = Arc::new(post);
        with_retries(self.options.retry.clone(), self.options.sleeper.clone(), move || {
            attempt::<D>(client.clone(), options.clone(), post.clone())
        })
    }
}

/// One request, ready to send as often as retries need.
pub(crate) struct Post {
    pub(crate) provider: String,
    pub(crate) url: String,
    pub(crate) headers: HeaderMap,
    pub(crate) body: Bytes,
    /// Redacted from every message quoted back from the server.
    pub(crate) key: Option<ApiKey>,
}

impl Post {
    pub(crate) fn new(provider: &str, url: String, body: &Value) -> Post {
        let mut headers = HeaderMap::new();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        Post { provider: provider.to_owned(), url, headers, body: Bytes::from(body.to_string()), key: None }
    }

    pub(crate) fn header(mut self, name: &'static str, value: &str) -> Result<Post, LlmError> {
        let value = HeaderValue::from_str(value)
            .map_err(|_| self.protocol(format!("the value of header `{name}` is not valid")))?;
        self.headers.insert(name, value);
        Ok(self)
    }

    /// Adds the key as a header reqwest marks sensitive, so it never shows in its `Debug`.
    pub(crate) fn secret_header(mut self, name: &'static str, prefix: &str, key: &ApiKey) -> Result<Post, LlmError> {
        let mut value = HeaderValue::from_str(&format!("{prefix}{}", key.expose()))
            .map_err(|_| self.protocol("the API key contains characters not allowed in a header".into()))?;
        value.set_sensitive(true);
        self.headers.insert(name, value);
        self.key = Some(key.clone());
        Ok(self)
    }

    fn redact(&self, text: &str) -> String {
        match &self.key {
            Some(key) => key.redact(text),
            None => text.to_owned(),
        }
    }

    pub(crate) fn protocol(&self, message: String) -> LlmError {
        LlmError::Protocol { provider: self.provider.clone(), message: self.redact(&message) }
    }

    fn transport(&self, err: reqwest::Error) -> LlmError {
        // `{:#}`-style chains carry the cause (refused, reset, ...), which is what users need.
        let mut message = err.to_string();
        let mut source = std::error::Error::source(&err);
        while let Some(cause) = source {
            message.push_str(": ");
            message.push_str(&cause.to_string());
            source = cause.source();
        }
        LlmError::Transport { provider: self.provider.clone(), message: self.redact(&message) }
    }

    fn timeout(&self, after: Duration) -> LlmError {
        LlmError::Timeout { provider: self.provider.clone(), after_ms: after.as_millis() as u64 }
    }
}

/// Turns one provider's reply into events, through an [`Out`] that fails the
/// reply when it passes a limit.
pub(crate) trait Decoder: Send + 'static {
    /// Handles the JSON data of one SSE event; `Ok(true)` when it marks the end of the reply.
    fn event(&mut self, name: Option<&str>, data: Value, out: &mut Out) -> Result<bool, String>;

    /// Handles a whole non-streamed JSON reply.
    fn body(&mut self, body: Value, out: &mut Out) -> Result<(), String>;

    /// Flushes what the end of the reply completes: pending tool calls, usage, finish.
    fn finish(&mut self, out: &mut Out);

    /// Whether the reply said it was complete (a finish or stop reason), so
    /// that a stream closed without `[DONE]` is still a whole reply.
    fn said_finished(&self) -> bool;
}

/// The message of an error object inside a successful reply: an `error` event, or
/// a data line or body holding one (servers that fail after sending a 200 head).
fn api_error_in(value: &Value) -> Option<String> {
    let error = value.get("error").filter(|error| !error.is_null() && **error != false)?;
    Some(error_message(error).unwrap_or_else(|| error.to_string()))
}

/// The message of a provider's error object, or the error itself when it is a string.
fn error_message(error: &Value) -> Option<String> {
    match error {
        Value::String(message) => Some(message.clone()),
        _ => error.get("message").and_then(Value::as_str).map(str::to_owned),
    }
}

async fn attempt<D: Decoder + Default>(
    client: reqwest::Client,
    options: Arc<HttpOptions>,
    post: Arc<Post>,
) -> Result<ChatStream, LlmError> {
    let request = client.post(&post.url).headers(post.headers.clone()).body(post.body.clone());
    let response = match tokio::time::timeout(options.timeout, request.send()).await {
        Err(_) => return Err(post.timeout(options.timeout)),
        Ok(Err(err)) => return Err(post.transport(err)),
        Ok(Ok(response)) => response,
    };
    let status = response.status();
    if !status.is_success() {
        let wait = retry_after(response.headers(), SystemTime::now());
        let body = match tokio::time::timeout(options.timeout, read_body(response, ERROR_BODY_READ)).await {
            Ok(Ok((body, _))) => body,
            _ => Bytes::new(),
        };
        let (code, message) = error_body(&body);
        return Err(LlmError::Api {
            provider: post.provider.clone(),
            status: Some(status.as_u16()),
            code,
            message: post.redact(message.as_deref().unwrap_or(status.canonical_reason().unwrap_or("error"))),
            retry_after_ms: wait.map(|wait| wait.as_millis() as u64),
        });
    }
    let is_sse = response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.trim_start().starts_with("text/event-stream"));
    if is_sse {
        return Ok(decode_sse(response.bytes_stream().boxed(), D::default(), options.idle_timeout, post));
    }
    let too_long = || {
        post.protocol(format!(
            "the reply is longer than {} MiB, the limit for a model reply that is not streamed; reading stopped there",
            MAX_REPLY_BODY >> 20
        ))
    };
    // A length over the limit is refused before reading any of it.
    if response.content_length().is_some_and(|length| length > MAX_REPLY_BODY as u64) {
        return Err(too_long());
    }
    let body = match tokio::time::timeout(options.timeout, read_body(response, MAX_REPLY_BODY)).await {
        Err(_) => return Err(post.timeout(options.timeout)),
        Ok(Err(err)) => return Err(post.transport(err)),
        Ok(Ok((_, true))) => return Err(too_long()),
        Ok(Ok((body, false))) => body,
    };
    // Some proxies send an event stream under another content type.
    if body.trim_ascii_start().starts_with(b"data:") || body.trim_ascii_start().starts_with(b"event:") {
        return Ok(stream::iter(decode_whole_sse::<D>(&body, &post)).boxed());
    }
    let mut out = Out::default();
    let mut decoder = D::default();
    let value: Value = serde_json::from_slice(&body)
        .map_err(|err| post.protocol(format!("the reply is not JSON ({err}): {}", excerpt(&body))))?;
    drop(body);
    if let Some(message) = api_error_in(&value) {
        return Err(in_band_error(&post, &value, message));
    }
    decoder.body(value, &mut out).map_err(|message| post.protocol(message))?;
    decoder.finish(&mut out);
    let mut events = Vec::new();
    for event in out.events {
        event.append_to(&mut events);
    }
    Ok(stream::iter(events.into_iter().map(Ok)).boxed())
}

/// What is read of an error reply's body: its message is all that is shown.
const ERROR_BODY_READ: usize = 64 << 10;

/// The body, read up to `limit` bytes; `true` when there was more, which is
/// left unread.
async fn read_body(response: reqwest::Response, limit: usize) -> reqwest::Result<(Bytes, bool)> {
    let mut body = response.bytes_stream();
    let mut read = Vec::new();
    while let Some(chunk) = body.next().await {
        let chunk = chunk?;
        if read.len() + chunk.len() > limit {
            read.extend_from_slice(&chunk[..limit - read.len()]);
            return Ok((Bytes::from(read), true));
        }
        read.extend_from_slice(&chunk);
    }
    Ok((Bytes::from(read), false))
}

/// An error object inside a successful reply; Anthropic's `overloaded_error`
/// arrives this way and is retryable by its code.
fn in_band_error(post: &Post, value: &Value, message: String) -> LlmError {
    let code = error_code(&value["error"]);
    LlmError::Api {
        provider: post.provider.clone(),
        status: None,
        code,
        message: post.redact(&message),
        retry_after_ms: None,
    }
}

fn error_code(error: &Value) -> Option<String> {
    ["type", "status", "code"].iter().find_map(|field| match &error[field] {
        Value::String(code) if !code.is_empty() => Some(code.clone()),
        Value::Number(code) => Some(code.to_string()),
        _ => None,
    })
}

/// The code and message of an error body in any of the three providers' shapes,
/// or an excerpt of whatever else the server sent.
fn error_body(body: &[u8]) -> (Option<String>, Option<String>) {
    let Ok(value) = serde_json::from_slice::<Value>(body) else {
        let text = excerpt(body);
        return (None, (!text.is_empty()).then_some(text));
    };
    let error = value.get("error").unwrap_or(&value);
    (error_code(error), Some(error_message(error).unwrap_or_else(|| excerpt(body))))
}

fn excerpt(body: &[u8]) -> String {
    const LIMIT: usize = 500;
    let text = String::from_utf8_lossy(body);
    let text = text.trim();
    match text.char_indices().nth(LIMIT) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_owned(),
    }
}

fn decode_sse<D: Decoder>(
    body: BoxStream<'static, reqwest::Result<Bytes>>,
    decoder: D,
    idle_timeout: Duration,
    post: Arc<Post>,
) -> ChatStream {
    let state = Decoding::new(body, decoder);
    stream::unfold(state, move |mut state| {
        let post = post.clone();
        async move {
            loop {
                if let Some(item) = state.ready.pop_front() {
                    return Some((item, state));
                }
                if state.done {
                    return None;
                }
                match tokio::time::timeout(idle_timeout, state.body.next()).await {
                    Err(_) => state.fail(post.timeout(idle_timeout)),
                    Ok(Some(Err(err))) => state.fail(post.transport(err)),
                    Ok(Some(Ok(chunk))) => state.chunk(&chunk, &post),
                    Ok(None) => state.end(&post),
                }
            }
        }
    })
    .boxed()
}

/// Decodes an event stream already read in full.
pub(crate) fn decode_whole_sse<D: Decoder + Default>(
    body: &[u8],
    post: &Post,
) -> VecDeque<Result<ChatEvent, LlmError>> {
    let mut decoding = Decoding::new(stream::empty().boxed(), D::default());
    decoding.chunk(body, post);
    decoding.end(post);
    decoding.ready
}

struct Decoding<D> {
    body: BoxStream<'static, reqwest::Result<Bytes>>,
    decoder: D,
    parser: SseParser,
    /// What the decoder made and the limits the reply has used.
    out: Out,
    /// Events not yet taken, text deltas that arrived together joined.
    ready: VecDeque<Result<ChatEvent, LlmError>>,
    /// Whether any event arrived: a stream without one is broken, not an empty answer.
    seen: bool,
    done: bool,
}

impl<D: Decoder> Decoding<D> {
    fn new(body: BoxStream<'static, reqwest::Result<Bytes>>, decoder: D) -> Decoding<D> {
        Decoding {
            body,
            decoder,
            parser: SseParser::default(),
            out: Out::default(),
            ready: VecDeque::new(),
            seen: false,
            done: false,
        }
    }

    /// Moves what the decoder made to the events ready to be taken.
    fn take_out(&mut self) {
        for event in self.out.events.drain(..) {
            match (self.ready.back_mut(), event) {
                (Some(Ok(ChatEvent::TextDelta(last))), ChatEvent::TextDelta(text)) => last.push_str(&text),
                (_, event) => self.ready.push_back(Ok(event)),
            }
        }
    }

    fn chunk(&mut self, chunk: &[u8], post: &Post) {
        let mut events = Vec::new();
        let parsed = self.parser.push(chunk, &mut events);
        self.dispatch(events, post);
        if let Err(error) = parsed {
            self.fail(post.protocol(error.to_string()));
        }
    }

    fn end(&mut self, post: &Post) {
        let mut events = Vec::new();
        let parsed = self.parser.finish(&mut events);
        self.dispatch(events, post);
        match parsed {
            Err(error) => self.fail(post.protocol(error.to_string())),
            Ok(()) if !self.seen => self.fail(post.protocol("the event stream ended without any event".into())),
            // Neither `[DONE]` nor a finish reason: the connection was cut
            // mid-reply, which a retry may get whole.
            Ok(()) if !self.done && !self.decoder.said_finished() => self.fail(LlmError::Transport {
                provider: post.provider.clone(),
                message: "the stream ended before the reply was complete (no finish reason, no [DONE])".into(),
            }),
            Ok(()) => self.complete(),
        }
    }

    fn dispatch(&mut self, events: Vec<SseEvent>, post: &Post) {
        for event in events {
            if self.done {
                return;
            }
            self.seen = true;
            if event.data.trim().is_empty() {
                continue;
            }
            if event.data.trim() == "[DONE]" {
                return self.complete();
            }
            let data: Value = match serde_json::from_str(&event.data) {
                Ok(data) => data,
                Err(err) => {
                    return self.fail(
                        post.protocol(format!("malformed event data ({err}): {}", excerpt(event.data.as_bytes()))),
                    );
                }
            };
            if let Some(message) = api_error_in(&data) {
                return self.fail(in_band_error(post, &data, message));
            }
            let result = self.decoder.event(event.event.as_deref(), data, &mut self.out);
            self.take_out();
            match result {
                Ok(true) => self.complete(),
                Ok(false) => {}
                Err(message) => self.fail(post.protocol(message)),
            }
        }
    }

    fn complete(&mut self) {
        if !self.done {
            self.decoder.finish(&mut self.out);
            self.take_out();
            self.done = true;
        }
    }

    fn fail(&mut self, err: LlmError) {
        self.ready.push_back(Err(err));
        self.done = true;
    }
}

/// Checks that every cut and corruption of a valid stream decodes without a
/// panic into events that end with `Finished` or an error.
#[cfg(test)]
pub(crate) fn assert_robust<D: Decoder + Default>(stream: &str) {
    let post = Post::new("test", String::new(), &Value::Null);
    let bytes = stream.as_bytes();
    let complete: Vec<_> = decode_whole_sse::<D>(bytes, &post).into();
    assert!(complete.iter().all(Result::is_ok), "the sample itself decodes: {complete:?}");
    let mut inputs: Vec<Vec<u8>> = (0..bytes.len()).map(|cut| bytes[..cut].to_vec()).collect();
    for at in 0..bytes.len() {
        for garbage in [b'"', b'}', b'\n', 0xff] {
            let mut corrupt = bytes.to_vec();
            corrupt[at] = garbage;
            inputs.push(corrupt);
        }
    }
    for input in inputs {
        let events = decode_whole_sse::<D>(&input, &post);
        let last = events.back().unwrap_or_else(|| panic!("no events for {:?}", String::from_utf8_lossy(&input)));
        assert!(
            matches!(last, Err(_) | Ok(ChatEvent::Finished { .. })),
            "{last:?} ends {:?}",
            String::from_utf8_lossy(&input)
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shared_client_sends_through_one_pool() {
        let (a, b) = (HttpClient::shared(), HttpClient::shared());
        assert!(Arc::ptr_eq(&a.client, &b.client), "the process's clients share one pool");
        let own = HttpClient::new(HttpOptions::default()).unwrap();
        assert!(!Arc::ptr_eq(&a.client, &own.client), "a client with options of its own has its own pool");
    }

    #[test]
    fn error_bodies_of_every_provider_are_understood() {
        let openai = br#"{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}"#;
        assert_eq!(error_body(openai), (Some("requests".into()), Some("Rate limit reached".into())));
        let anthropic = br#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#;
        assert_eq!(error_body(anthropic), (Some("overloaded_error".into()), Some("Overloaded".into())));
        let gemini = br#"{"error":{"code":429,"message":"Quota exceeded","status":"RESOURCE_EXHAUSTED"}}"#;
        assert_eq!(error_body(gemini), (Some("RESOURCE_EXHAUSTED".into()), Some("Quota exceeded".into())));
        assert_eq!(error_body(br#"{"error":"model 'x' not found"}"#), (None, Some("model 'x' not found".into())));
        assert_eq!(error_body(b"<html>Bad Gateway</html>"), (None, Some("<html>Bad Gateway</html>".into())));
        assert_eq!(error_body(b""), (None, None));
    }

    #[test]
    fn long_bodies_are_cut() {
        let body = "é".repeat(2000);
        let text = excerpt(body.as_bytes());
        assert_eq!(text.chars().count(), 501);
        assert!(text.ends_with('…'));
    }
}
