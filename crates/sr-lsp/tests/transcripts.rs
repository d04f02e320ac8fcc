//! Stdio transcripts of the real `sr-lsp` binary for the features editors
//! reach through requests of their own: rename (versioned edits, conflicts,
//! refusals), `workspace/executeCommand`, auto-import (quick fix and
//! completion), snippets by client capability and pull diagnostics.

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

#[test]
fn execute_command_answers_graph_preview_launches_and_tries() {
    let mut server = start();
    let text = "prompt tone: \"\"\"Be brief.\"\"\"\nprompt ask: \"\"\"${tone} About ${topic}\"\"\"\nagent helper:\n    instruction ask\nflow main:\n    $topic = \"x\"\n    $r = run agent helper\nflow side:\n    log 1\n";
    open(&mut server, MAIN, 1, text);
    let execute = |command: &str, arguments: Value| json!({"command": command, "arguments": arguments});

    let graph = request(&mut server, 2, "workspace/executeCommand", execute("streetrace.showGraph", json!([MAIN])));
    assert_eq!(
        graph["result"],
        "flowchart LR\n    agent_helper[\"helper\"]\n    flow_main(\"main\")\n    flow_side(\"side\")\n    flow_main -->|run| agent_helper\n    classDef entry stroke-width:3px\n    class flow_main entry\n"
    );
    let preview =
        request(&mut server, 3, "workspace/executeCommand", execute("streetrace.previewPrompt", json!([MAIN, "ask"])));
    assert_eq!(preview["result"], "Be brief. About ${topic}");
    let missing =
        request(&mut server, 4, "workspace/executeCommand", execute("streetrace.previewPrompt", json!([MAIN, "nope"])));
    assert_eq!(missing["error"]["message"], "no prompt 'nope' with a body in /transcripts/main.sr");

    let lens = json!({"file": "/transcripts/main.sr", "target": "side", "entry": false});
    let run = request(&mut server, 5, "workspace/executeCommand", execute("streetrace.run", json!([lens])));
    assert_eq!(
        run["result"],
        json!({"command": "sr", "args": ["run", "/transcripts/main.sr", "--entry=side"], "cwd": "/transcripts"})
    );
    let debug = request(&mut server, 6, "workspace/executeCommand", execute("streetrace.debug", json!([lens])));
    assert_eq!(debug["result"]["adapter"], json!({"command": "sr", "args": ["dap"]}));
    assert_eq!(debug["result"]["configuration"]["program"], "/transcripts/main.sr");
    assert_eq!(debug["result"]["configuration"]["entry"], "side");
    let unknown = request(&mut server, 7, "workspace/executeCommand", execute("streetrace.nope", json!([])));
    assert_eq!(
        unknown["error"]["message"],
        "unknown command 'streetrace.nope'; this server runs streetrace.showGraph, streetrace.previewPrompt, streetrace.run, streetrace.debug, streetrace.try"
    );

    // A Try lens on each agent and prompt; its command is `sr try`'s line.
    let text = "prompt tone: \"\"\"Be brief.\"\"\"\nprompt ask: \"\"\"${tone} About ${topic}\"\"\"\nagent helper:\n    instruction tone\nflow main:\n    $topic = \"x\"\n    $r = call llm ask\n";
    open(&mut server, "file:///transcripts/try.sr", 1, text);
    let lenses = request(
        &mut server,
        8,
        "textDocument/codeLens",
        json!({"textDocument": {"uri": "file:///transcripts/try.sr"}}),
    );
    let tries: Vec<&Value> =
        lenses["result"].as_array().unwrap().iter().filter(|l| l["command"]["title"] == "Try").collect();
    let on: Vec<(u64, &Value)> =
        tries.iter().map(|l| (l["range"]["start"]["line"].as_u64().unwrap(), &l["command"]["arguments"][0])).collect();
    let lens = |item: &str, kind: &str| json!({"file": "/transcripts/try.sr", "item": item, "kind": kind});
    assert_eq!(on, [(0, &lens("tone", "prompt")), (1, &lens("ask", "prompt")), (2, &lens("helper", "agent"))]);
    let ask = json!([lens("ask", "prompt")]);
    let tried = request(&mut server, 9, "workspace/executeCommand", execute("streetrace.try", ask));
    assert_eq!(
        tried["result"],
        json!({"command": "sr", "args": ["try", "/transcripts/try.sr", "prompt:ask", "--format", "json"],
            "cwd": "/transcripts", "inputs": "/transcripts/ask.inputs.yaml", "reads": ["topic"], "values": {}})
    );
    // An agent reads its message and its instruction's variables (none here).
    let agent = request(
        &mut server,
        10,
        "workspace/executeCommand",
        execute("streetrace.try", json!([lens("helper", "agent")])),
    );
    assert_eq!(agent["result"]["reads"], json!(["input_prompt"]));
}

