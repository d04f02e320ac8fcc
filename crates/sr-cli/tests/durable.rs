//! Durable runs end to end: `sr run` killed with SIGKILL mid-model-call,
//! mid-tool and mid-resume is detected as interrupted by its lease and
//! `--resume` completes it with every completed model call and tool call
//! served from the journal (side effects exactly once); six concurrent runs
//! of one session keep all their events.
#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use sr_llm::mock::{MockReply, MockServer};

fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("sr-durable-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

struct Project {
    dir: PathBuf,
    env: Vec<(&'static str, String)>,
}

impl Project {
    fn new(name: &str, source: &str, server: &MockServer) -> Project {
        let dir = temp(name);
        std::fs::write(dir.join("w.sr"), source).unwrap();
        let env = vec![
            ("OPENAI_BASE_URL", format!("{}/v1", server.url())),
            ("OPENAI_API_KEY", "test-key-0000".to_string()),
            ("STREETRACE_STATE_DIR", dir.join("state").display().to_string()),
        ];
        Project { dir, env }
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

    fn count(&self) -> usize {
        std::fs::read_to_string(self.dir.join("count.txt")).map_or(0, |text| text.lines().count())
    }

    fn session(&self) -> (String, String) {
        let listing = String::from_utf8(self.sr(&["sessions", "list"]).stdout).unwrap();
        let words: Vec<&str> = listing.split_whitespace().collect();
        (words[0].to_string(), words[3].to_string())
    }

    /// The session's events as (run, event).
    fn events(&self, session: &str) -> Vec<(i64, Value)> {
        let out = self.sr(&["sessions", "show", session, "--jsonl"]);
        String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .map(|v| (v["run"].as_i64().unwrap(), v["event"].clone()))
            .collect()
    }
}

fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < Duration::from_secs(30), "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn kill(mut child: Child) {
    // SIGKILL: no destructor, no cleanup, the lease dropped by the kernel.
    child.kill().unwrap();
    child.wait().unwrap();
}

const COUNTER: &str = r#"model main = openai/gpt-4o-mini
tool fs = builtin streetrace.fs
prompt helper: """You count."""
agent:
    instruction helper
    tools fs
"#;

fn append() -> MockReply {
    MockReply::tool_call("c1", "append_to_file", json!({"path": "count.txt", "content": "x\n"}))
}

#[tokio::test(flavor = "multi_thread")]
async fn killed_mid_model_call_and_mid_resume_a_run_resumes_exactly_once() {
    let server = MockServer::start().await;
    let project = Project::new("model", COUNTER, &server);
    server.push(append());
    server.push(MockReply::text("never sent").delay(Duration::from_secs(60)));
    // Recorded: the journal is kept all the same.
    let run = project.spawn(&["run", "w.sr", "--prompt", "count once", "--record", "rec.jsonl"]);
    wait_until("the second model call", || server.requests().len() == 2);
    kill(run);
    assert_eq!(project.count(), 1);
    let recorded = std::fs::read_to_string(project.dir.join("rec.jsonl")).unwrap();
    assert!(recorded.contains("append_to_file") && recorded.contains(r#""kind":"tool""#), "{recorded}");
    let (session, status) = project.session();
    assert_eq!(status, "interrupted");
    // `--input` answers a pause; an interrupted run needs none.
    let wrong = project.sr(&["run", "w.sr", "--resume", &session, "--input", "yes"]);
    assert_eq!(wrong.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&wrong.stderr).contains("resume it without --input"));

    // The first resume is killed in its own (live) model call.
    server.push(MockReply::text("never sent either").delay(Duration::from_secs(60)));
    let resume = project.spawn(&["run", "w.sr", "--resume", &session]);
    wait_until("the resumed model call", || server.requests().len() == 3);
    kill(resume);
    assert_eq!(project.session().1, "interrupted");

    server.push(MockReply::text("Counted."));
    let started = Instant::now();
    let out = project.sr(&["run", "w.sr", "--resume", &session, "--events", "jsonl"]);
    let took = started.elapsed();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    eprintln!("resume after two kills took {took:?}");
    // The first model call and the tool were served from the journal every time.
    assert_eq!(project.count(), 1);
    assert_eq!(server.requests().len(), 4);
    let events: Vec<Value> =
        String::from_utf8(out.stdout).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let last = events.last().unwrap();
    assert_eq!((last["type"].as_str(), last["status"].as_str()), (Some("run_finished"), Some("completed")));
    assert_eq!(last["result"], "Counted.");
    assert_eq!(project.session().1, "open");
    // A completed run is not resumed again.
    let again = project.sr(&["run", "w.sr", "--resume", &session]);
    assert_eq!(again.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&again.stderr).contains("nothing to resume"));
}

#[tokio::test(flavor = "multi_thread")]
async fn killed_mid_tool_a_run_resumes_without_repeating_the_tool() {
    let server = MockServer::start().await;
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/durable/slow_mcp.py");
    let dir = temp("tool");
    let source = format!(
        "model main = openai/gpt-4o-mini\n\
         tool slow = mcp \"stdio:python3 '{}' '{}' 60\"\n\
         prompt helper: \"\"\"You count.\"\"\"\n\
         agent:\n    instruction helper\n    tools slow\n",
        script.display(),
        dir.join("count.txt").display()
    );
    let project = Project::new("tool", &source, &server);
    server.push(MockReply::tool_call("c1", "slow__bump", json!({})));
    let run = project.spawn(&["run", "w.sr", "--prompt", "bump once"]);
    wait_until("the tool's side effect", || std::fs::read_to_string(dir.join("count.txt")).is_ok_and(|t| t.len() == 2));
    kill(run);
    let (session, status) = project.session();
    assert_eq!(status, "interrupted");

    server.push(MockReply::text("I will check the count first."));
    let out = project.sr(&["run", "w.sr", "--resume", &session, "--events", "jsonl"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let count = std::fs::read_to_string(dir.join("count.txt")).unwrap();
    assert_eq!(count.lines().count(), 1, "the cut-off tool call ran again");
    // The model was told the call was cut off and not repeated.
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let told = requests[1].body["messages"].to_string();
    assert!(told.contains("cut off when the run was interrupted"), "{told}");
}

/// `--in-doubt retry` calls a tool the kill cut off again, once, with the
/// same idempotency key; `--in-doubt fail` fails the run without calling it.
#[tokio::test(flavor = "multi_thread")]
async fn killed_mid_tool_a_resume_retries_or_fails_the_call_as_told() {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/serving/charge_mcp.py");
    for decision in ["retry", "fail"] {
        let server = MockServer::start().await;
        let dir = temp(&format!("in-doubt-{decision}"));
        let log = dir.join("charges.log");
        let source = format!(
            "model main = openai/gpt-4o-mini\n\
             tool pay = mcp \"stdio:python3 '{}' '{}'\"\n\
             prompt helper: \"\"\"You charge.\"\"\"\n\
             agent:\n    instruction helper\n    tools pay\n",
            script.display(),
            log.display()
        );
        let project = Project::new(&format!("in-doubt-{decision}"), &source, &server);
        server.push(MockReply::tool_call("c1", "pay__charge", json!({"cents": 5})));
        let run = project.spawn(&["run", "w.sr", "--prompt", "charge once"]);
        let charges = || std::fs::read_to_string(&log).map(|t| t.lines().map(str::to_string).collect::<Vec<_>>());
        wait_until("the tool's side effect", || charges().is_ok_and(|c| c.len() == 1));
        kill(run);
        let (session, _) = project.session();

        server.push(MockReply::text("Charged."));
        let out = project.sr(&["run", "w.sr", "--resume", &session, "--in-doubt", decision]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        let charges = charges().unwrap();
        if decision == "retry" {
            assert!(out.status.success(), "{stderr}");
            assert_eq!(charges.len(), 2, "{charges:?}");
            assert!(charges[0] == charges[1] && charges[0].contains(":main#"), "{charges:?}");
            assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "Charged.");
        } else {
            assert_eq!(out.status.code(), Some(1), "{stderr}");
            assert_eq!(charges.len(), 1);
            assert!(stderr.contains("the decision was to fail the run"), "{stderr}");
            assert_eq!(server.requests().len(), 1);
        }
        // The run has ended: resuming it again is refused and calls nothing.
        let again = project.sr(&["run", "w.sr", "--resume", &session, "--in-doubt", "retry"]);
        assert_eq!(again.status.code(), Some(2), "{}", String::from_utf8_lossy(&again.stderr));
        assert_eq!(std::fs::read_to_string(&log).unwrap().lines().count(), charges.len());
    }
}

/// A run killed while a sandboxed command ran leaves the empty stand-ins the
/// sandbox made for missing protected directories (`.git/`, `agents/`, …) in
/// the work directory; the resumed run removes them before it goes on.
#[tokio::test(flavor = "multi_thread")]
async fn killed_mid_command_a_resumed_run_removes_the_sandboxs_stand_ins() {
    if !sr_testing::required(Command::new("bwrap").arg("--version").output().is_ok(), "bubblewrap (bwrap)") {
        return;
    }
    let server = MockServer::start().await;
    let source = "tool sh = builtin streetrace.cli\n\
                  flow main:\n    \
                  sh.execute_cli_command([\"sh\", \"-c\", \"echo started > started.txt; sleep 60\"])\n    \
                  return \"done\"\n";
    let project = Project::new("stand-ins", source, &server);
    let work = project.dir.join("work");
    std::fs::create_dir_all(&work).unwrap();
    let run = project.spawn(&["run", "w.sr", "--work-dir", "work"]);
    wait_until("the command", || work.join("started.txt").exists());
    kill(run);
    let stand_ins = || {
        let mut names: Vec<String> = std::fs::read_dir(&work)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|name| name != "started.txt")
            .collect();
        names.sort();
        names
    };
    assert!(stand_ins().iter().any(|name| name == ".git"), "the kill left the stand-ins: {:?}", stand_ins());
    std::fs::write(work.join("mine.txt"), "").unwrap();
    std::fs::create_dir(work.join("keep")).unwrap();

    let (session, _) = project.session();
    let out = project.sr(&["run", "w.sr", "--resume", &session, "--in-doubt", "fail", "--work-dir", "work"]);
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(stand_ins(), ["keep", "mine.txt"], "only what the user made is left");
}

/// A branch that fails cancels its siblings, and a replay emits what they
/// did before it cancelled them (waiting for a tool server), whichever branch the
/// replay's served results let finish first.
#[tokio::test(flavor = "multi_thread")]
async fn a_replay_of_a_failed_parallel_block_emits_what_the_cancelled_siblings_did() {
    let server = MockServer::start().await;
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/durable/slow_mcp.py");
    let dir = temp("cancelled-siblings");
    let source = format!(
        "tool fast = mcp \"stdio:python3 '{script}' '{fast}' 0\"\n\
         tool slow = mcp \"stdio:python3 '{script}' '{slow}' 3\"\n\
         flow fails:\n    fast.bump()\n    abort\n\
         flow waits:\n    log \"waiting\"\n    slow.bump()\n\
         flow main:\n    parallel do\n        run fails\n        run waits\n    end\n",
        script = script.display(),
        fast = dir.join("fast.txt").display(),
        slow = dir.join("slow.txt").display(),
    );
    let project = Project::new("cancelled-siblings", &source, &server);
    let live = project.sr(&["run", "w.sr", "--record", "rec.jsonl", "--events", "jsonl", "--work-dir", "."]);
    assert_eq!(live.status.code(), Some(1), "{}", String::from_utf8_lossy(&live.stderr));
    let live_events = String::from_utf8(live.stdout).unwrap();
    let sibling_began = live_events.lines().any(|l| l.contains("\"message\":\"waiting\""));
    assert!(sibling_began, "the sibling was under way when the block failed: {live_events}");
    for round in 0..5 {
        let fresh = project.dir.join(format!("replay-{round}"));
        std::fs::create_dir_all(&fresh).unwrap();
        let args = ["run", "w.sr", "--replay", "rec.jsonl", "--events", "jsonl", "--work-dir", fresh.to_str().unwrap()];
        let replay = project.sr(&args);
        assert_eq!(replay.status.code(), Some(1), "{}", String::from_utf8_lossy(&replay.stderr));
        assert_eq!(String::from_utf8(replay.stdout).unwrap(), live_events, "replay {round} emitted other events");
    }
}

const ASKING: &str = r#"flow main:
    escalate to human "Go on?"
    return "answered " + $human_input
"#;

/// Killed at any instant around its pause (right after it asked, while it
/// ends its journal, while it marks itself paused), a run resumes with the
/// answer given by `--resume ID --input`: the pause is what its journal and
/// its saved events say, not a record written after them.
#[tokio::test(flavor = "multi_thread")]
async fn killed_at_any_instant_of_a_pause_a_run_resumes_with_its_answer() {
    use std::io::BufRead;
    let server = MockServer::start().await;
    let project = Project::new("pause-kill", ASKING, &server);
    let mut statuses = BTreeMap::new();
    for (i, delay) in [0u64, 0, 1, 1, 2, 3, 4, 6, 8, 12, 20, 40].into_iter().enumerate() {
        let session = format!("s{i}");
        let mut run = project
            .command(&["run", "w.sr", "--session", &session, "--events", "jsonl"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut lines = std::io::BufReader::new(run.stdout.take().unwrap()).lines();
        let asked = lines.find(|line| line.as_ref().is_ok_and(|l| l.contains("\"human_input_requested\"")));
        assert!(asked.is_some(), "the run never asked");
        std::thread::sleep(Duration::from_millis(delay));
        // SIGKILL, or nothing when the run has already exited.
        let _ = run.kill();
        run.wait().unwrap();
        drop(lines);
        let listing = String::from_utf8(project.sr(&["sessions", "list"]).stdout).unwrap();
        let status = listing
            .lines()
            .find(|l| l.split_whitespace().next() == Some(session.as_str()))
            .and_then(|l| l.split_whitespace().nth(3))
            .unwrap()
            .to_string();
        *statuses.entry(status).or_insert(0) += 1;

        let out = project.sr(&["run", "w.sr", "--resume", &session, "--input", "yes"]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "killed {delay} ms after it asked: {stderr}");
        assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "answered yes");
    }
    eprintln!("session status after the kill: {statuses:?}");
    assert_eq!(server.requests().len(), 0);
}

/// A journal whose last line a crash left half written resumes without it,
/// with a warning naming the file and the line; a broken line before the
/// last is an error naming its line, and resumes nothing.
#[tokio::test(flavor = "multi_thread")]
async fn a_half_written_last_journal_line_is_dropped_and_a_broken_earlier_one_is_an_error() {
    let server = MockServer::start().await;
    let project = Project::new("torn", ASKING, &server);
    for session in ["torn", "broken"] {
        let out = project.sr(&["run", "w.sr", "--session", session]);
        assert_eq!(out.status.code(), Some(3), "{}", String::from_utf8_lossy(&out.stderr));
    }
    let journal = |session: &str| project.dir.join("state/journal").join(session).join("1.jsonl");

    let torn = journal("torn");
    let text = std::fs::read_to_string(&torn).unwrap();
    assert!(text.ends_with('\n'));
    let lines = text.lines().count();
    std::fs::write(&torn, format!("{text}{{\"kind\":\"value\",\"at\":\"ma")).unwrap();
    let out = project.sr(&["run", "w.sr", "--resume", "torn", "--input", "yes"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "answered yes");
    let warning = format!("warning: {}: line {} was cut off", torn.display(), lines + 1);
    assert!(stderr.contains(&warning), "{stderr}");
    // The resumed run's journal continues the whole lines only.
    let resumed = std::fs::read_to_string(journal("torn").with_file_name("2.jsonl")).unwrap();
    assert!(resumed.lines().all(|l| serde_json::from_str::<Value>(l).is_ok()), "{resumed}");

    let broken = journal("broken");
    let text = std::fs::read_to_string(&broken).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    lines.insert(1, "{\"kind\":\"val");
    std::fs::write(&broken, lines.join("\n") + "\n").unwrap();
    let out = project.sr(&["run", "w.sr", "--resume", "broken", "--input", "yes"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains(&format!("({}): line 2 of the journal is not JSON", broken.display())), "{stderr}");
    assert!(!journal("broken").with_file_name("2.jsonl").exists(), "a run started");
}

#[tokio::test(flavor = "multi_thread")]
async fn six_concurrent_runs_of_one_session_keep_all_their_events() {
    let server = MockServer::start().await;
    let project = Project::new("concurrent", COUNTER, &server);
    for _ in 0..6 {
        server.push(MockReply::text("hello").delay(Duration::from_millis(200)));
    }
    let session = "shared-session";
    let started = Instant::now();
    let runs: Vec<Child> = (0..6)
        .map(|i| {
            let args = ["run", "w.sr", "--session", session, "--prompt", &format!("run {i}"), "--events", "jsonl"];
            project.command(&args).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap()
        })
        .collect();
    // What each run streamed, but text deltas (the store keeps the whole reply instead).
    let mut streamed: Vec<Vec<Value>> = Vec::new();
    for run in runs {
        let out = run.wait_with_output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let events: Vec<Value> =
            String::from_utf8(out.stdout).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        streamed.push(events.into_iter().filter(|e| e["type"] != "text_delta").collect());
    }
    eprintln!("six concurrent runs took {:?}", started.elapsed());
    let stored = project.events(session);
    let mut numbers: Vec<i64> = stored.iter().map(|(run, _)| *run).collect();
    numbers.dedup();
    assert_eq!(numbers, [1, 2, 3, 4, 5, 6]);
    for events in streamed {
        assert_eq!(events.last().unwrap()["status"], "completed", "{events:?}");
        assert!(events.iter().all(|e| e["type"] != "warning"), "{events:?}");
        let invocation = events[0]["invocation_id"].clone();
        let kept: Vec<Value> =
            stored.iter().filter(|(_, e)| e["invocation_id"] == invocation).map(|(_, e)| e.clone()).collect();
        assert_eq!(kept, events);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn mcp_servers_start_on_first_use_and_are_closed_gracefully_at_the_end() {
    let server = MockServer::start().await;
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/durable/marker_mcp.py");
    let dir = temp("mcp-lazy");
    let mcp = |log: &str| format!("mcp \"stdio:python3 '{}' '{}'\"", script.display(), dir.join(log).display());
    let main = format!(
        "import ./lib.sr\nmodel main = openai/gpt-4o-mini\ntool used = {}\n\
         prompt helper: \"\"\"You ping.\"\"\"\nagent:\n    instruction helper\n    tools used\n",
        mcp("used.log")
    );
    let project = Project::new("mcp-lazy", &main, &server);
    std::fs::write(project.dir.join("lib.sr"), format!("tool unused = {}\n", mcp("unused.log"))).unwrap();
    server.push(MockReply::tool_call("c1", "used__ping", json!({})));
    server.push(MockReply::text("It said pong."));
    let out = project.sr(&["run", "w.sr", "--prompt", "ping"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(std::fs::read_to_string(dir.join("used.log")).unwrap(), "started\nclosed\n");
    assert!(!dir.join("unused.log").exists(), "the unused server of the imported file was started");
}

const PAUSED_BETWEEN_FILES: &str = r#"tool fs = builtin streetrace.fs
flow main:
    $a = fs.write_file("first.txt", "1")
    escalate to human "Go on?"
    $b = fs.write_file("second.txt", $human_input)
"#;

/// A run resumed from another directory continues in the work directory it
/// ran in (its journal's `meta` records it), and a different `--work-dir` is
/// refused, naming both, while the recorded one exists.
#[tokio::test(flavor = "multi_thread")]
async fn a_resumed_run_works_in_its_own_work_directory_wherever_it_is_resumed_from() {
    let server = MockServer::start().await;
    let project = Project::new("resume-work-dir", PAUSED_BETWEEN_FILES, &server);
    let (work, elsewhere, other) = (project.dir.join("work"), project.dir.join("elsewhere"), project.dir.join("other"));
    for dir in [&work, &elsewhere, &other] {
        std::fs::create_dir_all(dir).unwrap();
    }
    let paused = project.sr(&["run", "w.sr", "--session", "s", "--work-dir", "work"]);
    assert_eq!(paused.status.code(), Some(3), "{}", String::from_utf8_lossy(&paused.stderr));
    assert!(work.join("first.txt").exists());

    let workload = project.dir.join("w.sr").display().to_string();
    let resume_from = |cwd: &Path, extra: &[&str]| {
        let mut command = project.command(&["run", &workload, "--resume", "s", "--input", "yes"]);
        command.args(extra).current_dir(cwd).output().unwrap()
    };
    let refused = resume_from(&elsewhere, &["--work-dir", other.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(2), "{stderr}");
    let canonical = |p: &Path| std::fs::canonicalize(p).unwrap().display().to_string();
    assert!(stderr.contains(&canonical(&work)) && stderr.contains(&canonical(&other)), "{stderr}");

    let resumed = resume_from(&elsewhere, &[]);
    assert!(resumed.status.success(), "{}", String::from_utf8_lossy(&resumed.stderr));
    assert_eq!(std::fs::read_to_string(work.join("second.txt")).unwrap(), "yes");
    for dir in [&elsewhere, &other] {
        assert_eq!(std::fs::read_dir(dir).unwrap().count(), 0, "files in {}", dir.display());
    }
}

/// A paused and answered run's contract: the resumed process emits the run
/// from its start (served) and goes on, and a replay of the final journal
/// emits those same events and makes the same files; the paused process
/// emitted them up to its question, then the pause.
#[tokio::test(flavor = "multi_thread")]
async fn a_replay_of_a_paused_and_answered_run_emits_the_resumed_processs_events() {
    paused_answered_and_replayed("pause-replay", PAUSED_BETWEEN_FILES, Vec::new()).await;
}

/// A question asked in a `parallel` branch stops its block (the siblings are
/// cancelled, the block's line says it was cut): the resumed run continues
/// the block, the siblings' effects made then, once, and a replay of the
/// final journal agrees. A resumed run once took the cut block for one that
/// had finished and failed its siblings as diverged.
#[tokio::test(flavor = "multi_thread")]
async fn a_question_in_a_parallel_branch_pauses_and_resumes_the_whole_block() {
    let source = "tool fs = builtin streetrace.fs\nflow main:\n    parallel do\n        escalate to human \"Go on?\"\n        \
                  $b = fs.write_file(\"branch.txt\", \"b\")\n    end\n    $c = fs.write_file(\"second.txt\", $human_input)\n";
    let (project, _) = paused_answered_and_replayed("pause-parallel", source, Vec::new()).await;
    assert_eq!(std::fs::read_to_string(project.dir.join("work/branch.txt")).unwrap(), "b");
    let journal = std::fs::read_to_string(project.dir.join("state/journal/s/2.jsonl")).unwrap();
    let blocks: Vec<Value> = journal
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|l| l["kind"] == "interleave")
        .collect();
    assert_eq!(blocks.len(), 2, "the cut block's line, then the finished one's: {blocks:?}");
    assert_eq!((blocks[0]["cut"].as_bool(), blocks[1]["cut"].as_bool()), (Some(true), None));
}

/// A question in one `parallel` branch while the others' cli command and
/// MCP call are under way: the pause lets both calls end and journals them,
/// so the resumed run serves them (nothing is in doubt, no call made twice)
/// and goes on with each branch. The command appends a line to `ran.txt`
/// and the MCP server one to `count.txt` (outside the work directory): one
/// each, after the pause, the resume and the replay of the final journal.
/// The pause once cancelled the calls at once, and the resumed run failed
/// with the command in doubt.
#[tokio::test(flavor = "multi_thread")]
async fn a_question_lets_a_siblings_call_in_flight_end_and_the_resumed_run_serves_it() {
    let dir = temp("pause-in-flight");
    let slow = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/durable/slow_mcp.py");
    let source = format!(
        "model main = openai/gpt-4o-mini\ntool fs = builtin streetrace.fs\ntool sh = builtin streetrace.cli\n\
         tool slow = mcp \"stdio:python3 '{}' '{}' 1.5\"\nprompt ask: \"\"\"Say something.\"\"\"\n\
         flow main:\n    parallel do\n        if true:\n            $said = call llm ask\n            \
         escalate to human \"Go on?\"\n        if true:\n            \
         $c = sh.execute_cli_command([\"sh\", \"-c\", \"sleep 1.5; echo ran >> ran.txt\"])\n            \
         $d = fs.write_file(\"after_cli.txt\", \"c\")\n        if true:\n            $b = slow.bump()\n            \
         $e = fs.write_file(\"after_mcp.txt\", \"b\")\n    end\n    $w = fs.write_file(\"second.txt\", $human_input)\n",
        slow.display(),
        dir.join("count.txt").display()
    );
    // The question comes once the reply has: the calls are under way then.
    let reply = MockReply::text("said").delay(Duration::from_millis(500));
    let (project, paused) = paused_answered_and_replayed("pause-in-flight", &source, vec![reply]).await;
    let work = project.dir.join("work");
    // The paused process's journal replays to the same pause: the branches
    // past their served calls wait there to be cancelled, as they did.
    std::fs::create_dir_all(project.dir.join("replayed-pause")).unwrap();
    let journal = project.dir.join("state/journal/s/1.jsonl").display().to_string();
    let replay =
        project.sr(&["run", "w.sr", "--replay", &journal, "--events", "jsonl", "--work-dir", "replayed-pause"]);
    assert_eq!(replay.status.code(), Some(3), "{}", String::from_utf8_lossy(&replay.stderr));
    let events: Vec<Value> =
        String::from_utf8_lossy(&replay.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(events, paused);
    assert_eq!(std::fs::read_to_string(work.join("ran.txt")).unwrap(), "ran\n", "the command ran once");
    assert_eq!(std::fs::read_to_string(dir.join("count.txt")).unwrap(), "x\n", "the MCP call was made once");
    for file in ["after_cli.txt", "after_mcp.txt"] {
        assert!(work.join(file).exists(), "the resumed run went on after the served call: {file}");
    }
}

/// Pauses `source` (which writes `second.txt` from the answer), resumes it
/// with "yes" and replays the final journal: the replay emits the resumed
/// process's events and makes its files; the paused process emitted them up
/// to its question, then only the pause's ends (returned with the project).
/// The model's `replies` are each asked for once in all.
async fn paused_answered_and_replayed(name: &str, source: &str, replies: Vec<MockReply>) -> (Project, Vec<Value>) {
    let server = MockServer::start().await;
    let pushed = replies.len();
    for reply in replies {
        server.push(reply);
    }
    let project = Project::new(name, source, &server);
    for dir in ["work", "replayed"] {
        std::fs::create_dir_all(project.dir.join(dir)).unwrap();
    }
    let lines = |out: &Output| -> Vec<Value> {
        String::from_utf8_lossy(&out.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect()
    };
    let jsonl = ["--events", "jsonl", "--work-dir"];
    let paused = project.sr(&[&["run", "w.sr", "--session", "s"][..], &jsonl, &["work"]].concat());
    assert_eq!(paused.status.code(), Some(3));
    let resumed = project.sr(&[&["run", "w.sr", "--resume", "s", "--input", "yes"][..], &jsonl, &["work"]].concat());
    assert!(resumed.status.success(), "{}", String::from_utf8_lossy(&resumed.stderr));
    let journal = project.dir.join("state/journal/s/2.jsonl").display().to_string();
    let replay = project.sr(&[&["run", "w.sr", "--replay", &journal][..], &jsonl, &["replayed"]].concat());
    assert!(replay.status.success(), "{}", String::from_utf8_lossy(&replay.stderr));

    let (paused, resumed) = (lines(&paused), lines(&resumed));
    assert_eq!(lines(&replay), resumed);
    let asked = paused.iter().position(|e| e["type"] == "human_input_requested").unwrap();
    assert_eq!(paused[..=asked], resumed[..=asked]);
    let tail: Vec<&Value> = paused[asked + 1..].iter().map(|e| &e["type"]).collect();
    assert_eq!(tail, ["flow_finished", "run_finished"]);
    assert_eq!(paused.last().unwrap()["status"], "paused");
    assert_eq!(
        files(&project.dir.join("replayed")),
        files(&project.dir.join("work")),
        "the replay's files are the run's"
    );
    assert_eq!(std::fs::read_to_string(project.dir.join("replayed/second.txt")).unwrap(), "yes");
    let paths: Vec<String> = server.requests().into_iter().map(|r| format!("{} {}", r.method, r.path)).collect();
    assert_eq!(paths.len(), pushed, "no request asked twice, none in the replay: {paths:?}");
    (project, paused)
}

fn files(dir: &Path) -> BTreeMap<String, String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .map(|p| (p.file_name().unwrap().to_string_lossy().into_owned(), std::fs::read_to_string(&p).unwrap()))
        .collect()
}
