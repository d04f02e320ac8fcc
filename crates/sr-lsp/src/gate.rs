//! The gate in front of tower-lsp-server: every message from the client passes
//! through [`sr_wire`]'s reader and a JSON-RPC shape check before the server
//! sees it, because tower-lsp-server's own reader ends the session at the
//! first message it cannot decode.
//!
//! What the gate answers itself (and does not forward):
//! - a body that is not JSON: `-32700` (parse error, id `null`);
//! - JSON that is not a JSON-RPC 2.0 request, notification or response:
//!   `-32600` (invalid request, with the message's id when it has a usable one);
//! - a `$/…` request with an id: `-32601` (method not found); `$/` names are
//!   meant for notifications, and tower-lsp-server never answers such requests.
//!
//! It also records whether `shutdown` came before `exit`, which decides the
//! exit code (the specification's 0 or 1).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use futures::StreamExt;
use serde_json::{Value, json};
use sr_wire::{Frame, Incoming, Reader};
use tokio::io::{AsyncBufRead, AsyncWrite};
use tokio::sync::mpsc::UnboundedSender;

use crate::memory;
use crate::raw::RawAnswers;

/// JSON-RPC error codes the gate answers with.
const PARSE_ERROR: i64 = -32700;
const INVALID_REQUEST: i64 = -32600;
const METHOD_NOT_FOUND: i64 = -32601;

/// What the gate saw of the session's lifecycle.
#[derive(Default)]
pub(crate) struct Lifecycle {
    shutdown: AtomicBool,
    exit: AtomicBool,
}

impl Lifecycle {
    /// The process exit code: 0 only after `shutdown` then `exit`.
    pub(crate) fn exit_code(&self) -> i32 {
        if self.shutdown.load(Ordering::SeqCst) && self.exit.load(Ordering::SeqCst) { 0 } else { 1 }
    }
}

/// Reads the client until the end of input or `exit`, forwarding valid
/// messages to `server` and sending the gate's own answers to `replies`.
/// Returning drops `server`, which ends tower-lsp-server's loop.
pub(crate) async fn run<R, W>(client: R, mut server: W, replies: UnboundedSender<Value>, lifecycle: Arc<Lifecycle>)
where
    R: AsyncBufRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut reader = Reader::new(client);
    loop {
        let message = match reader.read().await {
            Ok(Some(Incoming::Message(message))) => message,
            Ok(Some(Incoming::Malformed { reason, parse_error })) => {
                eprintln!("sr-lsp: skipped a message: {reason}");
                if parse_error {
                    let _ = replies.send(error(Value::Null, PARSE_ERROR, "Parse error"));
                }
                continue;
            }
            Ok(None) => return,
            Err(e) => {
                eprintln!("sr-lsp: cannot read the client: {e}");
                return;
            }
        };
        match check(&message) {
            Verdict::Forward => {}
            Verdict::Drop => continue,
            Verdict::Answer(reply) => {
                let _ = replies.send(reply);
                continue;
            }
        }
        let method = message.get("method").and_then(Value::as_str);
        if method == Some("shutdown") {
            lifecycle.shutdown.store(true, Ordering::SeqCst);
        }
        let exit = method == Some("exit");
        if exit {
            lifecycle.exit.store(true, Ordering::SeqCst);
        }
        if sr_wire::write(&mut server, &message).await.is_err() || exit {
            return;
        }
    }
}

enum Verdict {
    Forward,
    /// An invalid notification: nothing may answer it.
    Drop,
    Answer(Value),
}

