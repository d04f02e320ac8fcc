//! Stdio transcripts of the real `sr-lsp` binary for the features beside
//! rust-analyzer's (#35 item 5): signature help, type definition, references
//! and rename of schema fields, inlay type hints, the preferred quick fix and
//! hover on builtin tools, across two open documents where one imports the
//! other.

#[allow(dead_code)] // `common` also serves the torture tests.
mod common;

use common::Server;
use serde_json::{Value, json};

const TYPES: &str = "file:///features/types.sr";
const MAIN: &str = "file:///features/main.sr";

const TYPES_TEXT: &str = "schema Finding:\n    note: string\nprompt one expecting Finding: \"\"\"One.\"\"\"\nagent reviewer:\n    instruction one\ntool fs = builtin streetrace.fs\n";

/// Both documents open (`types` at version 3, `main` at 1, with `text`);
/// UTF-16 positions (the default); versioned workspace edits.
fn start(main: &str) -> Server {
    let capabilities = json!({"workspace": {"workspaceEdit": {"documentChanges": true}}});
    let mut server = Server::start(json!({"capabilities": capabilities, "processId": null}));
    for (uri, version, text) in [(TYPES, 3, TYPES_TEXT), (MAIN, 1, main)] {
        let document = json!({"uri": uri, "languageId": "streetrace", "version": version, "text": text});
        server.send(&json!({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": document}}));
    }
    server
}

fn request(server: &mut Server, id: i64, method: &str, params: Value) -> Value {
    let response = respond(server, id, method, params);
    assert!(response.get("error").is_none(), "{method}: {response}");
    response["result"].clone()
}

fn respond(server: &mut Server, id: i64, method: &str, params: Value) -> Value {
    server.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
    server.response(id)
}

fn at(uri: &str, line: u32, character: u32) -> Value {
    json!({"textDocument": {"uri": uri}, "position": {"line": line, "character": character}})
}

fn range(start: (u32, u32), end: (u32, u32)) -> Value {
    json!({"start": {"line": start.0, "character": start.1}, "end": {"line": end.0, "character": end.1}})
}

#[test]
fn capabilities_offer_signature_help_on_parentheses_and_commas_and_type_definition() {
    let server = start("");
    let capabilities = &server.initialized["result"]["capabilities"];
    assert_eq!(capabilities["signatureHelpProvider"]["triggerCharacters"], json!(["(", ","]));
    assert_eq!(capabilities["typeDefinitionProvider"], true);
}

#[test]
fn signature_help_of_a_tool_function_with_the_active_parameter() {
    // `é` before the call: the cursor's column is in UTF-16 units (34, 35 bytes).
    let main = "import ./types.sr\nflow main:\n    $x = \"é\" + fs.write_file(\"a\", \n";
    let mut server = start(main);
    let help = request(&mut server, 1, "textDocument/signatureHelp", at(MAIN, 2, 34));
    assert_eq!(
        help,
        json!({
            "signatures": [{
                "label": "fs.write_file(path, content?)",
                "documentation": {"kind": "markdown", "value": "Write text to a file, replacing its contents and creating missing directories.\n\n**gives** the message `wrote N bytes`"},
                "parameters": [
                    {"label": [14, 18], "documentation": {"kind": "markdown", "value": "Path relative to the working directory."}},
                    {"label": [20, 28], "documentation": {"kind": "markdown", "value": "The text to write."}},
                ],
                "activeParameter": 1,
            }],
            "activeSignature": 0,
            "activeParameter": 1,
        })
    );
    // Outside any call: no help, and no error.
    assert_eq!(request(&mut server, 2, "textDocument/signatureHelp", at(MAIN, 1, 2)), Value::Null);
}

#[test]
fn type_definition_of_an_agents_result_in_the_imported_file() {
    let main = "import ./types.sr\nflow main:\n    $f = run agent reviewer\n    log $f.note\n";
    let mut server = start(main);
    let target = request(&mut server, 1, "textDocument/typeDefinition", at(MAIN, 3, 9));
    assert_eq!(target, json!([{"uri": TYPES, "range": range((0, 7), (0, 14))}]));
    // `$f.note` is a string: no schema to go to.
    assert_eq!(request(&mut server, 2, "textDocument/typeDefinition", at(MAIN, 3, 12)), Value::Null);
}

#[test]
fn inlay_type_hints_inside_the_requested_range() {
    let main = "import ./types.sr\nflow main:\n    $a = run agent reviewer\n    $b = run agent reviewer\n";
    let mut server = start(main);
    let params = json!({"textDocument": {"uri": MAIN}, "range": range((3, 0), (4, 0))});
    let hints = request(&mut server, 1, "textDocument/inlayHint", params);
    assert_eq!(
        hints,
        json!([{
            "position": {"line": 3, "character": 6},
            "label": ": Finding",
            "kind": 1,
            "tooltip": "`$b` holds `Finding` wherever the program assigns it",
            "paddingLeft": false,
        }])
    );
}

#[test]
fn the_one_did_you_mean_is_the_preferred_quick_fix() {
    let main = "import ./types.sr\nflow main:\n    $f = run agent reviewr\n";
    let mut server = start(main);
    let params =
        json!({"textDocument": {"uri": MAIN}, "range": range((2, 19), (2, 19)), "context": {"diagnostics": []}});
    let actions = request(&mut server, 1, "textDocument/codeAction", params);
    let titles: Vec<(&str, bool)> = actions
        .as_array()
        .unwrap()
        .iter()
        .map(|a| (a["title"].as_str().unwrap(), a["isPreferred"].as_bool().unwrap_or(false)))
        .collect();
    assert_eq!(titles, [("Change to 'reviewer'", true), ("Create agent 'reviewr'", false)]);
    // Absent, not `false`, on the others.
    assert!(actions[1].get("isPreferred").is_none(), "{actions}");
}

#[test]
fn hover_on_a_builtin_tool_lists_its_functions() {
    let main =
        "import ./types.sr\nprompt p: \"\"\"x\"\"\"\nagent a:\n    instruction p\n    tools fs, streetrace.cli\n";
    let mut server = start(main);
    let hover = request(&mut server, 1, "textDocument/hover", at(MAIN, 4, 11));
    let text = hover["contents"]["value"].as_str().unwrap();
    assert!(text.contains("- `write_file(path, content?)`: Write text to a file"), "{text}");
    assert!(text.contains("  - `content` (optional): The text to write."), "{text}");
    let hover = request(&mut server, 2, "textDocument/hover", at(MAIN, 4, 16));
    let text = hover["contents"]["value"].as_str().unwrap();
    assert!(text.contains("- `execute_cli_command(command)`"), "{text}");
}

#[test]
fn references_and_rename_of_a_schema_field_across_files() {
    let main =
        "import ./types.sr\nflow main:\n    $f = run agent reviewer\n    log \"${f.note}\"\n    $f.note = \"x\"\n";
    let mut server = start(main);
    let mut params = at(MAIN, 3, 14);
    params["context"] = json!({"includeDeclaration": true});
    let references = request(&mut server, 1, "textDocument/references", params);
    assert_eq!(
        references,
        json!([
            {"uri": MAIN, "range": range((3, 13), (3, 17))},
            {"uri": MAIN, "range": range((4, 7), (4, 11))},
            {"uri": TYPES, "range": range((1, 4), (1, 8))},
        ])
    );
    let prepared = request(&mut server, 2, "textDocument/prepareRename", at(TYPES, 1, 5));
    assert_eq!(prepared, range((1, 4), (1, 8)));

    let mut params = at(TYPES, 1, 5);
    params["newName"] = json!("remark");
    let edit = request(&mut server, 3, "textDocument/rename", params.clone());
    let edit_of = |uri: &str, version: i64, ranges: &[Value]| {
        let edits: Vec<Value> = ranges.iter().map(|r| json!({"range": r, "newText": "remark"})).collect();
        json!({"textDocument": {"uri": uri, "version": version}, "edits": edits})
    };
    assert_eq!(
        edit["documentChanges"],
        json!([
            edit_of(MAIN, 1, &[range((3, 13), (3, 17)), range((4, 7), (4, 11))]),
            edit_of(TYPES, 3, &[range((1, 4), (1, 8))]),
        ])
    );
    // A second field named `note` would merge into one JSON key.
    let text = "schema Finding:\n    note: string\n    remark: string\n";
    let document = json!({"uri": "file:///features/taken.sr", "languageId": "streetrace", "version": 1, "text": text});
    server.send(&json!({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": document}}));
    let mut params = at("file:///features/taken.sr", 1, 5);
    params["newName"] = json!("remark");
    let refused = respond(&mut server, 4, "textDocument/rename", params);
    assert_eq!(
        refused["error"]["message"], "'remark' is already a field of schema 'Finding' (/features/taken.sr:1)",
        "{refused}"
    );
}
