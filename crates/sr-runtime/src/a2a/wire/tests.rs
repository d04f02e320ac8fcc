use expect_test::{Expect, expect};
use serde_json::{Value, json};

use super::*;

const CARD_URL: &str = "http://127.0.0.1:8000/.well-known/agent-card.json";

fn check_endpoint(card: Value, expect: Expect) {
    let shown = match endpoint(&card, CARD_URL) {
        Ok(Endpoint { url, version, streaming }) => {
            format!("{version:?} {url}{}", if streaming { " streaming" } else { "" })
        }
        Err(e) => format!("error: {e}"),
    };
    expect.assert_eq(&shown);
}

#[test]
fn a_card_gives_its_json_rpc_interface_on_its_own_origin_1_0_first() {
    let interface = |url: &str, binding: &str, version: &str| json!({"url": url, "protocolBinding": binding, "protocolVersion": version});
    check_endpoint(
        json!({"supportedInterfaces": [
            interface("http://127.0.0.1:8000/a2a", "JSONRPC", "0.3"),
            interface("http://127.0.0.1:8000/a2a", "JSONRPC", "1.0"),
        ]}),
        expect!["V10 http://127.0.0.1:8000/a2a"],
    );
    // Streams only when the card says so (a string is not `true`).
    for (streaming, expect) in [
        (json!(true), expect!["V10 http://127.0.0.1:8000/a2a streaming"]),
        (json!("true"), expect!["V10 http://127.0.0.1:8000/a2a"]),
    ] {
        check_endpoint(
            json!({"capabilities": {"streaming": streaming},
                   "supportedInterfaces": [interface("http://127.0.0.1:8000/a2a", "JSONRPC", "1.0")]}),
            expect,
        );
    }
    check_endpoint(
        json!({"supportedInterfaces": [interface("http://127.0.0.1:8000/v1", "HTTP+JSON", "1.0")],
               "url": "http://127.0.0.1:8000/rpc", "preferredTransport": "JSONRPC", "protocolVersion": "0.3.0"}),
        expect!["V03 http://127.0.0.1:8000/rpc"],
    );
    check_endpoint(
        json!({"url": "http://127.0.0.1:8000/grpc", "preferredTransport": "GRPC",
               "additionalInterfaces": [{"url": "http://127.0.0.1:8000/rpc", "transport": "JSONRPC"}]}),
        expect!["V03 http://127.0.0.1:8000/rpc"],
    );
    // The default port written out is the same origin.
    check_endpoint(
        json!({"supportedInterfaces": [interface("HTTP://127.0.0.1:8000/x", "jsonrpc", "1.0.0")]}),
        expect!["V10 HTTP://127.0.0.1:8000/x"],
    );
}

#[test]
fn a_card_without_a_usable_interface_is_an_error_that_says_why() {
    for (card, expected) in [
        (json!("a string"), expect!["error: the card is not a JSON object"]),
        (json!({}), expect!["error: the card names no JSON-RPC interface of A2A 1.0 or 0.3"]),
        (json!({"supportedInterfaces": "x"}), expect!["error: the card names no JSON-RPC interface of A2A 1.0 or 0.3"]),
        (
            json!({"supportedInterfaces": [{"url": "http://127.0.0.1:8000/a", "protocolBinding": "GRPC"}]}),
            expect!["error: the card names no JSON-RPC interface of A2A 1.0 or 0.3"],
        ),
        (
            json!({"supportedInterfaces": [{"url": "http://127.0.0.1:8000/a", "protocolBinding": "JSONRPC", "protocolVersion": "2.0"}]}),
            expect!["error: the card names no JSON-RPC interface of A2A 1.0 or 0.3"],
        ),
        (
            json!({"supportedInterfaces": [{"url": 7, "protocolBinding": "JSONRPC"}]}),
            expect!["error: the card names no JSON-RPC interface of A2A 1.0 or 0.3"],
        ),
        (
            json!({"supportedInterfaces": [{"url": "http://169.254.169.254/latest", "protocolBinding": "JSONRPC"}]}),
            expect![
                "error: the card's interface 'http://169.254.169.254/latest' is not on the card's host http://127.0.0.1:8000"
            ],
        ),
        (
            json!({"url": "http://127.0.0.1:8001/rpc"}),
            expect![
                "error: the card's interface 'http://127.0.0.1:8001/rpc' is not on the card's host http://127.0.0.1:8000"
            ],
        ),
        (
            json!({"url": "https://127.0.0.1:8000/rpc"}),
            expect![
                "error: the card's interface 'https://127.0.0.1:8000/rpc' is not on the card's host http://127.0.0.1:8000"
            ],
        ),
        (
            json!({"url": "http://evil@127.0.0.2:8000/rpc"}),
            expect![
                "error: the card's interface 'http://evil@127.0.0.2:8000/rpc' is not on the card's host http://127.0.0.1:8000"
            ],
        ),
    ] {
        check_endpoint(card, expected);
    }
}

#[test]
fn origins_make_default_ports_explicit() {
    assert_eq!(origin("https://H.example/x").as_deref(), Some("https://h.example:443"));
    assert_eq!(origin("https://h.example:443").as_deref(), Some("https://h.example:443"));
    assert_eq!(origin("http://[::1]/x").as_deref(), Some("http://[::1]:80"));
    assert_eq!(origin("http://[::1]:9/x").as_deref(), Some("http://[::1]:9"));
    assert_eq!(origin("ftp://h/x"), None);
    assert_eq!(origin("http:///x"), None);
}

fn check_outcome(response: Value, expect: Expect) {
    expect.assert_eq(&format!("{:?}", outcome(&response).map_err(|e| e.to_string())));
}

