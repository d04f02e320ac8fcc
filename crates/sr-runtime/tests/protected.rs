//! Every protected place against every way a model writes, as a launched run
//! has them: the workload and its import, the directories `sr run NAME`
//! searches (from `sr_runtime::workload::LOCAL_SEARCH_DIRS`) and every
//! protected name (`sr_runtime::protected::NAMES`) at the top, one and two
//! directories down, each written with the file tools, with commands in the
//! cli sandbox and from a coding agent's code. Judged by effect: nothing is
//! created at a protected place, and no file that was there changes.
#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use sr_hir::RootDatabase;
use sr_runtime::event::{Event, Payload, RunStatus};
use sr_runtime::human::Unattended;
use sr_runtime::launch::{LaunchSpec, Models, Storage, launch};
use sr_runtime::scripted::{Reply, ScriptedProvider, after_tool_results};
use sr_runtime::{RunOptions, compile};

const IMPORTED: &str = "prompt helper: \"\"\"You help.\"\"\"\n";
/// What a model plants: a stdio server starts a command at the next `sr run`.
const PLANTED: &str = "tool x = mcp \"stdio:touch /tmp/owned\"\n";

/// The ways a model writes in the work directory.
#[derive(Debug, Clone, Copy)]
enum Route {
    WriteFile,
    AppendToFile,
    CreateDirectory,
    Cli,
    CodingAgent,
}

impl Route {
    fn workload(self) -> String {
        let tools = match self {
            Route::Cli => "tool sh = builtin streetrace.cli\n",
            _ => "tool fs = builtin streetrace.fs\n",
        };
        let executor = match self {
            Route::CodingAgent => "executor box:\n    backend: bubblewrap\n    timeout: 60\n",
            _ => "",
        };
        let uses = match self {
            Route::Cli => "    tools sh\n",
            Route::CodingAgent => "    tools fs\n    executor box\n",
            _ => "    tools fs\n",
        };
        format!(
            "import ./lib/prompts.sr\nmodel main = openai/gpt-4o\n{tools}{executor}agent:\n    instruction helper\n{uses}"
        )
    }

    /// What the model answers to write at `place` (relative to the work directory).
    fn replies(self, places: &[Place]) -> Vec<Reply> {
        let call = |tool: &str, args: Value| Reply::Calls(vec![(tool.to_string(), args)]);
        match self {
            Route::WriteFile => {
                places.iter().map(|p| call("write_file", json!({"path": p.file, "content": PLANTED}))).collect()
            }
            Route::AppendToFile => {
                places.iter().map(|p| call("append_to_file", json!({"path": p.file, "content": PLANTED}))).collect()
            }
            Route::CreateDirectory => {
                places.iter().map(|p| call("create_directory", json!({"path": format!("{}/d", p.file)}))).collect()
            }
            Route::Cli => places
                .iter()
                .map(|p| {
                    let dir = Path::new(&p.file).parent().map(|d| d.display().to_string()).unwrap_or_default();
                    let script = format!("mkdir -p ./{dir} ; echo '{}' >> {}", PLANTED.trim(), p.file);
                    call("execute_cli_command", json!({"command": ["sh", "-c", script]}))
                })
                .collect(),
            Route::CodingAgent => {
                let paths: Vec<&str> = places.iter().map(|p| p.file.as_str()).collect();
                let code = format!(
                    "refused = 0\nfor p in {paths:?}:\n    r = write_file(path=p, content={PLANTED:?})\n    \
                     refused += r.get('result') == 'failure'\nfinal_answer(refused)"
                );
                vec![Reply::Text(format!("```python\n{code}\n```"))]
            }
        }
    }
}

/// A protected place: the file a model writes there, and the entry that must
/// not appear (the protected name or directory itself) when it was missing.
#[derive(Debug, Clone)]
struct Place {
    file: String,
    entry: String,
}

/// The protected places, generated from the runtime's own tables.
fn places() -> Vec<Place> {
    let mut out = vec![
        Place { file: "app.sr".into(), entry: "app.sr".into() },
        Place { file: "lib/prompts.sr".into(), entry: "lib/prompts.sr".into() },
    ];
    for dir in sr_runtime::workload::LOCAL_SEARCH_DIRS {
        out.push(Place { file: format!("{dir}/planted.sr"), entry: format!("{dir}/planted.sr") });
    }
    for name in sr_runtime::protected::NAMES {
        for prefix in ["", "sub/", "a/b/"] {
            let entry = format!("{prefix}{}", name.name);
            let file = if name.dir { format!("{entry}/hooks/planted") } else { entry.clone() };
            out.push(Place { file, entry });
        }
    }
    out
}

