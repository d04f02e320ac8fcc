//! Edit → published diagnostics through the whole server (in process, no
//! debounce) on a generated 10k-line file, with percentiles:
//! `cargo run --release -p sr-lsp --example latency`.
#![allow(clippy::unwrap_used, clippy::print_stdout)]

use std::time::{Duration, Instant};

use futures::StreamExt;
use serde_json::json;
use sr_lsp::tower_lsp_server::jsonrpc::Request;
use tower::{Service, ServiceExt};

const SAMPLES: usize = 200;

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let (mut service, mut socket) = sr_lsp::service();
    let mut call = async |request: Request| service.ready().await.unwrap().call(request).await.unwrap();
    let init = json!({"capabilities": {}, "initializationOptions": {"streetrace": {"debounceMs": 0}}});
    call(Request::build("initialize").id(1).params(init).finish()).await;
    call(Request::build("initialized").params(json!({})).finish()).await;

    let text = sr_testing::generated_workload(10_700);
    let lines = text.lines().count();
    let (line, character) = text
        .lines()
        .enumerate()
        .filter_map(|(i, l)| l.find("return $r0").map(|c| (i, c + "return ".len())))
        .last()
        .unwrap();
    let uri = "file:///bench/main.sr";
    let open = json!({"textDocument": {"uri": uri, "languageId": "streetrace", "version": 0, "text": text}});
    call(Request::build("textDocument/didOpen").params(open).finish()).await;
    wait_for_version(&mut socket, 0).await;

    let mut samples = Vec::with_capacity(SAMPLES);
    for version in 1..=SAMPLES as i32 {
        // Insert a `$` and take it out again, alternately.
        let (end, new_text) = if version % 2 == 1 { (character, "$") } else { (character + 1, "") };
        let range = json!({"start": {"line": line, "character": character}, "end": {"line": line, "character": end}});
        let change = json!({"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"range": range, "text": new_text}]});
        let start = Instant::now();
        call(Request::build("textDocument/didChange").params(change).finish()).await;
        wait_for_version(&mut socket, version).await;
        samples.push(start.elapsed());
    }
    samples.sort();
    let percentile = |p: f64| samples[((samples.len() as f64 - 1.0) * p).round() as usize];
    println!(
        "edit -> publishDiagnostics, {lines} lines, {SAMPLES} edits: p50 {:?}, p95 {:?}, max {:?}",
        percentile(0.50),
        percentile(0.95),
        samples[samples.len() - 1]
    );
}

async fn wait_for_version(socket: &mut sr_lsp::tower_lsp_server::ClientSocket, version: i32) {
    loop {
        let message = tokio::time::timeout(Duration::from_secs(30), socket.next()).await.unwrap().unwrap();
        if message.method() == "textDocument/publishDiagnostics"
            && message.params().and_then(|p| p.get("version")).and_then(|v| v.as_i64()) == Some(version as i64)
        {
            return;
        }
    }
}