/// Whether tower-lsp-server can decode `message`, or what to answer instead.
fn check(message: &Value) -> Verdict {
    let Some(object) = message.as_object() else {
        let what = if message.is_array() { "batches are not supported" } else { "a message must be an object" };
        return Verdict::Answer(error(Value::Null, INVALID_REQUEST, what));
    };
    // tower-lsp-server's ids are 64-bit integers, strings or null.
    let id = object.get("id");
    let usable_id = match id {
        None => None,
        Some(id @ Value::String(_)) => Some(id.clone()),
        Some(id @ Value::Number(n)) if n.is_i64() => Some(id.clone()),
        Some(_) => return Verdict::Answer(error(Value::Null, INVALID_REQUEST, "an id must be an integer or a string")),
    };
    let reply_to = usable_id.clone().unwrap_or(Value::Null);
    if object.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Verdict::Answer(error(reply_to, INVALID_REQUEST, "\"jsonrpc\" must be \"2.0\""));
    }
    match object.get("method") {
        Some(Value::String(method)) => {
            if let Some(params) = object.get("params")
                && !(params.is_object() || params.is_array() || params.is_null())
            {
                return answer_request(usable_id, INVALID_REQUEST, "params must be an object or an array");
            }
            if method.starts_with("$/") && usable_id.is_some() {
                return Verdict::Answer(error(reply_to, METHOD_NOT_FOUND, &format!("unknown request {method}")));
            }
            Verdict::Forward
        }
        Some(_) => answer_request(usable_id, INVALID_REQUEST, "\"method\" must be a string"),
        // A response to one of the server's requests.
        None if usable_id.is_some() && (object.contains_key("result") ^ object.contains_key("error")) => {
            Verdict::Forward
        }
        None => Verdict::Answer(error(reply_to, INVALID_REQUEST, "neither a request nor a response")),
    }
}

/// An invalid notification is dropped (nothing may answer it); an invalid
/// request gets `code`.
fn answer_request(id: Option<Value>, code: i64, message: &str) -> Verdict {
    match id {
        Some(id) => Verdict::Answer(error(id, code, message)),
        None => {
            eprintln!("sr-lsp: dropped a notification: {message}");
            Verdict::Drop
        }
    }
}

