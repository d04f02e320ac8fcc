//! The server in process, driven through its tower `Service` as a client
//! would: lifecycle, versioned diagnostics, navigation in both position
//! encodings, ordering and races, semantic-token deltas, workspace files and
//! configuration.
#![allow(clippy::unwrap_used)]

use std::time::Duration;

use futures::StreamExt;
use serde_json::{Value, json};
use sr_lsp::tower_lsp_server::jsonrpc::{Request, Response};
use sr_lsp::tower_lsp_server::{ClientSocket, LspService};
use sr_lsp::{Ordered, Server};
use tower::{Service, ServiceExt};

struct Client {
    service: Ordered<LspService<Server>>,
    socket: ClientSocket,
    next_id: i64,
}

impl Client {
    async fn start(capabilities: Value, extra: Value) -> (Client, Value) {
        let (service, socket) = sr_lsp::service();
        let mut client = Client { service, socket, next_id: 1 };
        let mut params = json!({
            "capabilities": capabilities,
            "initializationOptions": {"streetrace": {"debounceMs": 0}},
        });
        if let (Some(params), Some(extra)) = (params.as_object_mut(), extra.as_object()) {
            params.extend(extra.clone());
        }
        let result = client.request("initialize", params).await.result().cloned().unwrap();
        client.notify("initialized", json!({})).await;
        (client, result)
    }

    fn build(&mut self, method: &'static str, params: Value) -> Request {
        self.next_id += 1;
        Request::build(method).id(self.next_id).params(params).finish()
    }

    async fn call(&mut self, request: Request) -> Option<Response> {
        self.service.ready().await.unwrap().call(request).await.unwrap()
    }

    async fn request(&mut self, method: &'static str, params: Value) -> Response {
        let request = self.build(method, params);
        self.call(request).await.unwrap()
    }

    async fn result(&mut self, method: &'static str, params: Value) -> Value {
        let response = self.request(method, params).await;
        response.result().cloned().unwrap_or_else(|| panic!("{method} failed: {:?}", response.error()))
    }

    async fn notify(&mut self, method: &'static str, params: Value) {
        let request = Request::build(method).params(params).finish();
        assert!(self.call(request).await.is_none());
    }

    /// The next `publishDiagnostics` from the server.
    async fn diagnostics(&mut self) -> Value {
        loop {
            let message = tokio::time::timeout(Duration::from_secs(10), self.socket.next())
                .await
                .expect("no message from the server")
                .expect("server closed");
            if message.method() == "textDocument/publishDiagnostics" {
                return message.params().cloned().unwrap();
            }
        }
    }

    async fn open(&mut self, uri: &str, version: i32, text: &str) {
        let params =
            json!({"textDocument": {"uri": uri, "languageId": "streetrace", "version": version, "text": text}});
        self.notify("textDocument/didOpen", params).await;
    }

    async fn replace(&mut self, uri: &str, version: i32, text: &str) {
        let params = json!({"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": text}]});
        self.notify("textDocument/didChange", params).await;
    }
}

fn at(uri: &str, line: u32, character: u32) -> Value {
    json!({"textDocument": {"uri": uri}, "position": {"line": line, "character": character}})
}

fn codes(diagnostics: &Value) -> Vec<String> {
    diagnostics["diagnostics"].as_array().unwrap().iter().map(|d| d["code"].as_str().unwrap().to_string()).collect()
}

const MAIN: &str = "file:///ws/main.sr";

#[tokio::test]
async fn initialize_negotiates_encoding_and_publishes_version_metadata() {
    let (_, result) = Client::start(json!({}), json!({})).await;
    let capabilities = &result["capabilities"];
    assert_eq!(capabilities["positionEncoding"], "utf-16");
    assert_eq!(capabilities["experimental"]["streetrace"]["serverVersion"], env!("CARGO_PKG_VERSION"));
    assert_eq!(capabilities["textDocumentSync"], json!({"openClose": true, "change": 2, "save": true}));
    // Pull diagnostics are offered only to a client that pulls and takes a
    // refresh; this one is pushed.
    assert_eq!(capabilities["diagnosticProvider"], Value::Null);
    let pulls = json!({"textDocument": {"diagnostic": {}}, "workspace": {"diagnostics": {"refreshSupport": true}}});
    let (_, pulling) = Client::start(pulls, json!({})).await;
    assert_eq!(
        pulling["capabilities"]["diagnosticProvider"],
        json!({"identifier": "streetrace", "interFileDependencies": true, "workspaceDiagnostics": true})
    );
    let (_, no_refresh) = Client::start(json!({"textDocument": {"diagnostic": {}}}), json!({})).await;
    assert_eq!(no_refresh["capabilities"]["diagnosticProvider"], Value::Null);
    assert_eq!(capabilities["semanticTokensProvider"]["full"]["delta"], true);
    assert_eq!(capabilities["semanticTokensProvider"]["range"], true);
    assert_eq!(capabilities["renameProvider"]["prepareProvider"], true);
    for provider in
        ["hoverProvider", "definitionProvider", "referencesProvider", "callHierarchyProvider", "inlayHintProvider"]
    {
        assert_eq!(capabilities[provider], true, "{provider}");
    }

    let (_, result) = Client::start(json!({"general": {"positionEncodings": ["utf-8", "utf-16"]}}), json!({})).await;
    assert_eq!(result["capabilities"]["positionEncoding"], "utf-8");
}

