//! Protocol torture: every kind of malformed input an editor, a proxy or an
//! attacker can send, each followed by a valid request that must still be
//! answered; the lifecycle's exit codes; stdin EOF.
#![allow(clippy::unwrap_used)]

mod common;

use common::{Server, wait_child};
use serde_json::{Value, json};

fn capabilities() -> Value {
    json!({"capabilities": {}, "processId": null})
}

/// A request the server answers quickly, sent after each attack.
fn still_serving(server: &mut Server, id: i64) {
    server.send(&json!({"jsonrpc": "2.0", "id": id, "method": "workspace/symbol", "params": {"query": ""}}));
    let reply = server.response(id);
    assert!(reply.get("result").is_some(), "request {id} after an attack: {reply}");
}

fn error_code(reply: &Value) -> i64 {
    reply["error"]["code"].as_i64().unwrap_or_else(|| panic!("not an error: {reply}"))
}

#[test]
fn malformed_messages_are_answered_or_skipped_and_serving_goes_on() {
    let mut server = Server::start(capabilities());
    let mut next = 1000;
    // Sends `bytes`, then a request that must be answered.
    let mut attack = |server: &mut Server, bytes: Vec<u8>| {
        server.send_raw(&bytes);
        next += 1;
        still_serving(server, next);
    };
    let raw = |body: &str| format!("Content-Length: {}\r\n\r\n{body}", body.len()).into_bytes();

    // Not JSON: -32700 with a null id, answered before the next request.
    server.send_raw(&raw("{not json"));
    let reply = server.wait_for(|m| m.get("error").is_some() && m["id"].is_null());
    assert_eq!(error_code(&reply), -32700);
    attack(&mut server, Vec::new());

    // A batch, a bare string, a message without `jsonrpc`: -32600.
    for (body, id) in [("[1, 2]", Value::Null), ("\"x\"", Value::Null), (r#"{"id": 7, "method": "x"}"#, json!(7))] {
        server.send_raw(&raw(body));
        let reply = server.wait_for(|m| m.get("error").is_some() && m["id"] == id);
        assert_eq!(error_code(&reply), -32600, "{body}");
        attack(&mut server, Vec::new());
    }

    // A `$/` request with an id: method not found.
    server.send(&json!({"jsonrpc": "2.0", "id": 8, "method": "$/unknown", "params": {}}));
    assert_eq!(error_code(&server.response(8)), -32601);

    // A float id, a numeric method, scalar params: -32600 (id kept when usable).
    server.send_raw(&raw(r#"{"jsonrpc": "2.0", "id": 1.5, "method": "workspace/symbol"}"#));
    assert_eq!(error_code(&server.wait_for(|m| m.get("error").is_some() && m["id"].is_null())), -32600);
    server.send_raw(&raw(r#"{"jsonrpc": "2.0", "id": 9, "method": 3}"#));
    assert_eq!(error_code(&server.response(9)), -32600);
    server.send_raw(&raw(r#"{"jsonrpc": "2.0", "id": 10, "method": "workspace/symbol", "params": 3}"#));
    assert_eq!(error_code(&server.response(10)), -32600);

    // Framing: Content-Type headers, lowercase names, no colon, no length,
    // an overlong header line, a bad length, a length far over the limit.
    let symbol = |id: i64| {
        json!({"jsonrpc": "2.0", "id": id, "method": "workspace/symbol", "params": {"query": ""}}).to_string()
    };
    let body = symbol(11);
    server.send_raw(
        &format!(
            "Content-Type: application/vscode-jsonrpc; charset=utf-8\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        )
        .into_bytes(),
    );
    server.response(11);
    let body = symbol(12);
    server.send_raw(
        &format!("content-length: {}\r\ncontent-type: application/json\r\n\r\n{body}", body.len()).into_bytes(),
    );
    server.response(12);
    attack(&mut server, b"garbage without a colon\r\n\r\n".to_vec());
    attack(&mut server, b"Content-Type: x\r\n\r\n".to_vec());
    attack(&mut server, format!("X-Long: {}\r\n\r\n", "a".repeat(100_000)).into_bytes());
    attack(&mut server, b"Content-Length: -5\r\n\r\n".to_vec());
    attack(&mut server, b"Content-Length: 99999999999\r\n\r\n{\"jsonrpc\": \"2.0\"}".to_vec());

    // A lone surrogate, escaped and raw, in a document's text: the document
    // opens with U+FFFD in its place and is analysed.
    let uri = "file:///torture/s.sr";
    let text = r#"{"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {"uri": "file:///torture/s.sr", "languageId": "streetrace", "version": 1, "text": "flow main:\n    log \"\ud800\"\n    log $nope\n"}}}"#;
    attack(&mut server, raw(text));
    let diagnostics =
        server.wait_for(|m| m["method"] == "textDocument/publishDiagnostics" && m["params"]["uri"] == uri);
    let messages: Vec<&str> =
        diagnostics["params"]["diagnostics"].as_array().unwrap().iter().filter_map(|d| d["message"].as_str()).collect();
    assert!(messages.iter().any(|m| m.contains("$nope")), "{messages:?}");
    let mut raw_surrogate = b"{\"jsonrpc\": \"2.0\", \"id\": 13, \"method\": \"workspace/symbol\", \"params\": {\"query\": \"\xed\xa0\x80\"}}".to_vec();
    let mut framed = format!("Content-Length: {}\r\n\r\n", raw_surrogate.len()).into_bytes();
    framed.append(&mut raw_surrogate);
    server.send_raw(&framed);
    assert!(server.response(13).get("result").is_some());

    // Unknown notifications and responses to nothing are ignored.
    attack(&mut server, raw(r#"{"jsonrpc": "2.0", "method": "$/unknown", "params": {}}"#));
    attack(&mut server, raw(r#"{"jsonrpc": "2.0", "id": 424242, "result": {}}"#));

    server.send(&json!({"jsonrpc": "2.0", "id": 99, "method": "shutdown"}));
    server.response(99);
    server.send(&json!({"jsonrpc": "2.0", "method": "exit"}));
    let status = wait_child(&mut server.child);
    assert_eq!(status.code(), Some(0), "exit after shutdown");
}

#[test]
fn exit_without_shutdown_is_exit_code_1() {
    let mut server = Server::start(capabilities());
    server.send(&json!({"jsonrpc": "2.0", "method": "exit"}));
    assert_eq!(wait_child(&mut server.child).code(), Some(1));
}

#[test]
fn end_of_input_ends_the_server() {
    let server = Server::start(capabilities());
    let mut child = server.close_input();
    assert_eq!(wait_child(&mut child).code(), Some(1));
}

/// Removing a workspace folder used to deadlock the server: the owner held a
/// snapshot while removing files, which waits for every snapshot to drop.
#[test]
fn removing_a_workspace_folder_does_not_stall_the_server() {
    let dir = std::env::temp_dir().join(format!("sr-lsp-folders-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("a.sr"), "flow main:\n    log \"a\"\n").unwrap();
    let uri = format!("file://{}", dir.display());
    let mut server = Server::start(json!({
        "capabilities": {"workspace": {"workspaceFolders": true}},
        "processId": null,
        "workspaceFolders": [{"uri": uri, "name": "w"}],
    }));
    server.send(&json!({"jsonrpc": "2.0", "id": 1, "method": "workspace/symbol", "params": {"query": "main"}}));
    let found = server.response(1);
    assert_eq!(found["result"].as_array().map(Vec::len), Some(1), "{found}");
    server.send(&json!({"jsonrpc": "2.0", "method": "workspace/didChangeWorkspaceFolders", "params": {
        "event": {"added": [], "removed": [{"uri": uri, "name": "w"}]}}}));
    server.send(&json!({"jsonrpc": "2.0", "id": 2, "method": "workspace/symbol", "params": {"query": "main"}}));
    assert_eq!(server.response(2)["result"], json!([]));
    let mut child = server.close_input();
    assert_eq!(wait_child(&mut child).code(), Some(1));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Peak resident memory of a process, from `/proc`.
fn peak_rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// Every hostile-input generator as an open document, each in a server of
/// its own: open, symbols, semantic tokens, hover, signature help, type
/// definition, formatting, folding, an edit, symbols again, close. Each request is answered (a result or an
/// error, never silence) and the server stays within 1 GiB.
#[test]
fn hostile_documents_are_served() {
    use sr_testing::hostile::{BLOCKS, EXPRESSIONS, codes, constructs, generator};
    let mut cases: Vec<(&str, usize)> = EXPRESSIONS.iter().map(|g| (g.name, 20_000)).collect();
    cases.extend(BLOCKS.iter().map(|g| (g.name, 3_000)));
    cases.extend([
        ("long-line", 10_000_000),
        ("unterminated-string", 10_000_000),
        ("unterminated-triple", 2_000_000),
        ("unclosed-interpolations", 100_000),
        ("dotted-name", 10_000_000),
        ("nul-bytes", 1_000_000),
        ("nul-line", 100_000),
        ("delegate-ring", 8_000),
        ("nested-if-statements", 3_000),
        ("prompts", 20_000),
        ("mixed-line-endings", 100_000),
        ("many-errors", 100_000),
    ]);
    cases.extend(codes::CODES.iter().chain(constructs::CONSTRUCTS).map(|g| (g.name, 2_000)));
    let binary = sr_testing::hostile_binary("sr-lsp", env!("CARGO_BIN_EXE_sr-lsp"));
    for (name, size) in cases {
        let text = (generator(name).make)(size);
        let mut server = Server::start_binary(&binary, capabilities());
        let uri = format!("file:///hostile/{name}.sr");
        let document = json!({"uri": uri});
        let started = std::time::Instant::now();
        server.send(&json!({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
            "uri": uri, "languageId": "streetrace", "version": 1, "text": text}}}));
        let requests = [
            ("textDocument/documentSymbol", json!({"textDocument": document})),
            ("textDocument/semanticTokens/full", json!({"textDocument": document})),
            ("textDocument/hover", json!({"textDocument": document, "position": {"line": 1, "character": 6}})),
            ("textDocument/signatureHelp", json!({"textDocument": document, "position": {"line": 1, "character": 6}})),
            ("textDocument/typeDefinition", json!({"textDocument": document, "position": {"line": 1, "character": 6}})),
            (
                "textDocument/formatting",
                json!({"textDocument": document, "options": {"tabSize": 4, "insertSpaces": true}}),
            ),
            ("textDocument/foldingRange", json!({"textDocument": document})),
        ];
        for (id, (method, params)) in requests.into_iter().enumerate() {
            server.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
            let reply = server.response(id);
            assert!(reply.get("result").is_some() || reply.get("error").is_some(), "{name} {method}: {reply}");
        }
        server.send(&json!({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
            "textDocument": {"uri": uri, "version": 2},
            "contentChanges": [{"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}, "text": "# edited\n"}]}}));
        server.send(&json!({"jsonrpc": "2.0", "id": 100, "method": "textDocument/documentSymbol", "params": {"textDocument": document}}));
        assert!(server.response(100).get("result").is_some(), "{name}: symbols after an edit");
        server
            .send(&json!({"jsonrpc": "2.0", "method": "textDocument/didClose", "params": {"textDocument": document}}));
        still_serving(&mut server, 101);
        let peak = peak_rss_kib(server.child.id());
        eprintln!(
            "{name:24} {size:>9} {:9}: {:6.2} s, peak {peak:7} KiB",
            generator(name).unit,
            started.elapsed().as_secs_f64()
        );
        assert!(peak < 1024 * 1024, "{name}: sr-lsp peaked at {peak} KiB");
        server.send(&json!({"jsonrpc": "2.0", "id": 102, "method": "shutdown"}));
        server.response(102);
        server.send(&json!({"jsonrpc": "2.0", "method": "exit"}));
        assert_eq!(wait_child(&mut server.child).code(), Some(0), "{name}");
    }
}