#[test]
fn advertised_commands_leave_out_the_clients_own_and_formatting_a_broken_file_says_why() {
    let options = json!({"streetrace": {"clientCommands": ["streetrace.run", "streetrace.debug"]}});
    let own = Server::start(json!({"capabilities": {}, "processId": null, "initializationOptions": options}));
    let commands = &own.initialized["result"]["capabilities"]["executeCommandProvider"]["commands"];
    assert_eq!(*commands, json!(["streetrace.showGraph", "streetrace.previewPrompt", "streetrace.try"]));
    let mut server = start();
    let commands = &server.initialized["result"]["capabilities"]["executeCommandProvider"]["commands"];
    assert_eq!(commands.as_array().unwrap().len(), 5);
    open(&mut server, MAIN, 1, "agent a:\n    instruction p\nflow main:\n    $x = (\n");
    let refused = request(
        &mut server,
        1,
        "textDocument/formatting",
        json!({
        "textDocument": {"uri": MAIN}, "options": {"tabSize": 4, "insertSpaces": true}}),
    );
    let message = refused["error"]["message"].as_str().unwrap();
    assert!(message.starts_with("cannot format a file with syntax errors: E0007"), "{message}");
    assert!(message.ends_with("(line 4)"), "{message}");
}

#[test]
fn auto_import_is_offered_as_a_quick_fix() {
    let mut server = start();
    open(
        &mut server,
        "file:///transcripts/lib/helpers.sr",
        1,
        "agent helper:\n    instruction q\nprompt q: \"\"\"x\"\"\"\n",
    );
    open(&mut server, MAIN, 4, "prompt p: \"\"\"x\"\"\"\nagent:\n    instruction p\n    delegate helper\n");
    let range = json!({"start": {"line": 3, "character": 13}, "end": {"line": 3, "character": 13}});
    let params = json!({"textDocument": {"uri": MAIN}, "range": range, "context": {"diagnostics": []}});
    let actions = request(&mut server, 1, "textDocument/codeAction", params);
    let first = &actions["result"][0];
    assert_eq!(first["title"], "Import 'helper' from ./lib/helpers.sr");
    let insert = json!({"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}},
        "newText": "import ./lib/helpers.sr\n"});
    assert_eq!(
        first["edit"]["documentChanges"],
        json!([{"textDocument": {"uri": MAIN, "version": 4}, "edits": [insert]}])
    );
    assert_eq!(actions["result"][1]["title"], "Create agent 'helper'");
}

#[test]
fn import_paths_are_document_links() {
    let mut server = start();
    open(&mut server, MAIN, 1, "import ./lib/helpers.sr\n");
    let links = request(&mut server, 1, "textDocument/documentLink", json!({"textDocument": {"uri": MAIN}}));
    assert_eq!(links["result"][0]["target"], "file:///transcripts/lib/helpers.sr");
    assert_eq!(
        links["result"][0]["range"],
        json!({"start": {"line": 0, "character": 7}, "end": {"line": 0, "character": 23}})
    );
}

#[test]
fn completion_of_a_name_from_another_file_adds_its_import() {
    let mut server = start();
    open(
        &mut server,
        "file:///transcripts/lib/helpers.sr",
        1,
        "agent helper:\n    instruction q\nprompt q: \"\"\"x\"\"\"\n",
    );
    open(&mut server, MAIN, 2, "streetrace v1\nflow main:\n    $x = run agent hel\n");
    let items = request(&mut server, 1, "textDocument/completion", at(MAIN, 2, 22));
    let expected = json!([{
        "label": "helper",
        "kind": 7,
        "detail": "agent (import ./lib/helpers.sr)",
        "sortText": "00000",
        "textEdit": {"range": {"start": {"line": 2, "character": 19}, "end": {"line": 2, "character": 22}}, "newText": "helper"},
        "additionalTextEdits": [{"range": {"start": {"line": 1, "character": 0}, "end": {"line": 1, "character": 0}},
            "newText": "import ./lib/helpers.sr\n"}],
    }]);
    assert_eq!(items["result"], expected);
}

#[test]
fn snippets_only_for_a_client_that_takes_them() {
    let text = "flow main:\n    lo\n";
    let mut plain = start();
    open(&mut plain, MAIN, 1, text);
    let items = request(&mut plain, 1, "textDocument/completion", at(MAIN, 1, 6));
    let kinds: Vec<(&str, i64)> = items["result"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| (i["label"].as_str().unwrap(), i["kind"].as_i64().unwrap()))
        .collect();
    assert_eq!(kinds, [("loop", 14), ("log", 14)]);

    let capabilities = json!({"textDocument": {"completion": {"completionItem": {"snippetSupport": true}}}});
    let mut server = Server::start(json!({"capabilities": capabilities, "processId": null}));
    open(&mut server, MAIN, 1, text);
    let items = request(&mut server, 1, "textDocument/completion", at(MAIN, 1, 6));
    let snippet = items["result"].as_array().unwrap().iter().find(|i| i["kind"] == 15).expect("a snippet item");
    assert_eq!(snippet["label"], "loop");
    assert_eq!(snippet["insertTextFormat"], 2);
    assert_eq!(snippet["insertTextMode"], 1);
    assert_eq!(snippet["textEdit"]["newText"], "loop max ${1:3} do\n        $0\n    end");
}
