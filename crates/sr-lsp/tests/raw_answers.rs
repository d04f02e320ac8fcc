//! Big answers (document and workspace symbols, references, semantic tokens,
//! completion, formatting) leave the real `sr-lsp` binary serialised straight
//! to bytes, not through tower-lsp-server's `Value` tree: they must be exactly
//! what the in-process service answers, to the request that asked, however
//! many are in flight.
#![allow(clippy::unwrap_used)]

#[allow(dead_code)] // `common` also serves the torture tests.
mod common;

use common::Server;
use serde_json::{Value, json};
use sr_lsp::tower_lsp_server::jsonrpc::Request;
use tower::{Service, ServiceExt};

const URI: &str = "file:///raw/main.sr";

/// Nested symbols, leaves, details and a non-ASCII name before the
/// positions asked about (UTF-16 columns differ from bytes there).
const TEXT: &str = r#"model main = anthropic/claude
schema Finding:
    note: string
    line: int?
prompt review expecting Finding[]: """Réviser ${target} 🦀"""
agent reviewer:
    instruction review
    description "Reviews"
    on tool-call do
        $seen = true
    end
flow main:
    $target  =  "x"
    $found = run agent reviewer with $target
    for $item in $found do
        log "${item.note}"
    end
    return $found
"#;

fn requests() -> Vec<(&'static str, Value)> {
    let document = json!({"uri": URI});
    let at = |line: u32, character: u32| json!({"line": line, "character": character});
    vec![
        ("textDocument/documentSymbol", json!({"textDocument": document})),
        ("workspace/symbol", json!({"query": ""})),
        ("workspace/symbol", json!({"query": "rvw"})),
        (
            "textDocument/references",
            json!({"textDocument": document, "position": at(12, 6), "context": {"includeDeclaration": true}}),
        ),
        ("textDocument/semanticTokens/full", json!({"textDocument": document})),
        ("textDocument/completion", json!({"textDocument": document, "position": at(13, 4)})),
        ("textDocument/formatting", json!({"textDocument": document, "options": {"tabSize": 4, "insertSpaces": true}})),
    ]
}

fn initialize() -> Value {
    let symbols = json!({"documentSymbol": {"hierarchicalDocumentSymbolSupport": true}});
    json!({"capabilities": {"textDocument": symbols}, "processId": null})
}

fn open() -> Value {
    let document = json!({"uri": URI, "languageId": "streetrace", "version": 1, "text": TEXT});
    json!({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": document}})
}

/// What the in-process service (tower-lsp-server's own serialisation) answers.
fn in_process() -> Vec<Value> {
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    runtime.block_on(async {
        let (mut service, _socket) = sr_lsp::service();
        let mut call = async |request: Request| service.ready().await.unwrap().call(request).await.unwrap();
        call(Request::build("initialize").id(0).params(initialize()).finish()).await;
        call(Request::build("initialized").params(json!({})).finish()).await;
        call(Request::build("textDocument/didOpen").params(open()["params"].clone()).finish()).await;
        let mut answers = Vec::new();
        for (id, (method, params)) in (1..).zip(requests()) {
            let response = call(Request::build(method).id(id).params(params).finish()).await.unwrap();
            let (_, result) = response.into_parts();
            answers.push(result.unwrap());
        }
        answers
    })
}

/// Semantic tokens' result id counts the answers sent: it differs, but it is a string.
fn without_result_id(mut answer: Value) -> Value {
    if let Some(id) = answer.as_object_mut().and_then(|a| a.remove("resultId")) {
        assert!(id.is_string(), "{id}");
    }
    answer
}

#[test]
fn answers_through_stdio_are_the_in_process_answers_to_the_request_that_asked() {
    let expected = in_process();
    assert!(expected[0].as_array().is_some_and(|symbols| symbols.len() == 5), "{}", expected[0]);
    assert!(expected.iter().all(|answer| !answer.is_null() && answer != &json!([])), "{expected:?}");

    let mut server = Server::start(initialize());
    server.send(&open());
    // Every request three times, all in flight at once, under integer and
    // string ids: each answer must reach the id that asked for it.
    let mut asked = Vec::new();
    for round in 0..3 {
        for (n, (method, params)) in requests().into_iter().enumerate() {
            let id = if round == 1 { json!(format!("r{n}")) } else { json!(100 * round + n) };
            server.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
            asked.push((id, n));
        }
    }
    // Answers come in any order: collect them all first.
    let mut answers = std::collections::HashMap::new();
    while answers.len() < asked.len() {
        let response = server.wait_for(|m| m.get("id").is_some() && m.get("method").is_none());
        assert_eq!(response["jsonrpc"], "2.0");
        assert!(answers.insert(response["id"].to_string(), response["result"].clone()).is_none(), "{response}");
    }
    for (id, n) in asked {
        let answer = without_result_id(answers[&id.to_string()].clone());
        assert_eq!(answer, without_result_id(expected[n].clone()), "answer to {id} ({})", requests()[n].0);
    }
    // A symbol request about a document nobody opened answers null, as in process.
    let params = json!({"textDocument": {"uri": "file:///raw/closed.sr"}});
    server.send(&json!({"jsonrpc": "2.0", "id": 99, "method": "textDocument/documentSymbol", "params": params}));
    assert_eq!(server.response(99)["result"], Value::Null);

    server.send(&json!({"jsonrpc": "2.0", "id": 100, "method": "shutdown"}));
    server.response(100);
    server.send(&json!({"jsonrpc": "2.0", "method": "exit"}));
    let mut child = server.close_input();
    assert!(common::wait_child(&mut child).success());
}

#[test]
fn a_big_answer_before_initialize_is_refused_as_any_request_is() {
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_sr-lsp"))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let messages = common::read_messages(child.stdout.take().unwrap());
    let request = json!({"jsonrpc": "2.0", "id": 1, "method": "workspace/symbol", "params": {"query": ""}});
    std::io::Write::write_all(&mut stdin, &common::frame(&request)).unwrap();
    let response = messages.recv_timeout(std::time::Duration::from_secs(30)).unwrap();
    assert_eq!(response["id"], 1);
    assert_eq!(response["error"]["code"], -32002, "{response}");
    drop(stdin);
    let _ = common::wait_child(&mut child);
}