#[tokio::test]
async fn diagnostics_follow_versions_and_clear_when_fixed() {
    let (mut client, _) = Client::start(json!({}), json!({})).await;
    client.open(MAIN, 1, "prompt p \"\"\"x\"\"\"\n").await;
    let published = client.diagnostics().await;
    assert_eq!(published["version"], 1);
    assert!(codes(&published).contains(&"E0007".to_string()), "{published}");

    client.replace(MAIN, 2, "prompt p: \"\"\"x\"\"\"\nagent:\n    instruction p\n").await;
    let published = client.diagnostics().await;
    assert_eq!(published["version"], 2);
    assert_eq!(published["diagnostics"], json!([]));

    // Duplicates carry the first definition as related information.
    client
        .replace(
            MAIN,
            3,
            "model m = a/b\nmodel m = a/c\nprompt p using model \"m\": \"\"\"x\"\"\"\nagent:\n    instruction p\n",
        )
        .await;
    let published = client.diagnostics().await;
    assert_eq!(published["version"], 3);
    let duplicate = &published["diagnostics"][0];
    assert_eq!(duplicate["code"], "E0003");
    assert_eq!(duplicate["range"], json!({"start": {"line": 1, "character": 6}, "end": {"line": 1, "character": 7}}));
    let related = &duplicate["relatedInformation"][0];
    assert_eq!(related["location"]["uri"], MAIN);
    assert_eq!(related["location"]["range"]["start"], json!({"line": 0, "character": 6}));

    client.notify("textDocument/didClose", json!({"textDocument": {"uri": MAIN}})).await;
    let published = client.diagnostics().await;
    assert_eq!(published["diagnostics"], json!([]));
}

/// A burst of edits, sent faster than the debounce, is published once, for the
/// last version; with no debounce, what is published follows the versions and
/// ends with the last.
#[tokio::test]
async fn a_burst_of_edits_publishes_the_last_version() {
    for debounce_ms in [0, 1_000] {
        let options = json!({"initializationOptions": {"streetrace": {"debounceMs": debounce_ms}}});
        let (mut client, _) = Client::start(json!({}), options).await;
        client.open(MAIN, 1, "prompt p: \"\"\"x\"\"\"\n").await;
        assert_eq!(client.diagnostics().await["version"], 1);
        for version in 2..=6 {
            client
                .replace(MAIN, version, &format!("prompt p: \"\"\"x\"\"\"\n{}", "x\n".repeat(version as usize)))
                .await;
        }
        let mut versions = Vec::new();
        while versions.last() != Some(&6) {
            let published = client.diagnostics().await;
            versions.push(published["version"].as_i64().unwrap());
            assert!(!codes(&published).is_empty(), "the lines of `x` are errors: {published}");
        }
        if debounce_ms > 0 {
            assert_eq!(versions, [6], "debounce {debounce_ms} ms");
        } else {
            assert!(versions.windows(2).all(|w| w[0] < w[1]), "{versions:?}");
        }
    }
}

#[tokio::test]
async fn configuration_switches_to_upstream_mode() {
    let (mut client, _) = Client::start(json!({}), json!({})).await;
    client.open(MAIN, 1, "prompt p: \"\"\"x\"\"\"\nprompt unused: \"\"\"y\"\"\"\nagent:\n    instruction p\n").await;
    assert_eq!(codes(&client.diagnostics().await), ["SR100"]);
    client
        .notify(
            "workspace/didChangeConfiguration",
            json!({"settings": {"streetrace": {"diagnostics": {"mode": "upstream"}}}}),
        )
        .await;
    assert_eq!(codes(&client.diagnostics().await), Vec::<String>::new());
}

