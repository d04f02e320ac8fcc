//! Tool functions in flows (`fs.read_file(path)`): every builtin file function
//! with its value, failures that `on failure` catches, the step hook, tool
//! handlers, the jail, and a replay that serves results from the recording.
#![allow(clippy::unwrap_used)]

mod common;

use std::sync::{Arc, Mutex};

use common::{Options, recording, run_source, run_with_journal, serving, work_dir};
use futures::future::BoxFuture;
use serde_json::{Value, json};
use sr_runtime::RunOptions;
use sr_runtime::event::{Payload, RunStatus};
use sr_runtime::hook::{Control, Step, StepHook, StepPoint};
use sr_runtime::journal::Mode;
use sr_runtime::scripted::ScriptedProvider;

fn no_model() -> Arc<ScriptedProvider> {
    Arc::new(ScriptedProvider::new())
}

fn in_dir(dir: &std::path::Path) -> Options {
    Options { work_dir: dir.to_path_buf(), ..Options::default() }
}

fn entry(dir: &std::path::Path, flow: &str) -> Options {
    Options { options: RunOptions { entry: Some(flow.into()), ..RunOptions::default() }, ..in_dir(dir) }
}

#[tokio::test]
async fn every_file_function_gives_its_value() {
    let dir = work_dir("flow-fs-all");
    std::fs::create_dir_all(dir.join("old")).unwrap();
    std::fs::write(dir.join("notes.md"), "Alpha\nbeta GAMMA\n").unwrap();
    let source = r#"
tool fs = builtin streetrace.fs

flow main:
    $made = fs.create_directory("out/deep")
    $wrote = fs.write_file({path: "out/deep/a.txt", content: "one "})
    $appended = fs.append_to_file("out/deep/a.txt", "two gamma")
    $text = fs.read_file("out/deep/a.txt")
    $listing = fs.list_directory(".")
    $found = fs.find_in_files("**/*.{md,txt}", "gamma")
    $words = len(regex_find_all(fs.read_file({path: "notes.md"}), "\w+"))
    return {made: $made, wrote: $wrote, appended: $appended, text: $text, listing: $listing, found: $found, words: $words}
"#;
    let run = run_source("flow-fs-all", source, "go", no_model(), in_dir(&dir)).await;
    assert_eq!(run.outcome.status, RunStatus::Completed, "{:?}", run.outcome.error);
    assert_eq!(
        run.outcome.result,
        Some(json!({
            "made": "created out/deep",
            "wrote": "wrote 4 bytes",
            "appended": "wrote 9 bytes",
            "text": "one two gamma",
            "listing": ["old/", "out/", "notes.md"],
            "found": [
                {"filepath": "notes.md", "line_number": 2, "snippet": "beta GAMMA"},
                {"filepath": "out/deep/a.txt", "line_number": 1, "snippet": "one two gamma"},
            ],
            "words": 3,
        }))
    );
    assert_eq!(std::fs::read_to_string(dir.join("out/deep/a.txt")).unwrap(), "one two gamma");
    // Each call is a step with its events, named as the model sees the tool.
    let calls: Vec<(String, Value)> = run
        .payloads()
        .into_iter()
        .filter_map(|p| match p {
            Payload::ToolCall { tool, args, .. } => Some((tool.clone(), args.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(calls.len(), 7);
    assert_eq!(calls[1], ("write_file".to_string(), json!({"path": "out/deep/a.txt", "content": "one "})));
    assert_eq!(calls[2], ("append_to_file".to_string(), json!({"path": "out/deep/a.txt", "content": "two gamma"})));
    let results = run.payloads().into_iter().filter(|p| matches!(p, Payload::ToolResult { is_error: false, .. }));
    assert_eq!(results.count(), 7);
}

#[tokio::test]
async fn a_missing_file_is_a_flow_error_that_on_failure_catches() {
    let dir = work_dir("flow-fs-missing");
    let source = r#"
tool fs = builtin streetrace.fs

flow main:
    $text = fs.read_file("missing.txt")
    on failure:
        log "caught: ${error}"
        $text = "default"
    return $text

flow uncaught:
    $n = 1
    log fs.read_file("missing.txt")
"#;
    let run = run_source("flow-fs-missing", source, "go", no_model(), in_dir(&dir)).await;
    assert_eq!(run.outcome.result, Some(json!("default")), "{:?}", run.outcome.error);
    let logs: Vec<&Payload> = run.payloads().into_iter().filter(|p| matches!(p, Payload::Log { .. })).collect();
    let Payload::Log { message } = logs[0] else { unreachable!() };
    assert!(message.starts_with(r#"caught: fs.read_file({"path":"missing.txt"}): "#), "{message}");

    let run = run_source("flow-fs-missing-uncaught", source, "go", no_model(), entry(&dir, "uncaught")).await;
    assert_eq!(run.outcome.status, RunStatus::Failed);
    let error = run.outcome.error.unwrap();
    assert!(error.message.starts_with(r#"fs.read_file({"path":"missing.txt"}): "#), "{}", error.message);
    let at = error.location.unwrap();
    assert_eq!((at.line, at.column), (13, 5), "the statement `log fs.read_file(…)` of flow uncaught");
}

#[tokio::test]
async fn bad_calls_fail_with_the_statements_location() {
    let dir = work_dir("flow-fs-bad");
    std::fs::create_dir_all(dir.join("old")).unwrap();
    std::fs::write(dir.join("f.txt"), "x").unwrap();
    let source = r#"
tool fs = builtin streetrace.fs
tool ro = builtin streetrace.fs_readonly

flow main:
    $a = 1
    return fs.read_file()
"#;
    // Calls `sr check` rejects (SR117, SR118) do not compile; these do.
    let cases = [
        (
            "fs.read_file(\"../outside.txt\")",
            r#"fs.read_file({"path":"../outside.txt"}): path '../outside.txt' is outside the work directory"#,
        ),
        ("fs.read_file(42)", r#"fs.read_file({"path":42}): argument 'path' must be a string, got 42"#),
        ("fs.read_file({path: \"old\"})", r#"fs.read_file({"path":"old"}): 'old' is a directory"#),
        ("fs.list_directory(\"f.txt\")", r#"fs.list_directory({"path":"f.txt"}): 'f.txt' is not a directory"#),
    ];
    for (n, (call, expected)) in cases.iter().enumerate() {
        let source = source.replace("fs.read_file()", call);
        let run = run_source(&format!("flow-fs-bad-{n}"), &source, "go", no_model(), in_dir(&dir)).await;
        assert_eq!(run.outcome.status, RunStatus::Failed, "{call}");
        let error = run.outcome.error.unwrap();
        assert!(error.message.starts_with(expected), "{call}: {}", error.message);
        let at = error.location.unwrap();
        assert_eq!((at.line, at.column), (7, 5), "{call}");
    }
}

#[tokio::test]
async fn calls_run_in_evaluation_order_and_and_or_skip_them() {
    let dir = work_dir("flow-fs-order");
    std::fs::write(dir.join("name.txt"), "target.txt").unwrap();
    std::fs::write(dir.join("target.txt"), "found it").unwrap();
    let source = r#"
tool fs = builtin streetrace.fs

flow main:
    $nested = fs.read_file(fs.read_file("name.txt"))
    $skipped = false and fs.read_file("missing.txt")
    $kept = "x" or fs.read_file("missing.txt")
    $both = [fs.read_file("name.txt"), fs.read_file("target.txt")]
    return {nested: $nested, skipped: $skipped, kept: $kept, both: $both}
"#;
    let run = run_source("flow-fs-order", source, "go", no_model(), in_dir(&dir)).await;
    assert_eq!(run.outcome.status, RunStatus::Completed, "{:?}", run.outcome.error);
    assert_eq!(
        run.outcome.result,
        Some(json!({"nested": "found it", "skipped": false, "kept": "x", "both": ["target.txt", "found it"]}))
    );
    let paths: Vec<Value> = run
        .payloads()
        .into_iter()
        .filter_map(|p| match p {
            Payload::ToolCall { args, .. } => Some(args["path"].clone()),
            _ => None,
        })
        .collect();
    assert_eq!(paths, [json!("name.txt"), json!("target.txt"), json!("name.txt"), json!("target.txt")]);
}

/// Records the tool steps the hook is called for.
#[derive(Default)]
struct ToolSteps(Mutex<Vec<(String, Value)>>);

impl StepHook for ToolSteps {
    fn on_step<'a>(&'a self, step: Step<'a>) -> BoxFuture<'a, Control> {
        if let StepPoint::ToolCall { tool, args } = step.point {
            self.0.lock().unwrap().push((tool.to_string(), args.clone()));
        }
        Box::pin(std::future::ready(Control::Continue))
    }
}

#[tokio::test]
async fn the_step_hook_and_tool_handlers_see_each_call() {
    let dir = work_dir("flow-fs-hook");
    std::fs::write(dir.join("public.txt"), "open").unwrap();
    std::fs::write(dir.join("secret.txt"), "hidden").unwrap();
    let source = r#"
tool fs = builtin streetrace.fs

on tool-call do
    block if $event.args.path contains "secret"
end

flow main:
    $open = fs.read_file("public.txt")
    $hidden = fs.read_file("secret.txt")
    return $hidden
"#;
    let hook = Arc::new(ToolSteps::default());
    let options = Options { hook: hook.clone(), ..in_dir(&dir) };
    let run = run_source("flow-fs-hook", source, "go", no_model(), options).await;
    assert_eq!(run.outcome.status, RunStatus::Failed);
    let error = run.outcome.error.unwrap();
    assert_eq!(error.message, r#"fs.read_file({"path":"secret.txt"}): Request blocked by guardrail policy."#);
    assert_eq!(error.location.unwrap().line, 10);
    let steps = hook.0.lock().unwrap().clone();
    assert_eq!(
        steps,
        [
            ("read_file".to_string(), json!({"path": "public.txt"})),
            ("read_file".to_string(), json!({"path": "secret.txt"}))
        ]
    );
}

#[tokio::test]
async fn a_replay_serves_tool_results_from_the_recording() {
    let dir = work_dir("flow-fs-replay");
    std::fs::write(dir.join("input.txt"), "recorded text").unwrap();
    let source = r#"
tool fs = builtin streetrace.fs

flow main:
    $text = fs.read_file("input.txt")
    $wrote = fs.write_file("copy.txt", upper($text))
    return {text: $text, listing: fs.list_directory("."), wrote: $wrote}
"#;
    let path = dir.join("replay.sr");
    std::fs::write(&path, source).unwrap();
    let cassette_path = work_dir("flow-fs-replay-cassette").join("run.jsonl");
    let recorded = run_with_journal(&path, &dir, recording(&cassette_path, &dir)).await;
    assert_eq!(recorded.status, RunStatus::Completed, "{:?}", recorded.error);
    let expected =
        json!({"text": "recorded text", "listing": ["copy.txt", "input.txt", "replay.sr"], "wrote": "wrote 13 bytes"});
    assert_eq!(recorded.result, Some(expected.clone()));

    // The files are gone: a replay reads nothing, and writes what the
    // recorded run wrote.
    std::fs::remove_file(dir.join("input.txt")).unwrap();
    std::fs::remove_file(dir.join("copy.txt")).unwrap();
    let text = std::fs::read_to_string(&cassette_path).unwrap();
    let replay = run_with_journal(&path, &dir, serving(Mode::Replay, &text, &dir, None)).await;
    assert_eq!(replay.status, RunStatus::Completed, "{:?}", replay.error);
    assert_eq!(replay.result, Some(expected));
    assert_eq!(std::fs::read_to_string(dir.join("copy.txt")).unwrap(), "RECORDED TEXT");
    assert!(!dir.join("input.txt").exists(), "a read changes no file");

    // A flow that asks for something the recording lacks stops, naming the difference.
    std::fs::write(&path, source.replace("input.txt", "other.txt")).unwrap();
    let replay = run_with_journal(&path, &dir, serving(Mode::Replay, &text, &dir, None)).await;
    assert_eq!(replay.status, RunStatus::Failed);
    let error = replay.error.unwrap();
    assert_eq!(error.kind, sr_runtime::ErrorKind::Diverged);
    assert_eq!(
        error.message,
        "the run diverged from its journal: the arguments of tool 'read_file' differ from the journal's at:\n  \
         /path: recorded \"input.txt\", requested \"other.txt\""
    );
    assert!(error.location.is_some(), "the divergence names its statement");
}

#[tokio::test]
async fn a_flow_without_return_yields_its_last_tool_step() {
    let dir = work_dir("flow-fs-last");
    std::fs::write(dir.join("a.txt"), "first").unwrap();
    std::fs::write(dir.join("b.txt"), "second").unwrap();
    let source = "tool fs = builtin streetrace.fs\n\nflow main:\n    $a = fs.read_file(\"a.txt\")\n    $b = upper(fs.read_file(\"b.txt\"))\n";
    let run = run_source("flow-fs-last", source, "go", no_model(), in_dir(&dir)).await;
    assert_eq!(run.outcome.result, Some(json!("second")), "{:?}", run.outcome.error);
}

#[tokio::test]
async fn a_resumed_run_does_not_repeat_calls_it_made() {
    let dir = work_dir("flow-fs-resume");
    std::fs::write(dir.join("a.txt"), "from the first run").unwrap();
    let path = dir.join("resume.sr");
    std::fs::write(
        &path,
        "tool fs = builtin streetrace.fs\n\nflow main:\n    $a = fs.read_file(\"a.txt\")\n    \
         $b = fs.write_file(\"b.txt\", $a)\n    return $a\n",
    )
    .unwrap();
    let journal_path = work_dir("flow-fs-resume-journal").join("journal.jsonl");
    assert_eq!(run_with_journal(&path, &dir, recording(&journal_path, &dir)).await.status, RunStatus::Completed);

    // The run "died" after its first call: the journal ends there.
    let text = std::fs::read_to_string(&journal_path).unwrap();
    let first_result = text.lines().position(|l| l.contains(r#""kind":"tool""#)).unwrap();
    let journal: String = text.lines().take(first_result + 1).flat_map(|l| [l, "\n"]).collect();
    assert!(!journal.contains("write_file"));
    std::fs::remove_file(dir.join("a.txt")).unwrap();
    std::fs::remove_file(dir.join("b.txt")).unwrap();

    let resumed_path = journal_path.with_file_name("resumed.jsonl");
    let resumed = run_with_journal(&path, &dir, serving(Mode::Resume, &journal, &dir, Some(&resumed_path))).await;
    assert_eq!(resumed.status, RunStatus::Completed, "{:?}", resumed.error);
    // The read came from the journal (the file is gone); the write ran.
    assert_eq!(resumed.result, Some(json!("from the first run")));
    assert_eq!(std::fs::read_to_string(dir.join("b.txt")).unwrap(), "from the first run");
}