fn error(id: Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

/// Copies the server's messages (relayed as written, without parsing them)
/// and the gate's answers to the client, one whole message at a time, until
/// the server's output ends. A response standing for a [`RawAnswers`] entry
/// goes out as the answer it stands for; after a big one, freed memory goes
/// back to the system.
pub(crate) async fn forward<R, W>(
    server: R,
    mut client: W,
    mut replies: tokio::sync::mpsc::UnboundedReceiver<Value>,
    raw: Arc<RawAnswers>,
) where
    R: AsyncBufRead + Unpin,
    W: AsyncWrite + Unpin,
{
    // Reading a frame is not cancel-safe: the read in progress lives inside
    // the stream, so a reply that wins the race never drops half a frame.
    let frames = futures::stream::unfold(Reader::new(server), |mut server| async move {
        let frame = server.read_frame().await;
        Some((frame, server))
    });
    let mut frames = std::pin::pin!(frames);
    loop {
        let written = tokio::select! {
            biased;
            read = frames.next() => match read {
                Some(Ok(Some(Frame::Body(body)))) => {
                    let body = match raw.expand(&body) {
                        Some(answer) => answer,
                        None => body,
                    };
                    let written = sr_wire::write_body(&mut client, &body).await;
                    if body.len() >= memory::TRIM_AFTER {
                        drop(body);
                        tokio::task::spawn_blocking(memory::release);
                    }
                    written
                }
                Some(Ok(Some(Frame::Malformed(reason)))) => {
                    eprintln!("sr-lsp: the server wrote a broken message: {reason}");
                    continue;
                }
                Some(Ok(None) | Err(_)) | None => break,
            },
            Some(reply) = replies.recv() => sr_wire::write(&mut client, &reply).await,
        };
        if written.is_err() {
            return;
        }
    }
    // Answers decided before the server's output ended still go out.
    while let Ok(reply) = replies.try_recv() {
        if sr_wire::write(&mut client, &reply).await.is_err() {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(message: Value) -> Option<Value> {
        match check(&message) {
            Verdict::Forward => None,
            Verdict::Drop => Some(Value::Null),
            Verdict::Answer(reply) => Some(reply),
        }
    }

    fn code(message: Value) -> Option<(Value, i64)> {
        answer(message).and_then(|r| Some((r["id"].clone(), r["error"]["code"].as_i64()?)))
    }

    #[test]
    fn valid_messages_pass() {
        assert_eq!(answer(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}})), None);
        assert_eq!(answer(json!({"jsonrpc": "2.0", "method": "initialized"})), None);
        assert_eq!(answer(json!({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": 1}})), None);
        assert_eq!(answer(json!({"jsonrpc": "2.0", "id": "a", "result": null})), None);
        assert_eq!(answer(json!({"jsonrpc": "2.0", "id": 3, "error": {"code": 1, "message": "x"}})), None);
    }

    #[test]
    fn invalid_messages_are_answered_with_the_code_the_spec_names() {
        assert_eq!(code(json!([1, 2])), Some((Value::Null, INVALID_REQUEST)));
        assert_eq!(code(json!("x")), Some((Value::Null, INVALID_REQUEST)));
        assert_eq!(code(json!({"id": 4, "method": "x"})), Some((json!(4), INVALID_REQUEST)));
        assert_eq!(code(json!({"jsonrpc": "1.0", "id": 4, "method": "x"})), Some((json!(4), INVALID_REQUEST)));
        assert_eq!(code(json!({"jsonrpc": "2.0", "id": 1.5, "method": "x"})), Some((Value::Null, INVALID_REQUEST)));
        assert_eq!(code(json!({"jsonrpc": "2.0", "id": 5, "method": 7})), Some((json!(5), INVALID_REQUEST)));
        assert_eq!(
            code(json!({"jsonrpc": "2.0", "id": 6, "method": "x", "params": 3})),
            Some((json!(6), INVALID_REQUEST))
        );
        assert_eq!(code(json!({"jsonrpc": "2.0", "id": 7})), Some((json!(7), INVALID_REQUEST)));
        assert_eq!(code(json!({"jsonrpc": "2.0", "id": 8, "method": "$/x"})), Some((json!(8), METHOD_NOT_FOUND)));
        // An invalid notification is dropped.
        assert_eq!(answer(json!({"jsonrpc": "2.0", "method": "x", "params": "p"})), Some(Value::Null));
    }

    /// A reply that wins the race against a half-read server message must not
    /// drop the bytes read so far: both reach the client whole.
    #[tokio::test]
    async fn a_reply_during_a_slow_server_message_loses_nothing() {
        let (mut server_out, gate_in) = tokio::io::duplex(64);
        let (replies_tx, replies_rx) = tokio::sync::mpsc::unbounded_channel();
        let (client, mut client_rx) = tokio::io::duplex(1 << 20);
        let gate = tokio::spawn(forward(tokio::io::BufReader::new(gate_in), client, replies_rx, Arc::default()));
        let big = json!({"jsonrpc": "2.0", "id": 1, "result": "x".repeat(4096)});
        let body = serde_json::to_vec(&big).unwrap();
        let frame = [format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes(), body].concat();
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let (first, rest) = frame.split_at(frame.len() / 2);
        server_out.write_all(first).await.unwrap();
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        replies_tx.send(json!({"jsonrpc": "2.0", "id": 2, "error": {"code": -32601, "message": "m"}})).unwrap();
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        server_out.write_all(rest).await.unwrap();
        drop(server_out);
        gate.await.unwrap();
        let mut out = Vec::new();
        client_rx.read_to_end(&mut out).await.unwrap();
        let mut reader = Reader::new(out.as_slice());
        let mut ids = Vec::new();
        while let Some(Frame::Body(body)) = reader.read_frame().await.unwrap() {
            let message: Value = serde_json::from_slice(&body).unwrap();
            if message["id"] == 1 {
                assert_eq!(message, big);
            }
            ids.push(message["id"].clone());
        }
        assert_eq!(ids, [json!(2), json!(1)]);
    }
}
