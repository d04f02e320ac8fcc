//! Stdio transcripts of the real `sr-lsp` binary for #46 item 5: imports
//! follow renamed files (`workspace/willRenameFiles`), the refactors as code
//! actions (extract prompt, inline prompt, move item to file, refused with
//! `disabled` and a reason) and the references-count lens, resolved lazily.

#[allow(dead_code)] // `common` also serves the torture tests.
mod common;

use common::Server;
use serde_json::{Value, json};

const MAIN: &str = "file:///refactors/main.sr";
const LIB: &str = "file:///refactors/lib/prompts.sr";

const MAIN_TEXT: &str =
    "import ./lib/prompts.sr\nagent:\n    instruction write\nagent helper:\n    instruction write\n";
const LIB_TEXT: &str = "prompt write: \"\"\"Write. ${style}\"\"\"\nprompt style: \"\"\"Be brief.\"\"\"\n";

/// Both documents open at version 1 with `workspace_edit` as the client's
/// `workspace.workspaceEdit` capability.
fn start(workspace_edit: Value) -> Server {
    let capabilities = json!({"workspace": {"workspaceEdit": workspace_edit}});
    let mut server = Server::start(json!({"capabilities": capabilities, "processId": null}));
    for (uri, text) in [(MAIN, MAIN_TEXT), (LIB, LIB_TEXT)] {
        let document = json!({"uri": uri, "languageId": "streetrace", "version": 1, "text": text});
        server.send(&json!({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": document}}));
    }
    server
}

fn request(server: &mut Server, id: i64, method: &str, params: Value) -> Value {
    server.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
    let response = server.response(id);
    assert!(response.get("error").is_none(), "{method}: {response}");
    response["result"].clone()
}

fn range(start: (u32, u32), end: (u32, u32)) -> Value {
    json!({"start": {"line": start.0, "character": start.1}, "end": {"line": end.0, "character": end.1}})
}

fn code_actions(server: &mut Server, id: i64, uri: &str, at: Value) -> Vec<Value> {
    let params = json!({"textDocument": {"uri": uri}, "range": at, "context": {"diagnostics": []}});
    request(server, id, "textDocument/codeAction", params).as_array().cloned().unwrap_or_default()
}

#[test]
fn capabilities_offer_file_renames_refactors_and_lens_resolve() {
    let server = start(json!({"documentChanges": true}));
    let capabilities = &server.initialized["result"]["capabilities"];
    let filters = &capabilities["workspace"]["fileOperations"]["willRename"]["filters"];
    assert_eq!(filters[0]["pattern"], json!({"glob": "**/*.sr", "matches": "file"}));
    assert_eq!(filters[1]["pattern"], json!({"glob": "**", "matches": "folder"}));
    assert_eq!(capabilities["codeLensProvider"]["resolveProvider"], true);
    assert_eq!(
        capabilities["codeActionProvider"]["codeActionKinds"],
        json!(["quickfix", "refactor.extract", "refactor.inline", "refactor.move"])
    );
}

#[test]
fn renaming_a_file_rewrites_the_imports_that_name_it() {
    let mut server = start(json!({"documentChanges": true}));
    let params = json!({"files": [{"oldUri": LIB, "newUri": "file:///refactors/prompts.sr"}]});
    let edit = request(&mut server, 1, "workspace/willRenameFiles", params);
    assert_eq!(
        edit["documentChanges"],
        json!([{
            "textDocument": {"uri": MAIN, "version": 1},
            "edits": [{"range": range((0, 7), (0, 23)), "newText": "./prompts.sr"}],
        }])
    );
    // A file no import names needs no edit.
    let params = json!({"files": [{"oldUri": MAIN, "newUri": "file:///refactors/app.sr"}]});
    assert_eq!(request(&mut server, 2, "workspace/willRenameFiles", params), Value::Null);
}

#[test]
fn extract_and_inline_prompt_are_refactors_with_versioned_edits() {
    let mut server = start(json!({"documentChanges": true}));
    let actions = code_actions(&mut server, 1, LIB, range((0, 17), (0, 23)));
    let extract = actions.iter().find(|a| a["kind"] == "refactor.extract").expect("an extract action");
    assert_eq!(extract["title"], "Extract prompt 'write_part'");
    assert_eq!(
        extract["edit"]["documentChanges"][0]["edits"],
        json!([
            {"range": range((0, 17), (0, 23)), "newText": "${write_part}"},
            {"range": range((0, 35), (0, 35)), "newText": "\n\nprompt write_part: \"\"\"Write.\"\"\""},
        ])
    );
    let actions = code_actions(&mut server, 2, LIB, range((0, 27), (0, 27)));
    let inline = actions.iter().find(|a| a["kind"] == "refactor.inline").expect("an inline action");
    assert_eq!(inline["title"], "Inline prompt 'style'");
    assert_eq!(
        inline["edit"]["documentChanges"],
        json!([{
            "textDocument": {"uri": LIB, "version": 1},
            "edits": [
                {"range": range((0, 24), (0, 32)), "newText": "Be brief."},
                {"range": range((1, 0), (2, 0)), "newText": ""},
            ],
        }])
    );
    // `only` narrows the answer to the kinds asked for.
    let params = json!({"textDocument": {"uri": LIB}, "range": range((0, 27), (0, 27)),
        "context": {"diagnostics": [], "only": ["refactor.extract"]}});
    assert_eq!(request(&mut server, 3, "textDocument/codeAction", params), json!([]));
}

#[test]
fn moving_an_item_creates_its_file_only_for_a_client_that_creates_files() {
    let mut server = start(json!({"documentChanges": true, "resourceOperations": ["create"]}));
    let actions = code_actions(&mut server, 1, LIB, range((1, 8), (1, 8)));
    let moved = actions.iter().find(|a| a["kind"] == "refactor.move").expect("a move action");
    assert_eq!(moved["title"], "Move prompt 'style' to style.sr");
    let new_file = "file:///refactors/lib/style.sr";
    assert_eq!(
        moved["edit"]["documentChanges"],
        json!([
            {"kind": "create", "uri": new_file, "options": {"overwrite": false, "ignoreIfExists": false}},
            {"textDocument": {"uri": new_file, "version": null},
             "edits": [{"range": range((0, 0), (0, 0)), "newText": "prompt style: \"\"\"Be brief.\"\"\"\n"}]},
            {"textDocument": {"uri": LIB, "version": 1},
             "edits": [
                {"range": range((0, 0), (0, 0)), "newText": "import ./style.sr\n"},
                {"range": range((1, 0), (2, 0)), "newText": ""},
             ]},
        ])
    );
    // `write` uses `style`, which would stay: refused, saying why.
    let actions = code_actions(&mut server, 2, LIB, range((0, 8), (0, 8)));
    let refused = actions.iter().find(|a| a["kind"] == "refactor.move").expect("a refused move");
    assert_eq!(
        refused["disabled"]["reason"],
        "it uses prompt 'style', which stays in this file (the files would import each other)"
    );
    assert!(refused.get("edit").is_none(), "{refused}");

    let mut server = start(json!({"documentChanges": true}));
    let actions = code_actions(&mut server, 1, LIB, range((1, 8), (1, 8)));
    assert!(actions.iter().all(|a| a["kind"] != "refactor.move"), "{actions:?}");
}

#[test]
fn references_count_lens_is_resolved_when_shown() {
    let mut server = start(json!({"documentChanges": true}));
    let lenses = request(&mut server, 1, "textDocument/codeLens", json!({"textDocument": {"uri": LIB}}));
    let counts: Vec<&Value> = lenses.as_array().unwrap().iter().filter(|l| l["data"].is_object()).collect();
    assert_eq!(counts.len(), 2, "{lenses}");
    assert!(counts.iter().all(|l| l.get("command").is_none()), "{lenses}");
    let write = counts.iter().find(|l| l["range"] == range((0, 7), (0, 12))).expect("a lens on `write`");
    let resolved = request(&mut server, 2, "codeLens/resolve", (*write).clone());
    let position = json!({"line": 0, "character": 7});
    assert_eq!(
        resolved["command"],
        json!({
            "title": "2 references",
            "command": "streetrace.showReferences",
            "arguments": [LIB, position, [
                {"uri": MAIN, "range": range((2, 16), (2, 21))},
                {"uri": MAIN, "range": range((4, 16), (4, 21))},
            ]],
        })
    );
    // A lens that is no references count, or names a document the server
    // lacks, comes back as it was.
    for (id, lens) in [
        (3, json!({"range": range((0, 0), (0, 1)), "data": {"other": 1}})),
        (
            4,
            json!({"range": range((0, 0), (0, 1)), "data": {"references": {"uri": "file:///nowhere.sr", "position": position}}}),
        ),
    ] {
        assert_eq!(request(&mut server, id, "codeLens/resolve", lens.clone()), lens);
    }
}