const NAVIGATION: &str =
    "prompt p: \"\"\"x\"\"\"\nagent:\n    instruction p\nflow main:\n    $x = \"é🎉\"\n    $y = \"é🎉\" + $x\n";

#[tokio::test]
async fn navigation_in_utf16_and_utf8() {
    // The `x` of `$x` after "é🎉": 18 UTF-16 units, 21 UTF-8 bytes into the line.
    for (capabilities, character) in [(json!({}), 18), (json!({"general": {"positionEncodings": ["utf-8"]}}), 21)] {
        let (mut client, _) = Client::start(capabilities, json!({})).await;
        client.open(MAIN, 1, NAVIGATION).await;
        let definition = client.result("textDocument/definition", at(MAIN, 5, character)).await;
        assert_eq!(
            definition[0]["range"],
            json!({"start": {"line": 4, "character": 5}, "end": {"line": 4, "character": 6}})
        );
        let hover = client.result("textDocument/hover", at(MAIN, 5, character)).await;
        assert_eq!(
            hover["range"],
            json!({"start": {"line": 5, "character": character}, "end": {"line": 5, "character": character + 1}})
        );
        assert!(hover["contents"]["value"].as_str().unwrap().contains("first assigned in flow `main`"), "{hover}");
    }
}

#[tokio::test]
async fn rename_completion_references_and_formatting() {
    let (mut client, _) = Client::start(json!({}), json!({})).await;
    let text = "prompt greet: \"\"\"hi\"\"\"\nagent:\n    instruction greet\nflow main:\n    $r = call llm greet\n    log  $r\n";
    client.open(MAIN, 1, text).await;

    let prepare = client.result("textDocument/prepareRename", at(MAIN, 2, 17)).await;
    assert_eq!(prepare, json!({"start": {"line": 2, "character": 16}, "end": {"line": 2, "character": 21}}));
    let mut params = at(MAIN, 2, 16);
    params["newName"] = json!("welcome");
    let edit = client.result("textDocument/rename", params.clone()).await;
    assert_eq!(edit["changes"][MAIN].as_array().unwrap().len(), 3);
    params["newName"] = json!("log");
    let refused = client.request("textDocument/rename", params).await;
    assert_eq!(refused.error().unwrap().message, "'log' is a keyword");

    let mut params = at(MAIN, 0, 8);
    params["context"] = json!({"includeDeclaration": true});
    let references = client.result("textDocument/references", params).await;
    assert_eq!(references.as_array().unwrap().len(), 3);

    let completion = client.result("textDocument/completion", at(MAIN, 4, 18)).await;
    let labels: Vec<&str> = completion.as_array().unwrap().iter().map(|c| c["label"].as_str().unwrap()).collect();
    assert_eq!(labels, ["greet"]);

    let formatting = client
        .result(
            "textDocument/formatting",
            json!({"textDocument": {"uri": MAIN}, "options": {"tabSize": 4, "insertSpaces": true}}),
        )
        .await;
    assert_eq!(
        formatting,
        json!([{"range": {"start": {"line": 5, "character": 8}, "end": {"line": 5, "character": 9}}, "newText": ""}])
    );
}

#[tokio::test]
async fn changes_apply_in_wire_order_and_stale_answers_are_content_modified() {
    let (mut client, _) = Client::start(json!({}), json!({})).await;
    client.open(MAIN, 1, "flow main:\n    return 1\n").await;
    // Incremental edits, sent back to back, then a request: it sees all of them.
    for (version, line, text) in [(2, 1, "$a = 1\n    "), (3, 2, "$b = $a\n    ")] {
        let range = json!({"start": {"line": line, "character": 4}, "end": {"line": line, "character": 4}});
        let params = json!({"textDocument": {"uri": MAIN, "version": version}, "contentChanges": [{"range": range, "text": text}]});
        client.notify("textDocument/didChange", params).await;
    }
    let definition = client.result("textDocument/definition", at(MAIN, 2, 10)).await;
    assert_eq!(definition[0]["range"]["start"], json!({"line": 1, "character": 5}));

    // A request whose document changes before it answers loses the race.
    let request = client.build("textDocument/hover", at(MAIN, 2, 10));
    let pending = client.service.ready().await.unwrap().call(request);
    client.replace(MAIN, 9, "flow main:\n    return 2\n").await;
    let response = pending.await.unwrap().unwrap();
    assert_eq!(response.error().unwrap().code, sr_lsp::tower_lsp_server::jsonrpc::ErrorCode::ContentModified);

    // A cancelled request answers RequestCancelled.
    let request = client.build("textDocument/hover", at(MAIN, 1, 5));
    let id = request.id().cloned().unwrap();
    let pending = client.service.ready().await.unwrap().call(request);
    client.notify("$/cancelRequest", json!({"id": id})).await;
    let response = pending.await.unwrap().unwrap();
    assert_eq!(response.error().unwrap().code, sr_lsp::tower_lsp_server::jsonrpc::ErrorCode::RequestCancelled);
}

