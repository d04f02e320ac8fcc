//! The journal determines the run, end to end with the real `sr`: a workflow
//! that names its workspace with `uuid()`, stamps files with `now()` and
//! random numbers inside `parallel` branches, writes files and asks a model is
//! recorded, then replayed to the same events byte for byte and the same
//! files; killed with SIGKILL at several points and resumed, with every side
//! effect made exactly once and one workspace; and evaluated with
//! `--record-to`, then `--replay-from`, to the same results.
#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use sr_llm::mock::{MockReply, MockServer};

const WORKFLOW: &str = r#"model main = openai/gpt-4o-mini
tool fs = builtin streetrace.fs
prompt name_it: """Name the workspace ${ws}."""
prompt sum_up: """Sum up ${label} for ${ws}."""

flow main:
    $ws = "ws_" + uuid()
    $started = now()
    $made = fs.create_directory($ws)
    $trail = fs.append_to_file("steps.log", "made " + $ws + "\n")
    parallel do
        $a = fs.write_file($ws + "/a.txt", "a " + str(random_int(1, 1000000)) + " " + now())
        $b = fs.write_file($ws + "/b.txt", "b " + str(random()) + " " + uuid())
        $label = call llm name_it
    end
    $trail = fs.append_to_file("steps.log", "branches " + $ws + "\n")
    $summary = call llm sum_up
    $c = fs.write_file($ws + "/summary.txt", $summary + " since " + $started)
    $trail = fs.append_to_file("steps.log", "summed " + $ws + "\n")
    return {ws: $ws, label: $label, summary: $summary}
"#;

fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("sr-journal-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A project: the workflow in `dir`, its state beside it, the model a mock server.
struct Project {
    dir: PathBuf,
    work: PathBuf,
    env: Vec<(&'static str, String)>,
}

impl Project {
    fn new(name: &str, server: &MockServer) -> Project {
        let dir = temp(name);
        std::fs::write(dir.join("w.sr"), WORKFLOW).unwrap();
        let work = dir.join("work");
        std::fs::create_dir_all(&work).unwrap();
        let env = vec![
            ("OPENAI_BASE_URL", format!("{}/v1", server.url())),
            ("OPENAI_API_KEY", "test-key-0000".to_string()),
            ("STREETRACE_STATE_DIR", dir.join("state").display().to_string()),
        ];
        Project { dir, work, env }
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_sr"));
        command.args(args).current_dir(&self.dir).env("NO_COLOR", "1").envs(self.env.iter().map(|(k, v)| (k, v)));
        command
    }

    fn sr(&self, args: &[&str]) -> Output {
        self.command(args).output().unwrap()
    }

    fn spawn(&self, args: &[&str]) -> Child {
        self.command(args).stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap()
    }

    fn session(&self) -> (String, String) {
        let listing = String::from_utf8(self.sr(&["sessions", "list"]).stdout).unwrap();
        let words: Vec<&str> = listing.split_whitespace().collect();
        (words[0].to_string(), words[3].to_string())
    }
}

/// Every file under `dir`, by relative path, with its content.
fn files(dir: &Path) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(at) = stack.pop() {
        for entry in std::fs::read_dir(&at).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                out.insert(format!("{}/", path.strip_prefix(dir).unwrap().display()), String::new());
                stack.push(path);
            } else {
                out.insert(
                    path.strip_prefix(dir).unwrap().display().to_string(),
                    std::fs::read_to_string(&path).unwrap(),
                );
            }
        }
    }
    out
}

fn workspaces(dir: &Path) -> Vec<String> {
    let mut found: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with("ws_"))
        .collect();
    found.sort();
    found
}

fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < Duration::from_secs(60), "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn kill(mut child: Child) {
    child.kill().unwrap();
    child.wait().unwrap();
}

