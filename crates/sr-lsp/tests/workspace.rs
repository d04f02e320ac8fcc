//! Workspace-wide diagnostics over stdio: pull (`textDocument/diagnostic`,
//! `workspace/diagnostic`) with result ids, pushes for closed files, and files
//! changed on disk (watched files, saves, the server's own polling).
#![allow(clippy::unwrap_used)]

#[allow(dead_code)] // `common` also serves the torture tests.
mod common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use common::Server;
use serde_json::{Value, json};

const BROKEN: &str = "prompt p \"\"\"x\"\"\"\n";
/// What `BROKEN` reports: no agent, an unused prompt, the missing `:`.
const BROKEN_CODES: [&str; 3] = ["E0013", "SR100", "E0007"];
const LIB: &str = "agent helper:\n    instruction q\nprompt q: \"\"\"x\"\"\"\n";
const MAIN: &str = "import ./lib.sr\nprompt p: \"\"\"x\"\"\"\nagent:\n    instruction p\n    delegate helper\n";
/// `lib.sr` without `helper`.
const LIB_RENAMED: &str = "prompt q: \"\"\"x\"\"\"\n";

/// A workspace folder on disk, removed at the end.
struct Folder(PathBuf);

impl Folder {
    fn new(name: &str, files: &[(&str, &str)]) -> Folder {
        let dir = std::env::temp_dir().join(format!("sr-lsp-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let folder = Folder(dir);
        files.iter().for_each(|(name, text)| folder.write(name, text));
        folder
    }

    fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }

    fn uri(&self, name: &str) -> String {
        format!("file://{}", self.path(name).display())
    }

    fn write(&self, name: &str, text: &str) {
        std::fs::write(self.path(name), text).unwrap();
    }
}

impl Drop for Folder {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn start(capabilities: Value, root: Option<&Path>) -> Server {
    let mut params = json!({
        "capabilities": capabilities,
        "processId": null,
        "initializationOptions": {"streetrace": {"debounceMs": 0}},
    });
    if let Some(root) = root {
        params["rootUri"] = json!(format!("file://{}", root.display()));
    }
    Server::start(params)
}

fn pull_capabilities() -> Value {
    json!({"textDocument": {"diagnostic": {}}, "workspace": {"diagnostics": {"refreshSupport": true}}})
}

fn watch_capabilities() -> Value {
    json!({"workspace": {"didChangeWatchedFiles": {"dynamicRegistration": true}}})
}

fn notify(server: &mut Server, method: &str, params: Value) {
    server.send(&json!({"jsonrpc": "2.0", "method": method, "params": params}));
}

fn request(server: &mut Server, id: i64, method: &str, params: Value) -> Value {
    server.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
    let response = server.response(id);
    assert!(response.get("error").is_none(), "{method}: {response}");
    response["result"].clone()
}

fn open(server: &mut Server, uri: &str, version: i32, text: &str) {
    let document = json!({"uri": uri, "languageId": "streetrace", "version": version, "text": text});
    notify(server, "textDocument/didOpen", json!({"textDocument": document}));
}

/// The next diagnostics published for `uri` that `matches`.
fn published(server: &mut Server, uri: &str, matches: impl Fn(&Value) -> bool) -> Value {
    let message = server.wait_for(|m| {
        m["method"] == "textDocument/publishDiagnostics" && m["params"]["uri"] == uri && matches(&m["params"])
    });
    message["params"].clone()
}

fn codes(diagnostics: &Value) -> Vec<&str> {
    diagnostics.as_array().unwrap().iter().map(|d| d["code"].as_str().unwrap()).collect()
}

/// `MAIN`'s diagnostics once `lib.sr` lost `helper`.
fn helper_is_missing(params: &Value) -> bool {
    let diagnostics = params["diagnostics"].as_array().unwrap();
    diagnostics.len() == 1
        && diagnostics[0]["message"].as_str().unwrap().starts_with("undefined reference to agent 'helper'")
}

#[test]
fn document_pulls_carry_result_ids_and_unchanged_reports() {
    let uri = "file:///pull/main.sr";
    let mut server = start(pull_capabilities(), None);
    open(&mut server, uri, 1, BROKEN);
    let document = json!({"uri": uri});
    let first = request(&mut server, 1, "textDocument/diagnostic", json!({"textDocument": document}));
    assert_eq!(first["kind"], "full");
    assert_eq!(codes(&first["items"]), BROKEN_CODES);
    let id = first["resultId"].as_str().unwrap().to_string();

    let again =
        request(&mut server, 2, "textDocument/diagnostic", json!({"textDocument": document, "previousResultId": id}));
    assert_eq!(again, json!({"kind": "unchanged", "resultId": id}));

    let fixed = "prompt p: \"\"\"x\"\"\"\nagent:\n    instruction p\n";
    let change = json!({"textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"text": fixed}]});
    notify(&mut server, "textDocument/didChange", change);
    let after =
        request(&mut server, 3, "textDocument/diagnostic", json!({"textDocument": document, "previousResultId": id}));
    assert_eq!(after["kind"], "full");
    assert_eq!(after["items"], json!([]));
    assert_ne!(after["resultId"], json!(id));

    // A client that pulls gets no pushes for its open documents.
    let pushed: Vec<Value> = server
        .drain(Duration::from_millis(500))
        .into_iter()
        .filter(|m| m["method"] == "textDocument/publishDiagnostics")
        .collect();
    assert_eq!(pushed, Vec::<Value>::new());
}

#[test]
fn workspace_pulls_cover_closed_files_and_honour_previous_ids() {
    let folder = Folder::new("ws-pull", &[("broken.sr", BROKEN), ("ok.sr", "flow main:\n    log 1\n")]);
    let (broken, ok) = (folder.uri("broken.sr"), folder.uri("ok.sr"));
    let mut server = start(pull_capabilities(), Some(&folder.0));
    open(&mut server, &ok, 3, "flow main:\n    log 2\n");

    let report = request(&mut server, 1, "workspace/diagnostic", json!({"previousResultIds": []}));
    let items = report["items"].as_array().unwrap();
    assert_eq!(items.len(), 2, "{report}");
    let item = |uri: &str| items.iter().find(|i| i["uri"] == uri).unwrap().clone();
    let (closed, open) = (item(&broken), item(&ok));
    assert_eq!((&closed["kind"], &closed["version"]), (&json!("full"), &Value::Null));
    assert_eq!(codes(&closed["items"]), BROKEN_CODES);
    assert_eq!((&open["kind"], &open["version"], &open["items"]), (&json!("full"), &json!(3), &json!([])));

    let previous: Vec<Value> = items.iter().map(|i| json!({"uri": i["uri"], "value": i["resultId"]})).collect();
    let again = request(&mut server, 2, "workspace/diagnostic", json!({"previousResultIds": previous}));
    let kinds: Vec<&Value> = again["items"].as_array().unwrap().iter().map(|i| &i["kind"]).collect();
    assert_eq!(kinds, [&json!("unchanged"), &json!("unchanged")], "{again}");

    // A deleted file gets an empty report.
    std::fs::remove_file(folder.path("broken.sr")).unwrap();
    notify(&mut server, "workspace/didChangeWatchedFiles", json!({"changes": [{"uri": broken, "type": 3}]}));
    // A change on disk: the client is asked to pull again.
    let refresh = server.wait_for(|m| m["method"] == "workspace/diagnostic/refresh");
    server.send(&json!({"jsonrpc": "2.0", "id": refresh["id"], "result": null}));
    let after = request(&mut server, 3, "workspace/diagnostic", json!({"previousResultIds": previous}));
    let items = after["items"].as_array().unwrap();
    let gone = items.iter().find(|i| i["uri"] == broken).unwrap();
    assert_eq!((&gone["kind"], &gone["items"]), (&json!("full"), &json!([])), "{after}");
    assert_eq!(items.iter().find(|i| i["uri"] == ok).unwrap()["kind"], "unchanged");
}

#[test]
fn closed_files_are_pushed_until_the_client_pulls_the_workspace() {
    let folder = Folder::new("ws-push", &[("broken.sr", BROKEN)]);
    let broken = folder.uri("broken.sr");
    let mut server = start(pull_capabilities(), Some(&folder.0));
    let pushed = published(&mut server, &broken, |p| !p["diagnostics"].as_array().unwrap().is_empty());
    assert_eq!(codes(&pushed["diagnostics"]), BROKEN_CODES);
    assert!(pushed.get("version").is_none(), "{pushed}");
    server.send(&json!({"jsonrpc": "2.0", "id": 1, "method": "workspace/diagnostic",
        "params": {"previousResultIds": []}}));
    // Withdrawn: the client has them from its pull now. The withdrawal may
    // come before or after the pull's answer.
    let (mut answered, mut withdrawn) = (false, false);
    while !(answered && withdrawn) {
        let message = server.wait_for(|_| true);
        if message["id"] == 1 {
            assert!(message.get("error").is_none(), "{message}");
            answered = true;
        }
        withdrawn |= message["method"] == "textDocument/publishDiagnostics"
            && message["params"]["uri"] == broken
            && message["params"]["diagnostics"] == json!([]);
    }
}

#[test]
fn closed_files_are_pushed_and_follow_open_close_and_delete() {
    let folder = Folder::new("ws-closed", &[("broken.sr", BROKEN)]);
    let broken = folder.uri("broken.sr");
    let mut server = start(watch_capabilities(), Some(&folder.0));
    let pushed = published(&mut server, &broken, |_| true);
    assert_eq!(codes(&pushed["diagnostics"]), BROKEN_CODES);
    assert!(pushed.get("version").is_none(), "{pushed}");

    open(&mut server, &broken, 1, "flow main:\n    log 1\n");
    published(&mut server, &broken, |p| p["version"] == 1 && p["diagnostics"] == json!([]));
    // Closed again: what is on disk.
    notify(&mut server, "textDocument/didClose", json!({"textDocument": {"uri": broken}}));
    let closed = published(&mut server, &broken, |p| p.get("version").is_none());
    assert_eq!(codes(&closed["diagnostics"]), BROKEN_CODES);

    std::fs::remove_file(folder.path("broken.sr")).unwrap();
    notify(&mut server, "workspace/didChangeWatchedFiles", json!({"changes": [{"uri": broken, "type": 3}]}));
    published(&mut server, &broken, |p| p["diagnostics"] == json!([]));
}

#[test]
fn a_watched_change_to_an_import_updates_the_open_importer() {
    let folder = Folder::new("ws-watch", &[("lib.sr", LIB), ("main.sr", MAIN)]);
    let (lib, main) = (folder.uri("lib.sr"), folder.uri("main.sr"));
    let mut server = start(watch_capabilities(), Some(&folder.0));
    let registration = server.wait_for(|m| m["method"] == "client/registerCapability");
    let watcher = &registration["params"]["registrations"][0];
    assert_eq!(watcher["method"], "workspace/didChangeWatchedFiles");
    assert_eq!(watcher["registerOptions"]["watchers"], json!([{"globPattern": "**/*.sr"}]));
    server.send(&json!({"jsonrpc": "2.0", "id": registration["id"], "result": null}));

    open(&mut server, &main, 1, MAIN);
    published(&mut server, &main, |p| p["version"] == 1 && p["diagnostics"] == json!([]));
    folder.write("lib.sr", LIB_RENAMED);
    notify(&mut server, "workspace/didChangeWatchedFiles", json!({"changes": [{"uri": lib, "type": 2}]}));
    published(&mut server, &main, helper_is_missing);
}

#[test]
fn a_save_rereads_the_closed_imports() {
    let folder = Folder::new("ws-save", &[("lib.sr", LIB), ("main.sr", MAIN)]);
    let main = folder.uri("main.sr");
    // The client watches files, so the server does not poll: only the save
    // can tell it that lib.sr changed.
    let mut server = start(watch_capabilities(), Some(&folder.0));
    open(&mut server, &main, 1, MAIN);
    published(&mut server, &main, |p| p["version"] == 1 && p["diagnostics"] == json!([]));
    folder.write("lib.sr", LIB_RENAMED);
    notify(&mut server, "textDocument/didSave", json!({"textDocument": {"uri": main}}));
    published(&mut server, &main, helper_is_missing);
}

/// An open document that imports a FIFO, a device and a symlink loop, in a
/// workspace folder that holds them: the scan and the imports refuse them
/// without blocking, the document's diagnostics say why each import cannot
/// be read, and the server goes on answering.
#[test]
fn imports_of_special_files_are_reported_not_waited_on() {
    let folder = Folder::new("ws-special", &[]);
    let status = std::process::Command::new("mkfifo").arg(folder.path("pipe.sr")).status().unwrap();
    assert!(status.success());
    std::os::unix::fs::symlink("/dev/zero", folder.path("zero.sr")).unwrap();
    std::os::unix::fs::symlink(folder.path("loop2.sr"), folder.path("loop.sr")).unwrap();
    std::os::unix::fs::symlink(folder.path("loop.sr"), folder.path("loop2.sr")).unwrap();
    let text = "import ./pipe.sr\nimport ./zero.sr\nimport ./loop.sr\nflow main:\n    log $nope\n";
    let main = folder.uri("main.sr");
    let mut server = start(json!({}), Some(&folder.0));
    open(&mut server, &main, 1, text);
    let params = published(&mut server, &main, |p| p["diagnostics"].as_array().is_some_and(|d| d.len() == 4));
    let messages: Vec<&str> =
        params["diagnostics"].as_array().unwrap().iter().map(|d| d["message"].as_str().unwrap()).collect();
    assert_eq!(
        messages,
        [
            "cannot read ./pipe.sr: a FIFO (named pipe), not a regular file",
            "cannot read ./zero.sr: a device, not a regular file",
            "cannot read ./loop.sr: too many levels of symbolic links (a symlink loop)",
            "undefined variable '$nope'",
        ]
    );
    let symbols = request(&mut server, 1, "textDocument/documentSymbol", json!({"textDocument": {"uri": main}}));
    assert_eq!(symbols.as_array().map(Vec::len), Some(4), "{symbols}");
}

#[test]
fn without_client_watching_the_server_polls_the_disk() {
    let folder = Folder::new("ws-poll", &[("lib.sr", LIB), ("main.sr", MAIN)]);
    let main = folder.uri("main.sr");
    let mut server = start(json!({}), Some(&folder.0));
    open(&mut server, &main, 1, MAIN);
    published(&mut server, &main, |p| p["version"] == 1 && p["diagnostics"] == json!([]));
    let started = std::time::Instant::now();
    folder.write("lib.sr", LIB_RENAMED);
    published(&mut server, &main, helper_is_missing);
    eprintln!("a change on disk reached the importer's diagnostics in {:?}", started.elapsed());

    // A new file is found by the walk of the workspace folder.
    folder.write("new.sr", BROKEN);
    let pushed = published(&mut server, &folder.uri("new.sr"), |_| true);
    assert_eq!(codes(&pushed["diagnostics"]), BROKEN_CODES);
    eprintln!("a new file's diagnostics were pushed after {:?}", started.elapsed());
}

/// A watcher reports every `.sr` file; one the workspace scan would skip (an
/// ignored directory, a hidden one) is not loaded, a new one elsewhere is.
#[test]
fn watched_files_follow_the_workspace_ignore_rules() {
    let folder = Folder::new("ws-ignore", &[(".gitignore", "generated/\n"), ("ok.sr", "flow main:\n    log 1\n")]);
    let mut server = start(pull_capabilities(), Some(&folder.0));
    for dir in ["generated", ".cache", "fresh"] {
        std::fs::create_dir_all(folder.path(dir)).unwrap();
        folder.write(&format!("{dir}/broken.sr"), BROKEN);
    }
    let changes: Vec<Value> = ["generated", ".cache", "fresh"]
        .iter()
        .map(|d| json!({"uri": folder.uri(&format!("{d}/broken.sr")), "type": 1}))
        .collect();
    notify(&mut server, "workspace/didChangeWatchedFiles", json!({"changes": changes}));
    let refresh = server.wait_for(|m| m["method"] == "workspace/diagnostic/refresh");
    server.send(&json!({"jsonrpc": "2.0", "id": refresh["id"], "result": null}));
    let report = request(&mut server, 1, "workspace/diagnostic", json!({"previousResultIds": []}));
    let mut uris: Vec<&str> = report["items"].as_array().unwrap().iter().map(|i| i["uri"].as_str().unwrap()).collect();
    uris.sort();
    assert_eq!(uris, [folder.uri("fresh/broken.sr"), folder.uri("ok.sr")], "{report}");
}

/// A client that pulls but cannot be asked to pull again (Neovim 0.11):
/// offered no pull, it is pushed every open document's diagnostics, and a
/// change to a file an open document imports reaches that document. The
/// transcript is each message the client needs, in order.
#[test]
fn a_client_that_pulls_without_refresh_is_pushed_and_never_stale() {
    const PROMPTS: &str = "prompt greet: \"\"\"Greet ${target}.\"\"\"\nprompt bye: \"\"\"Bye.\"\"\"\n";
    const MAIN: &str = "import ./prompts.sr\nmodel main = anthropic/claude\nflow main:\n    $target = \"world\"\n    $r = call llm greet\n    return $r\n";
    let folder = Folder::new("pull-no-refresh", &[("prompts.sr", PROMPTS), ("main.sr", MAIN)]);
    let (main, prompts) = (folder.uri("main.sr"), folder.uri("prompts.sr"));
    let mut server = start(json!({"textDocument": {"diagnostic": {}}}), Some(&folder.0));
    let mut transcript = vec![format!(
        "initialize: diagnosticProvider {}",
        server.initialized["capabilities"].get("diagnosticProvider").unwrap_or(&Value::Null)
    )];
    let mut step = |server: &mut Server, uri: &str, matches: &dyn Fn(&Value) -> bool| {
        let params = published(server, uri, matches);
        let messages: Vec<&str> =
            params["diagnostics"].as_array().unwrap().iter().map(|d| d["message"].as_str().unwrap()).collect();
        let name = uri.rsplit('/').next().unwrap();
        transcript.push(format!("publish {name} v{}: {messages:?}", params["version"]));
    };
    open(&mut server, &main, 1, MAIN);
    step(&mut server, &main, &|p| p["version"] == 1);
    open(&mut server, &prompts, 1, PROMPTS);
    // The imported file sees `$target`, which main.sr assigns.
    step(&mut server, &prompts, &|p| p["version"] == 1);
    // prompts.sr drops `greet`, which main.sr calls; main.sr is not edited.
    let change = json!({"textDocument": {"uri": prompts, "version": 2},
        "contentChanges": [{"text": "prompt bye: \"\"\"Bye.\"\"\"\n"}]});
    notify(&mut server, "textDocument/didChange", change);
    step(&mut server, &main, &|p| !p["diagnostics"].as_array().unwrap().is_empty());
    // And back: the error goes.
    let change = json!({"textDocument": {"uri": prompts, "version": 3}, "contentChanges": [{"text": PROMPTS}]});
    notify(&mut server, "textDocument/didChange", change);
    step(&mut server, &main, &|p| p["diagnostics"].as_array().unwrap().is_empty());
    expect_test::expect![[r#"
        initialize: diagnosticProvider null
        publish main.sr v1: []
        publish prompts.sr v1: []
        publish main.sr v1: ["undefined reference to prompt 'greet'\nhelp: defined prompts are: bye"]
        publish main.sr v1: []"#]]
    .assert_eq(&transcript.join("\n"));
}

/// A server on `folder` that traces verbosely: after each batch of
/// diagnostics it logs (`$/logTrace`) the paths of the files it checked.
fn start_traced(folder: &Folder) -> Server {
    Server::start(json!({
        "capabilities": {},
        "processId": null,
        "rootUri": format!("file://{}", folder.0.display()),
        "trace": "verbose",
        "initializationOptions": {"streetrace": {"debounceMs": 0}},
    }))
}

/// Waits for the message that `matches`, returning every message read until then.
fn messages_until(server: &mut Server, matches: impl Fn(&Value) -> bool) -> Vec<Value> {
    let seen = std::cell::RefCell::new(Vec::new());
    server.wait_for(|m| {
        seen.borrow_mut().push(m.clone());
        matches(m)
    });
    seen.into_inner()
}

/// The file names the traces among `messages` say were checked, sorted.
fn checked(messages: &[Value]) -> Vec<String> {
    let mut names: Vec<String> = messages
        .iter()
        .filter(|m| m["method"] == "$/logTrace")
        .flat_map(|m| m["params"]["verbose"].as_str().unwrap().lines().map(str::to_string).collect::<Vec<_>>())
        .map(|path| path.rsplit('/').next().unwrap().to_string())
        .collect();
    names.sort();
    names
}

fn edit(server: &mut Server, uri: &str, version: i32, text: &str) {
    let change = json!({"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": text}]});
    notify(server, "textDocument/didChange", change);
}

/// An edit checks only the files of the programs that include the edited
/// file: the closed file that imports it is checked and re-published, the
/// unrelated closed file (with diagnostics of its own) is not looked at.
#[test]
fn an_edit_checks_only_the_programs_that_include_it() {
    let folder = Folder::new("ws-scope", &[("lib.sr", LIB), ("main.sr", MAIN), ("other.sr", BROKEN)]);
    let (lib, main, other) = (folder.uri("lib.sr"), folder.uri("main.sr"), folder.uri("other.sr"));
    let mut server = start_traced(&folder);
    open(&mut server, &lib, 1, LIB);
    let mut before = messages_until(&mut server, |m| {
        m["method"] == "textDocument/publishDiagnostics" && m["params"]["uri"] == other
    });
    if !before.iter().any(|m| m["params"]["uri"] == lib && m["params"]["version"] == 1) {
        before.extend(messages_until(&mut server, |m| m["params"]["uri"] == lib && m["params"]["version"] == 1));
    }
    before.extend(server.drain(Duration::from_millis(500)));
    assert!(checked(&before).contains(&"other.sr".to_string()), "{before:?}");

    edit(&mut server, &lib, 2, LIB_RENAMED);
    let mut after = messages_until(&mut server, |m| {
        m["method"] == "textDocument/publishDiagnostics"
            && m["params"]["uri"] == main
            && helper_is_missing(&m["params"])
    });
    after.extend(server.drain(Duration::from_millis(500)));
    assert_eq!(checked(&after), ["lib.sr", "main.sr"], "{after:?}");
    let published: Vec<&Value> = after
        .iter()
        .filter(|m| m["method"] == "textDocument/publishDiagnostics")
        .map(|m| &m["params"]["uri"])
        .collect();
    assert!(!published.contains(&&json!(other)), "{after:?}");
    assert!(published.contains(&&json!(lib)), "{after:?}");
}

/// An edit that drops an import makes the closed file it imported a program
/// of its own again, judged alone; putting the import back judges it with
/// its importer again.
#[test]
fn a_file_an_edit_stops_importing_is_judged_alone_again() {
    const PROMPTS: &str = "prompt greet: \"\"\"Greet ${target}.\"\"\"\n";
    const MAIN: &str = "import ./prompts.sr\nmodel main = anthropic/claude\nflow main:\n    $target = \"world\"\n    $r = call llm greet\n    return $r\n";
    let folder = Folder::new("ws-unimport", &[("prompts.sr", PROMPTS), ("main.sr", MAIN)]);
    let (main, prompts) = (folder.uri("main.sr"), folder.uri("prompts.sr"));
    let mut server = start_traced(&folder);
    let mut transcript = Vec::new();
    let mut step = |server: &mut Server, matches: &dyn Fn(&Value) -> bool| {
        let messages = messages_until(server, |m| {
            m["method"] == "textDocument/publishDiagnostics" && m["params"]["uri"] == prompts && matches(&m["params"])
        });
        let last = &messages.last().unwrap()["params"]["diagnostics"];
        let texts: Vec<&str> = last.as_array().unwrap().iter().map(|d| d["message"].as_str().unwrap()).collect();
        transcript.push(format!("prompts.sr: {texts:?}"));
    };
    open(&mut server, &main, 1, MAIN);
    step(&mut server, &|p| p["diagnostics"] == json!([]));
    edit(&mut server, &main, 2, MAIN.strip_prefix("import ./prompts.sr\n").unwrap());
    step(&mut server, &|p| p["diagnostics"] != json!([]));
    edit(&mut server, &main, 3, MAIN);
    step(&mut server, &|p| p["diagnostics"] == json!([]));
    expect_test::expect![[r#"
        prompts.sr: []
        prompts.sr: ["prompt 'greet' is never used\nhelp: remove it, or refer to it from an agent or a flow", "prompt 'greet' references undefined variable '$target'"]
        prompts.sr: []"#]].assert_eq(&transcript.join("\n"));
}
