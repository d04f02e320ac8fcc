//! Stdio transcripts of the real `sr-lsp` binary for the features editors
//! reach through requests of their own: rename (versioned edits, conflicts,
//! refusals), `workspace/executeCommand`, auto-import and pull diagnostics.

#[allow(dead_code)] // `common` also serves the torture tests.
mod common;

use common::Server;
use serde_json::{Value, json};

const MAIN: &str = "file:///transcripts/main.sr";

fn start() -> Server {
    let capabilities = json!({"workspace": {"workspaceEdit": {"documentChanges": true}}});
    Server::start(json!({"capabilities": capabilities, "processId": null}))
}

fn open(server: &mut Server, uri: &str, version: i32, text: &str) {
    let document = json!({"uri": uri, "languageId": "streetrace", "version": version, "text": text});
    server.send(&json!({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": document}}));
}

fn request(server: &mut Server, id: i64, method: &str, params: Value) -> Value {
    server.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
    server.response(id)
}

fn at(uri: &str, line: u32, character: u32) -> Value {
    json!({"textDocument": {"uri": uri}, "position": {"line": line, "character": character}})
}

#[test]
fn rename_answers_versioned_edits_and_refuses_taken_names() {
    let mut server = start();
    let text = "prompt ask: \"\"\"About ${topic}\"\"\"\nflow main:\n    $topic = \"rust\"\n    $r = call llm ask\n";
    open(&mut server, MAIN, 7, text);

    let mut params = at(MAIN, 2, 6);
    params["newName"] = json!("subject");
    let edit = request(&mut server, 1, "textDocument/rename", params.clone());
    let expected = json!({"documentChanges": [{
        "textDocument": {"uri": MAIN, "version": 7},
        "edits": [
            {"range": {"start": {"line": 0, "character": 23}, "end": {"line": 0, "character": 28}}, "newText": "subject"},
            {"range": {"start": {"line": 2, "character": 5}, "end": {"line": 2, "character": 10}}, "newText": "subject"},
        ],
    }]});
    assert_eq!(edit["result"], expected);

    params["newName"] = json!("r");
    let refused = request(&mut server, 2, "textDocument/rename", params.clone());
    assert_eq!(refused["error"]["code"], -32803, "{refused}");
    assert_eq!(refused["error"]["message"], "'r' is already a variable in flow 'main' (/transcripts/main.sr:2)");
    params["newName"] = json!("ask");
    let refused = request(&mut server, 3, "textDocument/rename", params);
    assert_eq!(refused["error"]["message"], "'ask' is already prompt 'ask' (/transcripts/main.sr:1)");

    let keyword = request(&mut server, 4, "textDocument/prepareRename", at(MAIN, 1, 1));
    assert_eq!(keyword["error"]["message"], "'flow' is a keyword, not a name");
    let prepared = request(&mut server, 5, "textDocument/prepareRename", at(MAIN, 2, 6));
    assert_eq!(prepared["result"], json!({"start": {"line": 2, "character": 5}, "end": {"line": 2, "character": 10}}));
}
