//! Workspace-wide requests on one 10 MB file through the whole server (in
//! process): workspace symbols, references of a tool used in every group, of
//! a variable whose namespace spans every flow and of a schema field, and
//! document symbols.
//! `cargo run --release -p sr-lsp --example big_file` (the bar is
//! under 1 s each in release).
#![allow(clippy::unwrap_used, clippy::print_stdout)]

use std::time::Instant;

use serde_json::{Value, json};
use sr_lsp::tower_lsp_server::jsonrpc::Request;
use tower::{Service, ServiceExt};

const BYTES: usize = 10 << 20;

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let (mut service, _socket) = sr_lsp::service();
    let mut call = async |request: Request| service.ready().await.unwrap().call(request).await.unwrap();
    let init = json!({"capabilities": {}, "initializationOptions": {"streetrace": {"debounceMs": 0}}});
    call(Request::build("initialize").id(1).params(init).finish()).await;
    call(Request::build("initialized").params(json!({})).finish()).await;

    // About 26 bytes a line.
    let text = sr_testing::generated_workload(BYTES / 26);
    let position = |needle: &str, skip: usize| {
        let (line, l) = text.lines().enumerate().find(|(_, l)| l.contains(needle)).unwrap();
        json!({"line": line, "character": l.find(needle).unwrap() + skip})
    };
    let uri = "file:///bench/big.sr";
    let (tool, variable) = (position("tools fs", "tools ".len()), position("$input_prompt", 1));
    let field = position("    line: int", "    ".len());
    println!("{} bytes, {} lines", text.len(), text.lines().count());
    let open = json!({"textDocument": {"uri": uri, "languageId": "streetrace", "version": 0, "text": text}});
    call(Request::build("textDocument/didOpen").params(open).finish()).await;

    let requests = [
        ("workspace/symbol (first, parses)", "workspace/symbol", json!({"query": ""})),
        ("workspace/symbol \"\"", "workspace/symbol", json!({"query": ""})),
        ("workspace/symbol \"fixer1\"", "workspace/symbol", json!({"query": "fixer1"})),
        ("references of tool fs", "textDocument/references", references(uri, tool)),
        ("references of $input_prompt", "textDocument/references", references(uri, variable)),
        ("references of field Finding0.line", "textDocument/references", references(uri, field)),
        ("documentSymbol", "textDocument/documentSymbol", json!({"textDocument": {"uri": uri}})),
    ];
    for (id, (label, method, params)) in (2..).zip(requests) {
        let start = Instant::now();
        let response = call(Request::build(method).id(id).params(params).finish()).await.unwrap();
        let elapsed = start.elapsed();
        let count = response.result().and_then(Value::as_array).map_or(0, Vec::len);
        assert!(response.error().is_none(), "{label}: {:?}", response.error());
        println!("{label}: {count} results in {elapsed:?}");
    }
}

fn references(uri: &str, position: Value) -> Value {
    json!({"textDocument": {"uri": uri}, "position": position, "context": {"includeDeclaration": true}})
}