fn replies(server: &MockServer, delay: Duration) {
    server.push(MockReply::chunks(["the ", "blue ", "room"]).delay(delay));
    server.push(MockReply::chunks(["all ", "done"]));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_replay_emits_the_same_events_byte_for_byte_and_makes_the_same_files() {
    let server = MockServer::start().await;
    let project = Project::new("replay", &server);
    // The model answers the branch late, so the file branches finish first.
    replies(&server, Duration::from_millis(150));
    let work = project.work.to_str().unwrap();
    let live = project.sr(&["run", "w.sr", "--record", "rec.jsonl", "--events", "jsonl", "--work-dir", work]);
    assert!(live.status.success(), "{}", String::from_utf8_lossy(&live.stderr));
    let recorded_files = files(&project.work);
    let ws = workspaces(&project.work);
    assert_eq!(ws.len(), 1, "{recorded_files:?}");
    // steps.log, the workspace, and a.txt, b.txt and summary.txt in it.
    assert_eq!(recorded_files.len(), 5, "{recorded_files:?}");

    for round in 0..3 {
        let fresh = project.dir.join(format!("replay-{round}"));
        std::fs::create_dir_all(&fresh).unwrap();
        let args = ["run", "w.sr", "--replay", "rec.jsonl", "--events", "jsonl", "--work-dir", fresh.to_str().unwrap()];
        let replay = project.sr(&args);
        assert!(replay.status.success(), "{}", String::from_utf8_lossy(&replay.stderr));
        assert_eq!(
            String::from_utf8(replay.stdout).unwrap(),
            String::from_utf8(live.stdout.clone()).unwrap(),
            "replay {round} emitted other events"
        );
        assert_eq!(files(&fresh), recorded_files, "replay {round} left other files");
    }
    assert_eq!(server.requests().len(), 2, "a replay asked the model");
}

#[tokio::test(flavor = "multi_thread")]
async fn killed_anywhere_a_run_resumes_with_one_workspace_and_each_effect_once() {
    let server = MockServer::start().await;
    let project = Project::new("resume", &server);
    let work = project.work.to_str().unwrap();
    let log = || std::fs::read_to_string(project.work.join("steps.log")).unwrap_or_default();

    // 1. Killed while the branch waits for the model: the files of the other
    // branches are written, the workspace is named.
    server.push(MockReply::text("never sent").delay(Duration::from_secs(120)));
    let run = project.spawn(&["run", "w.sr", "--work-dir", work]);
    wait_until("the branch's model call", || server.requests().len() == 1);
    wait_until("both file branches", || {
        workspaces(&project.work).first().is_some_and(|ws| {
            project.work.join(ws).join("a.txt").exists() && project.work.join(ws).join("b.txt").exists()
        })
    });
    kill(run);
    let (session, status) = project.session();
    assert_eq!(status, "interrupted");
    let ws = workspaces(&project.work);
    let first_files = files(&project.work);

    // 2. The resume is killed at the second model call.
    server.push(MockReply::text("the blue room"));
    server.push(MockReply::text("never sent either").delay(Duration::from_secs(120)));
    let resume = project.spawn(&["run", "w.sr", "--resume", &session, "--work-dir", work]);
    wait_until("the second model call", || server.requests().len() == 3);
    kill(resume);
    assert_eq!(workspaces(&project.work), ws, "the resume named another workspace");
    for (path, content) in first_files.iter().filter(|(path, _)| path.starts_with("ws_")) {
        assert_eq!(files(&project.work).get(path), Some(content), "{path} changed on resume");
    }

    // 3. The last resume finishes.
    server.push(MockReply::text("all done"));
    let out = project.sr(&["run", "w.sr", "--resume", &session, "--work-dir", work, "--events", "jsonl"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(workspaces(&project.work), ws, "one workspace, whatever the kills");
    let ws = &ws[0];
    // (Flow strings keep `\n` as written.)
    assert_eq!(log(), format!("made {ws}\\nbranches {ws}\\nsummed {ws}\\n"), "each step exactly once");
    assert_eq!(first_files.get(&format!("{ws}/a.txt")), files(&project.work).get(&format!("{ws}/a.txt")));
    let summary = std::fs::read_to_string(project.work.join(ws).join("summary.txt")).unwrap();
    assert!(summary.starts_with("all done since "), "{summary}");
    let last: Value = serde_json::from_str(String::from_utf8(out.stdout).unwrap().lines().last().unwrap()).unwrap();
    assert_eq!(last["result"]["ws"], Value::String(ws.clone()));
    // The killed model calls were asked again (nothing reached the run), the
    // completed one never: name, name, sum, sum.
    let asked: Vec<String> = server.requests().iter().map(|r| r.body["messages"][0]["content"].to_string()).collect();
    assert_eq!(asked.len(), 4, "{asked:#?}");
    assert!(asked[1].contains("Name the workspace") && asked[3].contains("Sum up the blue room"), "{asked:#?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_evaluation_recorded_then_replayed_gives_the_same_results() {
    let server = MockServer::start().await;
    let project = Project::new("eval", &server);
    std::fs::write(
        project.dir.join("dataset.yaml"),
        "- id: first\n  prompt: go\n  expect:\n    - json_path: $.summary\n      equals: all done\n\
         - id: second\n  prompt: go again\n  expect:\n    - contains: room\n",
    )
    .unwrap();
    for _ in 0..2 {
        replies(&server, Duration::from_millis(20));
    }
    let record = project.sr(&[
        "eval",
        "dataset.yaml",
        "--workload",
        "w.sr",
        "--jobs",
        "1",
        "--record-to",
        "cassettes",
        "--out",
        "recorded",
    ]);
    assert!(record.status.success(), "{}", String::from_utf8_lossy(&record.stderr));
    let replay =
        project.sr(&["eval", "dataset.yaml", "--workload", "w.sr", "--replay-from", "cassettes", "--out", "replayed"]);
    assert!(replay.status.success(), "{}", String::from_utf8_lossy(&replay.stderr));
    assert_eq!(server.requests().len(), 4, "the replay asked the model");
    let cases = |out: &str| -> Vec<Value> {
        let results: Value =
            serde_json::from_str(&std::fs::read_to_string(project.dir.join(out).join("results.json")).unwrap())
                .unwrap();
        let mut cases = results["cases"].as_array().unwrap().clone();
        for case in &mut cases {
            // How long a case took is the one thing a replay does not repeat.
            case.as_object_mut().unwrap().remove("latency_ms");
        }
        cases
    };
    let (recorded, replayed) = (cases("recorded"), cases("replayed"));
    assert_eq!(recorded.len(), 2);
    assert_eq!(recorded, replayed);
    assert!(recorded.iter().all(|c| c["passed"] == true), "{recorded:#?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn past_the_journals_file_limit_the_run_warns_and_a_replay_fails_naming_the_file() {
    let server = MockServer::start().await;
    let mut project = Project::new("limit", &server);
    std::fs::write(
        project.dir.join("w.sr"),
        "tool fs = builtin streetrace.fs\n\nflow main:\n    $a = fs.write_file(\"small.txt\", \"tiny\")\n    \
         $b = fs.write_file(\"big.txt\", \"more than sixteen bytes\")\n    return \"done\"\n",
    )
    .unwrap();
    project.env.push(("STREETRACE_JOURNAL_FILE_BYTES", "16".to_string()));
    let work = project.work.to_str().unwrap();
    let live = project.sr(&["run", "w.sr", "--record", "rec.jsonl", "--work-dir", work]);
    assert!(live.status.success(), "{}", String::from_utf8_lossy(&live.stderr));
    let said = format!("{}{}", String::from_utf8_lossy(&live.stdout), String::from_utf8_lossy(&live.stderr));
    assert!(said.contains("big.txt") && said.contains("STREETRACE_JOURNAL_FILE_BYTES"), "{said}");

    let fresh = project.dir.join("fresh");
    std::fs::create_dir_all(&fresh).unwrap();
    let replay = project.sr(&["run", "w.sr", "--replay", "rec.jsonl", "--work-dir", fresh.to_str().unwrap()]);
    assert_eq!(replay.status.code(), Some(1), "a replay without big.txt succeeded");
    let error = String::from_utf8_lossy(&replay.stderr);
    assert!(error.contains("big.txt") && error.contains("hash only"), "{error}");
    assert_eq!(std::fs::read_to_string(fresh.join("small.txt")).unwrap(), "tiny");
    assert!(!fresh.join("big.txt").exists());
}
