//! `cargo xtask fuzz` (or `cargo fuzz run lsp_gate`): the language server's
//! message loop in front of tower-lsp-server, fed arbitrary bytes both ways.
//!
//! The gate is compiled into this target from its source file, so that the
//! fuzz build does not need the whole language server: it reads the input as
//! the client's stream and must never panic, must answer or forward each
//! frame at most once (and every request that has an id, or is not an object,
//! exactly once), forward only what tower-lsp-server can decode, answer only
//! with the JSON-RPC errors it names, stop after `exit`, and exit with 0 only
//! after `shutdown` and `exit`. The same input read as the server's output is
//! relayed to the client frame by frame, byte for byte.
#![no_main]

#[allow(dead_code)]
#[path = "../../crates/sr-lsp/src/gate.rs"]
mod gate;
#[allow(dead_code)]
#[path = "../../crates/sr-lsp/src/raw.rs"]
mod raw;

/// The gate gives memory back after big answers; that is the allocator's
/// business, not the framing's, so the fuzz target leaves it out.
mod memory {
    pub(crate) const TRIM_AFTER: usize = usize::MAX;
    pub(crate) fn release() {}
}

use std::sync::{Arc, LazyLock};

use serde_json::Value;
use sr_wire::{Frame, Incoming, Reader};

static RUNTIME: LazyLock<tokio::runtime::Runtime> =
    LazyLock::new(|| tokio::runtime::Builder::new_current_thread().build().expect("a runtime"));

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    RUNTIME.block_on(async {
        client_to_server(data).await;
        server_to_client(data).await;
    })
});

/// Every frame of `input` as the reader gives it, up to the end of input, a
/// read error or the `exit` notification (where the gate stops).
async fn incoming(input: &[u8]) -> Vec<Incoming> {
    let mut reader = Reader::new(input);
    let mut out = Vec::new();
    while let Ok(Some(message)) = reader.read().await {
        let exit = matches!(&message, Incoming::Message(m) if m["jsonrpc"] == "2.0" && m["method"] == "exit" && m.get("id").is_none());
        out.push(message);
        if exit {
            break;
        }
    }
    out
}

/// Every message written to `output`, which must be framed without fault.
async fn written(output: &[u8]) -> Vec<Value> {
    let mut reader = Reader::new(output);
    let mut out = Vec::new();
    while let Some(message) = reader.read().await.expect("the output ends inside a message") {
        match message {
            Incoming::Message(message) => out.push(message),
            Incoming::Malformed { reason, .. } => panic!("a broken message in the output: {reason}"),
        }
    }
    out
}

fn usable_id(id: &Value) -> bool {
    id.is_string() || id.as_i64().is_some()
}

async fn client_to_server(input: &[u8]) {
    let (replies_tx, mut replies_rx) = tokio::sync::mpsc::unbounded_channel();
    let lifecycle = Arc::new(gate::Lifecycle::default());
    let mut to_server = Vec::new();
    gate::run(input, &mut to_server, replies_tx, lifecycle.clone()).await;
    let forwarded = written(&to_server).await;
    let mut replies = Vec::new();
    while let Ok(reply) = replies_rx.try_recv() {
        replies.push(reply);
    }

    // What the gate must answer or forward: a body that is not JSON, a message
    // that is not an object, and an object with an id (a request or a
    // response, valid or not); and what it may.
    let seen = incoming(input).await;
    let must = seen
        .iter()
        .filter(|m| match m {
            Incoming::Malformed { parse_error, .. } => *parse_error,
            Incoming::Message(m) => !m.is_object() || m.get("id").is_some(),
        })
        .count();
    let may = seen.iter().filter(|m| !matches!(m, Incoming::Malformed { parse_error: false, .. })).count();
    let out = forwarded.len() + replies.len();
    assert!(must <= out && out <= may, "{out} answers and forwards for {must} to {may} frames");

    for message in &forwarded {
        assert_eq!(message["jsonrpc"], "2.0", "forwarded {message}");
        let request = message["method"].is_string()
            && message.get("id").is_none_or(usable_id)
            && message.get("params").is_none_or(|p| p.is_object() || p.is_array() || p.is_null());
        let response = message.get("method").is_none()
            && message.get("id").is_some_and(usable_id)
            && (message.get("result").is_some() != message.get("error").is_some());
        assert!(request || response, "forwarded what tower-lsp-server cannot decode: {message}");
        let method = message["method"].as_str().unwrap_or("");
        assert!(!(method.starts_with("$/") && message.get("id").is_some()), "forwarded a $/ request: {message}");
    }
    for reply in &replies {
        assert_eq!(reply["jsonrpc"], "2.0");
        assert!(reply["id"].is_null() || usable_id(&reply["id"]), "{reply}");
        let code = reply["error"]["code"].as_i64();
        assert!(matches!(code, Some(-32700 | -32600 | -32601)), "answered {reply}");
    }
    let exited = forwarded.last().is_some_and(|m| m["method"] == "exit");
    assert_eq!(
        forwarded.iter().filter(|m| m["method"] == "exit").count(),
        usize::from(exited),
        "a message was forwarded after exit"
    );
    let shut_down = forwarded.iter().any(|m| m["method"] == "shutdown");
    assert_eq!(lifecycle.exit_code() == 0, shut_down && exited);
}

async fn server_to_client(output: &[u8]) {
    let (replies_tx, replies_rx) = tokio::sync::mpsc::unbounded_channel();
    drop(replies_tx);
    let mut to_client = Vec::new();
    gate::forward(output, &mut to_client, replies_rx, Arc::new(raw::RawAnswers::default())).await;
    let mut sent = Reader::new(output);
    let mut bodies = Vec::new();
    while let Ok(Some(frame)) = sent.read_frame().await {
        if let Frame::Body(body) = frame {
            bodies.push(body);
        }
    }
    let mut relayed = Reader::new(&to_client[..]);
    let mut count = 0;
    while let Some(frame) = relayed.read_frame().await.expect("the relayed output ends inside a message") {
        match frame {
            Frame::Body(body) => assert_eq!(Some(&body), bodies.get(count), "frame {count} was not relayed as sent"),
            Frame::Malformed(reason) => panic!("a broken message in the relayed output: {reason}"),
        }
        count += 1;
    }
    assert_eq!(count, bodies.len(), "frames were lost");
}