#[test]
fn replies_of_both_versions_come_to_an_answer_a_question_or_a_failure() {
    let v10_task = |state: &str, extra: Value| {
        let mut task = json!({"id": "t1", "contextId": "c1", "status": {"state": state, "message": {"role": "ROLE_AGENT", "parts": [{"text": "which file?"}]}}});
        if let (Some(task), Some(extra)) = (task.as_object_mut(), extra.as_object()) {
            task.extend(extra.clone());
        }
        json!({"jsonrpc": "2.0", "id": 1, "result": {"task": task}})
    };
    let artifacts = json!({"artifacts": [
        {"artifactId": "a", "parts": [{"text": "reviewed: ok"}]},
        {"artifactId": "b", "parts": [{"data": {"words": 3}}, {"url": "http://x/f.png"}]},
        {"artifactId": "c", "parts": []},
    ]});
    check_outcome(
        v10_task("TASK_STATE_COMPLETED", artifacts),
        expect![[r#"Ok(Answer("reviewed: ok\n{\"words\":3}\n[a file part, not fetched]"))"#]],
    );
    check_outcome(v10_task("TASK_STATE_COMPLETED", json!({})), expect![[r#"Ok(Answer("which file?"))"#]]);
    check_outcome(
        v10_task("TASK_STATE_INPUT_REQUIRED", json!({})),
        expect![[r#"Ok(InputRequired { question: "which file?", task_id: "t1", context_id: Some("c1") })"#]],
    );
    check_outcome(v10_task("TASK_STATE_WORKING", json!({})), expect![[r#"Ok(Working { task_id: "t1" })"#]]);
    check_outcome(
        v10_task("TASK_STATE_FAILED", json!({})),
        expect![[r#"Ok(Failed("the remote task is failed: which file?"))"#]],
    );
    check_outcome(
        v10_task("TASK_STATE_AUTH_REQUIRED", json!({})),
        expect![[r#"Ok(Failed("the remote task is auth-required: which file?"))"#]],
    );
    check_outcome(
        v10_task("TASK_STATE_BOGUS", json!({})),
        expect![[r#"Err("the remote task is in an unknown state 'bogus'")"#]],
    );
    check_outcome(
        json!({"jsonrpc": "2.0", "id": 1, "result": {"message": {"role": "ROLE_AGENT", "parts": [{"text": "hi"}]}}}),
        expect![[r#"Ok(Answer("hi"))"#]],
    );
    // 0.3: objects tagged with `kind`, data parts nested in `data`.
    check_outcome(
        json!({"jsonrpc": "2.0", "id": 1, "result": {"kind": "task", "id": "t2", "status": {"state": "completed"},
               "artifacts": [{"parts": [{"kind": "data", "data": {"ok": true}}]}]}}),
        expect![[r#"Ok(Answer("{\"ok\":true}"))"#]],
    );
    check_outcome(
        json!({"jsonrpc": "2.0", "id": 1, "result": {"kind": "task", "id": "t2", "contextId": "c", "status": {"state": "input-required", "message": {"parts": [{"kind": "text", "text": "why?"}]}}}}),
        expect![[r#"Ok(InputRequired { question: "why?", task_id: "t2", context_id: Some("c") })"#]],
    );
    check_outcome(
        json!({"jsonrpc": "2.0", "id": 1, "result": {"kind": "message", "parts": [{"kind": "text", "text": "hello"}]}}),
        expect![[r#"Ok(Answer("hello"))"#]],
    );
}

#[test]
fn errors_and_strange_replies_are_errors_that_say_what_came() {
    check_outcome(
        json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": "Method not found"}}),
        expect![[r#"Err("JSON-RPC error -32601: Method not found")"#]],
    );
    check_outcome(
        json!({"jsonrpc": "2.0", "id": 1, "error": "x"}),
        expect![[r#"Err("JSON-RPC error ?: no message")"#]],
    );
    check_outcome(
        json!({"jsonrpc": "2.0", "id": 1}),
        expect![[r#"Err("the reply is not a JSON-RPC response (no result and no error)")"#]],
    );
    check_outcome(json!([1, 2]), expect![[r#"Err("the reply is not a JSON-RPC response (no result and no error)")"#]]);
    check_outcome(json!({"result": 5}), expect![[r#"Err("the reply's result is neither a task nor a message")"#]]);
    // A task with no id that says it is working cannot be polled.
    check_outcome(
        json!({"result": {"task": {"status": {"state": "TASK_STATE_WORKING"}}}}),
        expect![[r#"Err("the remote task is in an unknown state 'working'")"#]],
    );
    // A long message is cut in what we show.
    let long = "x".repeat(1000);
    let shown = format!("{:?}", outcome(&json!({"error": {"code": 1, "message": long}})));
    assert!(shown.len() < 300, "{shown}");
}

#[test]
fn requests_use_each_versions_method_and_shapes() {
    expect![[r#"{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"hi"}]}}}"#]]
        .assert_eq(&send_request(Version::V10, "m", "hi", None).to_string());
    expect![[r#"{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","messageId":"m","role":"user","parts":[{"kind":"text","text":"yes"}],"taskId":"t","contextId":"c"}}}"#]]
        .assert_eq(&send_request(Version::V03, "m", "yes", Some(("t", Some("c")))).to_string());
    expect![[r#"{"jsonrpc":"2.0","id":2,"method":"GetTask","params":{"id":"t","historyLength":0}}"#]]
        .assert_eq(&get_task_request(Version::V10, "t").to_string());
    let methods = [Version::V10, Version::V03].map(|v| stream_request(v, "m", "hi", None)["method"].clone());
    assert_eq!(methods, [json!("SendStreamingMessage"), json!("message/stream")]);
}
