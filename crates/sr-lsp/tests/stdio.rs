//! The real `sr-lsp` binary over stdio, as an editor drives it: initialize,
//! open a broken file, versioned diagnostics, fix, empty diagnostics,
//! formatting, shutdown, exit. The order of what comes back is asserted, and
//! no error is logged to the client.

#[allow(dead_code)] // `common` also serves the torture tests.
mod common;

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::Duration;

use common::{frame, read_messages, wait_child};
use serde_json::{Value, json};

#[test]
fn transcript_of_an_editing_session() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_sr-lsp"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("cannot start sr-lsp");
    let mut stdin = child.stdin.take().unwrap();
    let messages = read_messages(child.stdout.take().unwrap());
    let mut send = |message: Value| {
        stdin.write_all(&frame(&message)).unwrap();
        stdin.flush().unwrap();
    };
    let mut received = Vec::new();
    let wait_for = |what: &dyn Fn(&Value) -> bool, received: &mut Vec<Value>| -> Value {
        loop {
            let message = messages.recv_timeout(Duration::from_secs(20)).expect("the server went quiet");
            received.push(message.clone());
            if what(&message) {
                return message;
            }
        }
    };
    let uri = "file:///transcript/main.sr";

    send(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}, "processId": null}}));
    let init = wait_for(&|m| m["id"] == 1, &mut received);
    assert_eq!(init["result"]["serverInfo"]["name"], "sr-lsp");
    send(json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}));

    send(json!({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
        "uri": uri, "languageId": "streetrace", "version": 1, "text": "prompt p \"\"\"x\"\"\"\nagent:\n  instruction p\n"}}}));
    let broken = wait_for(&|m| m["method"] == "textDocument/publishDiagnostics", &mut received);
    assert_eq!(broken["params"]["version"], 1);
    let syntax = broken["params"]["diagnostics"].as_array().unwrap().iter().find(|d| d["code"] == "E0007").cloned();
    assert_eq!(syntax.expect("a syntax error")["range"]["start"], json!({"line": 0, "character": 9}));

    send(json!({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
        "textDocument": {"uri": uri, "version": 2},
        "contentChanges": [{"range": {"start": {"line": 0, "character": 8}, "end": {"line": 0, "character": 8}}, "text": ":"}]}}));
    let fixed = wait_for(&|m| m["method"] == "textDocument/publishDiagnostics", &mut received);
    assert_eq!(fixed["params"]["version"], 2);
    assert_eq!(fixed["params"]["diagnostics"], json!([]));

    send(json!({"jsonrpc": "2.0", "id": 2, "method": "textDocument/formatting", "params": {
        "textDocument": {"uri": uri}, "options": {"tabSize": 4, "insertSpaces": true}}}));
    let formatting = wait_for(&|m| m["id"] == 2, &mut received);
    assert_eq!(
        formatting["result"],
        json!([{"range": {"start": {"line": 2, "character": 2}, "end": {"line": 2, "character": 2}}, "newText": "  "}])
    );

    send(json!({"jsonrpc": "2.0", "id": 3, "method": "shutdown"}));
    let shutdown = wait_for(&|m| m["id"] == 3, &mut received);
    assert_eq!(shutdown["result"], Value::Null);
    send(json!({"jsonrpc": "2.0", "method": "exit"}));

    let status = wait_child(&mut child);
    assert!(status.success(), "{status:?}");

    // Responses in request order, each diagnostics push before what followed its change.
    let order: Vec<String> = received
        .iter()
        .map(|m| match (&m["id"], m["method"].as_str()) {
            (Value::Number(id), None) => format!("response {id}"),
            (_, Some(method)) => format!("{method} {}", m["params"]["version"]),
            _ => "other".to_string(),
        })
        .filter(|m| !m.starts_with("window/logMessage"))
        .collect();
    assert_eq!(
        order,
        [
            "response 1",
            "textDocument/publishDiagnostics 1",
            "textDocument/publishDiagnostics 2",
            "response 2",
            "response 3"
        ]
    );
    let errors: Vec<&Value> =
        received.iter().filter(|m| m["method"] == "window/logMessage" && m["params"]["type"] == 1).collect();
    assert!(errors.is_empty(), "errors logged: {errors:?}");
}