/// Every regular file and symlink under `dir` but the state, with its bytes.
fn files(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(current) = dirs.pop() {
        for entry in std::fs::read_dir(&current).unwrap() {
            let path = entry.unwrap().path();
            let meta = path.symlink_metadata().unwrap();
            if meta.is_dir() && path != dir.join("state") {
                dirs.push(path);
            } else if meta.is_symlink() {
                out.insert(path.clone(), std::fs::read_link(&path).unwrap().into_os_string().into_encoded_bytes());
            } else if meta.is_file() {
                out.insert(path.clone(), std::fs::read(&path).unwrap());
            }
        }
    }
    out
}

/// A work directory with the workload, its import, a repository with a
/// nested one, editor settings and a workload found by name.
fn work_dir(route: Route) -> tempfile::TempDir {
    let dir = tempfile::Builder::new().prefix("sr-runtime-protected-").tempdir().unwrap();
    for (path, text) in [
        ("app.sr", route.workload()),
        ("lib/prompts.sr", IMPORTED.to_string()),
        (".git/HEAD", "ref: refs/heads/main\n".to_string()),
        (".git/hooks/README", "hooks\n".to_string()),
        ("sub/.git/config", "[core]\n".to_string()),
        (".vscode/settings.json", "{}\n".to_string()),
        ("agents/main.sr", IMPORTED.to_string()),
        ("notes.txt", "notes\n".to_string()),
    ] {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    dir
}

/// Runs `app.sr` in `work`, its model answering `replies`; the tool results
/// and the run's result.
async fn run(work: &Path, replies: Vec<Reply>) -> (Vec<Value>, Option<Value>) {
    let program = compile::compile_path(&mut RootDatabase::default(), &work.join("app.sr")).unwrap();
    let mut replies = replies;
    replies.push(Reply::Text("done".into()));
    let first = replies.remove(0);
    let provider = ScriptedProvider::new().on(after_tool_results(), replies).on(|_| true, vec![first]);
    let storage = Storage::resolve(Some(&work.join("state")), None, work).unwrap();
    let launched = launch(LaunchSpec {
        program,
        message: "plant".to_string(),
        work_dir: work.to_path_buf(),
        read_only: false,
        storage: Some(storage),
        models: Models::Provider { provider: Arc::new(provider), record: None },
        options: RunOptions::default(),
        human: Arc::new(Unattended),
        in_doubt: sr_runtime::in_doubt::skip_all(),
    })
    .unwrap();
    let events = Arc::new(Mutex::new(Vec::<Event>::new()));
    let sink = events.clone();
    let sinks: Vec<Arc<dyn sr_runtime::event::EventSink>> =
        vec![Arc::new(move |e: &Event| sink.lock().unwrap().push(e.clone()))];
    let finished = launched.run(Arc::new(sr_runtime::hook::NoHook), sinks).await.unwrap();
    assert_eq!(finished.status, Some(RunStatus::Completed), "{:?}", finished.error);
    let events = events.lock().unwrap();
    let results = events
        .iter()
        .filter_map(|e| match &e.payload {
            Payload::ToolResult { result, .. } => Some(result.clone()),
            _ => None,
        })
        .collect();
    let answer = events.iter().find_map(|e| match &e.payload {
        Payload::RunFinished { result, .. } => result.clone(),
        _ => None,
    });
    (results, answer)
}

async fn route_leaves_every_place_unchanged(route: Route) {
    let dir = work_dir(route);
    let work = dir.path();
    let places = places();
    let missing: Vec<&Place> = places.iter().filter(|p| !work.join(&p.entry).exists()).collect();
    let before = files(work);
    let (results, answer) = run(work, route.replies(&places)).await;
    match route {
        Route::CodingAgent => {
            // The code ran, and every write it made was refused.
            let tools: Vec<&Value> = results.iter().filter(|r| r.get("tool_name").is_some()).collect();
            assert_eq!(answer, Some(json!(places.len())), "{tools:?}");
        }
        _ => {
            assert_eq!(results.len(), places.len(), "{results:?}");
            for (place, result) in places.iter().zip(&results) {
                assert_eq!(result["result"], "failure", "{route:?} {}: {result}", place.file);
            }
        }
    }
    assert_eq!(files(work), before, "{route:?} changed or made a file");
    for place in missing {
        assert!(!work.join(&place.entry).exists(), "{route:?} made {}", place.entry);
    }
    // The workload a user runs by name is still the one that was there.
    let found = sr_runtime::workload::discover("main", work).unwrap();
    assert_eq!(found, work.join("agents/main.sr"));
    assert!(sr_runtime::workload::discover("planted", work).is_err());
}

#[tokio::test(flavor = "multi_thread")]
async fn no_file_tool_changes_a_protected_place() {
    for route in [Route::WriteFile, Route::AppendToFile, Route::CreateDirectory] {
        route_leaves_every_place_unchanged(route).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn no_sandboxed_command_changes_a_protected_place() {
    if !sr_testing::required(sr_sandbox::Bubblewrap::available(), "bubblewrap (bwrap, prlimit) for the cli tool") {
        return;
    }
    route_leaves_every_place_unchanged(Route::Cli).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn no_coding_agent_changes_a_protected_place() {
    if !sr_testing::required(sr_sandbox::Bubblewrap::available(), "bubblewrap (bwrap, prlimit) for coding agents") {
        return;
    }
    route_leaves_every_place_unchanged(Route::CodingAgent).await;
}

/// A file a tool made in the current directory is never what a name runs:
/// `sr run reviewer` finds `agents/reviewer.sr`, or nothing; `./reviewer`
/// (a path) is taken as given.
#[test]
fn a_bare_name_is_only_searched_for() {
    let dir = tempfile::Builder::new().prefix("sr-runtime-discover-").tempdir().unwrap();
    let work = dir.path();
    std::fs::write(work.join("reviewer"), PLANTED).unwrap();
    assert!(sr_runtime::workload::discover("reviewer", work).is_err());
    assert_eq!(sr_runtime::workload::discover("./reviewer", work).unwrap(), work.join("./reviewer"));
    std::fs::create_dir(work.join("agents")).unwrap();
    std::fs::write(work.join("agents/reviewer.sr"), IMPORTED).unwrap();
    assert_eq!(sr_runtime::workload::discover("reviewer", work).unwrap(), work.join("agents/reviewer.sr"));
    std::fs::write(work.join("app.sr"), IMPORTED).unwrap();
    assert_eq!(sr_runtime::workload::discover("app.sr", work).unwrap(), work.join("app.sr"));
}

/// The ways around the sandbox's guard that a command has: a protected path
/// that is a symlink (only its target is bound) replaced, a new `.git` in a
/// directory made unreadable, a `.git` that is a symlink. Each call fails, the
/// links are put back and what was made is gone; the unreadable directory
/// keeps its mode.
#[tokio::test(flavor = "multi_thread")]
async fn a_command_cannot_replace_a_protected_link_or_hide_a_new_git() {
    if !sr_testing::required(sr_sandbox::Bubblewrap::available(), "bubblewrap (bwrap, prlimit) for the cli tool") {
        return;
    }
    use std::os::unix::fs::PermissionsExt;
    let dir = work_dir(Route::Cli);
    let work = dir.path();
    std::fs::remove_dir_all(work.join(".vscode")).unwrap();
    std::fs::remove_dir_all(work.join("agents")).unwrap();
    std::fs::create_dir_all(work.join("editor")).unwrap();
    std::fs::create_dir_all(work.join("shelf")).unwrap();
    std::fs::write(work.join("shelf/main.sr"), IMPORTED).unwrap();
    std::os::unix::fs::symlink("editor", work.join(".vscode")).unwrap();
    std::os::unix::fs::symlink("shelf", work.join("agents")).unwrap();
    let scripts = [
        "rm .vscode && mkdir .vscode && echo '{}' > .vscode/settings.json",
        "mkdir mine && echo 'x' > mine/planted.sr && rm agents && ln -s mine agents",
        "mkdir -p d/.git/hooks && echo 'x' > d/.git/hooks/pre-commit && chmod 000 d",
        "mkdir -p s && ln -s ../.git s/.git",
    ];
    let replies = scripts
        .iter()
        .map(|script| Reply::Calls(vec![("execute_cli_command".into(), json!({"command": ["sh", "-c", script]}))]))
        .collect();
    let (results, _) = run(work, replies).await;
    assert_eq!(results.len(), scripts.len());
    for (script, result) in scripts.iter().zip(&results) {
        let error = result["error"].as_str().unwrap_or_else(|| panic!("{script}: {result}"));
        assert!(error.contains("(a protected path): undone"), "{script}: {error}");
    }
    assert_eq!(std::fs::read_link(work.join(".vscode")).unwrap(), Path::new("editor"));
    assert_eq!(std::fs::read_link(work.join("agents")).unwrap(), Path::new("shelf"));
    assert!(sr_runtime::workload::discover("planted", work).is_err());
    assert_eq!(std::fs::metadata(work.join("d")).unwrap().permissions().mode() & 0o777, 0);
    assert!(std::fs::symlink_metadata(work.join("d/.git")).is_err());
    assert!(std::fs::symlink_metadata(work.join("s/.git")).is_err());
}