#[tokio::test]
async fn semantic_tokens_full_delta_and_range() {
    let (mut client, _) = Client::start(json!({}), json!({})).await;
    client.open(MAIN, 1, "flow main:\n    $x = 1\n").await;
    let full = client.result("textDocument/semanticTokens/full", json!({"textDocument": {"uri": MAIN}})).await;
    let data = full["data"].as_array().unwrap().clone();
    assert_eq!(data.len() % 5, 0);
    // `flow` keyword, `main` function declaration, `$` `x` variable, `=`, `1`.
    assert_eq!(
        &data[..10],
        &[json!(0), json!(0), json!(4), json!(0), json!(0), json!(0), json!(5), json!(4), json!(12), json!(1)]
    );

    client.replace(MAIN, 2, "flow main:\n    $x = 1\n    log $x\n").await;
    let params = json!({"textDocument": {"uri": MAIN}, "previousResultId": full["resultId"]});
    let delta = client.result("textDocument/semanticTokens/full/delta", params).await;
    let edits = delta["edits"].as_array().unwrap();
    assert_eq!(edits.len(), 1);
    assert_eq!(edits[0]["start"], json!(data.len()));
    assert_eq!(edits[0]["deleteCount"], 0);
    assert_ne!(delta["resultId"], full["resultId"]);

    let stale = json!({"textDocument": {"uri": MAIN}, "previousResultId": "nope"});
    assert!(client.result("textDocument/semanticTokens/full/delta", stale).await["data"].is_array());

    let range = json!({"textDocument": {"uri": MAIN}, "range": {"start": {"line": 2, "character": 0}, "end": {"line": 3, "character": 0}}});
    let ranged = client.result("textDocument/semanticTokens/range", range).await;
    assert_eq!(ranged["data"].as_array().unwrap().len(), 3 * 5);
}

#[tokio::test]
async fn workspace_folders_are_scanned_and_watched_files_reloaded() {
    let dir = std::env::temp_dir().join(format!("sr-lsp-ws-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join(".git")).unwrap();
    std::fs::write(dir.join("lib.sr"), "prompt shared_prompt: \"\"\"x\"\"\"\n").unwrap();
    std::fs::write(dir.join(".git/hidden.sr"), "prompt hidden_prompt: \"\"\"x\"\"\"\n").unwrap();
    let root = format!("file://{}", dir.display());
    let (mut client, _) = Client::start(json!({}), json!({"rootUri": root})).await;

    let symbols = client.result("workspace/symbol", json!({"query": "prompt"})).await;
    let names: Vec<&str> = symbols.as_array().unwrap().iter().map(|s| s["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["shared_prompt"]);

    std::fs::write(dir.join("lib.sr"), "prompt renamed_prompt: \"\"\"x\"\"\"\n").unwrap();
    let lib = format!("{root}/lib.sr");
    client.notify("workspace/didChangeWatchedFiles", json!({"changes": [{"uri": lib, "type": 2}]})).await;
    let symbols = client.result("workspace/symbol", json!({"query": "prompt"})).await;
    assert_eq!(symbols[0]["name"], "renamed_prompt");
    assert_eq!(symbols[0]["location"]["uri"], lib);

    client.notify("workspace/didChangeWatchedFiles", json!({"changes": [{"uri": lib, "type": 3}]})).await;
    assert_eq!(client.result("workspace/symbol", json!({"query": "prompt"})).await, json!([]));
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn malformed_notifications_and_unknown_documents_do_no_harm() {
    let (mut client, _) = Client::start(json!({}), json!({})).await;
    client.notify("textDocument/didChange", json!({"textDocument": 3})).await;
    client.notify("textDocument/didOpen", json!({"nonsense": true})).await;
    let hover = client.result("textDocument/hover", at("file:///nowhere.sr", 0, 0)).await;
    assert_eq!(hover, Value::Null);
    client.open(MAIN, 1, "flow main:\n    return 1\n").await;
    let symbols = client.result("textDocument/documentSymbol", json!({"textDocument": {"uri": MAIN}})).await;
    assert_eq!(symbols[0]["name"], "main");
    assert_eq!(client.request("shutdown", Value::Null).await.result(), Some(&Value::Null));
}
