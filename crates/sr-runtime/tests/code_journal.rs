//! A coding agent's steps are effects in the journal: a replay, a run going
//! back in time and a resumed run are served what the code did without
//! running it again, and a divergence in the code's tool calls stops the run
//! whatever the code or the flow around it catches.
#![allow(clippy::unwrap_used)]

mod common;

use std::path::Path;
use std::sync::Arc;

use common::{Offline, Options, recording, run_file, serving, work_dir};
use serde_json::json;
use sr_runtime::event::{Payload, RunStatus};
use sr_runtime::in_doubt::{Always, Decision};
use sr_runtime::journal::Mode;
use sr_runtime::scripted::{Reply, ScriptedProvider};

fn code(body: &str) -> Reply {
    Reply::Text(format!("```python\n{body}\n```"))
}

/// A coding agent on the host (`unsandboxed`, with `open`), run by a flow
/// whose `on failure:` would turn any failure into "handled".
fn workload(dir: &Path) -> std::path::PathBuf {
    let source = r#"
model main = openai/gpt-4o

executor local:
    backend: unsandboxed
    files: true
    allow: [os]

tool fs = builtin streetrace.fs

prompt solver: """You solve tasks with code."""

agent coder:
    instruction solver
    tools fs
    executor local

flow main:
    $answer = run agent coder with "go"
    on failure:
        return "handled"
    return $answer
"#;
    let path = dir.join("code.sr");
    std::fs::write(&path, source).unwrap();
    path
}

fn unsandboxed(journal: Arc<sr_runtime::journal::Journal>, dir: &Path) -> Options {
    Options {
        journal,
        work_dir: dir.to_path_buf(),
        options: sr_runtime::RunOptions { allow_unsandboxed: true, ..Default::default() },
        ..Default::default()
    }
}

/// The host side effects of the code: one line per run of its first step.
fn runs(counter: &Path) -> usize {
    std::fs::read_to_string(counter).unwrap_or_default().lines().count()
}

fn printed(run: &common::Run) -> Vec<String> {
    run.payloads()
        .into_iter()
        .filter_map(|p| match p {
            Payload::CodeOutput { text, .. } => Some(text.clone()),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn replays_and_time_travel_serve_the_steps_without_running_the_code() {
    let dir = work_dir("code-journal");
    let host = work_dir("code-journal-host");
    let counter = host.join("counter.txt");
    let work = dir.display().to_string();
    let first = format!(
        "with open({counter:?}, 'a') as f:\n    f.write('ran\\n')\n\
         write_file(path='tool.txt', content='by a tool')\n\
         with open({work:?} + '/direct.txt', 'w') as f:\n    f.write('by the code')\n\
         write_file(path='gone.txt', content='briefly')\n\
         import os\nos.remove({work:?} + '/gone.txt')\n\
         print('step one ran')",
        counter = counter.display().to_string(),
    );
    let model = Arc::new(
        ScriptedProvider::new().on(|_| true, vec![code(&first), code("final_answer(read_file(path='tool.txt'))")]),
    );
    let (path, cassette) = (workload(&dir), host.join("run.jsonl"));
    let live = run_file(&path, "go", model.clone(), unsandboxed(recording(&cassette, &dir), &dir)).await;
    assert_eq!(live.outcome.status, RunStatus::Completed, "{:?}", live.outcome.error);
    assert_eq!(runs(&counter), 1);
    assert_eq!(model.requests().len(), 2);
    let text = std::fs::read_to_string(&cassette).unwrap();
    let steps: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|l| l["kind"] == "tool" && l["name"] == "code")
        .collect();
    assert_eq!(steps.len(), 2, "each step is journaled");
    assert_eq!(steps[0]["args"]["step"], json!(1));

    for mode in [Mode::Replay, Mode::Travel] {
        // The files as they were before the run: the replay must make them.
        for file in ["tool.txt", "direct.txt"] {
            let _ = std::fs::remove_file(dir.join(file));
        }
        let journal = serving(mode, &text, &dir, None);
        if mode == Mode::Travel {
            journal.rewind_files().unwrap();
        }
        let served = run_file(&path, "go", Arc::new(Offline), unsandboxed(journal, &dir)).await;
        assert_eq!(served.outcome.status, RunStatus::Completed, "{mode:?}: {:?}", served.outcome.error);
        assert_eq!(served.outcome.result, live.outcome.result, "{mode:?}");
        assert_eq!(runs(&counter), 1, "{mode:?}: the code ran again");
        assert_eq!(std::fs::read_to_string(dir.join("tool.txt")).unwrap(), "by a tool", "{mode:?}");
        assert_eq!(std::fs::read_to_string(dir.join("direct.txt")).unwrap(), "by the code", "{mode:?}");
        assert!(!dir.join("gone.txt").exists(), "{mode:?}: a file the code removed is back");
        // The served steps' events, and its tool calls' (served through the journal).
        assert_eq!(printed(&served), printed(&live), "{mode:?}");
        let tools = |run: &common::Run| {
            run.payloads()
                .into_iter()
                .filter_map(|p| match p {
                    Payload::ToolCall { tool, .. } => Some(tool.clone()),
                    _ => None,
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(tools(&served), ["write_file", "write_file", "read_file"], "{mode:?}");
    }
}

/// The journal of a run cut off by a crash while the step's code ran: what
/// came before the step's `tool` line.
fn cut_off_in_step(text: &str, step: u64) -> String {
    text.lines()
        .take_while(|l| {
            let line: serde_json::Value = serde_json::from_str(l).unwrap();
            !(line["kind"] == "tool" && line["name"] == "code" && line["args"]["step"] == step)
        })
        .flat_map(|l| [l, "\n"])
        .collect()
}

#[tokio::test]
async fn code_that_catches_a_diverging_call_still_stops_the_run_at_that_call() {
    let dir = work_dir("code-diverge");
    let host = work_dir("code-diverge-host");
    let (source, counter) = (host.join("source.txt"), host.join("counter.txt"));
    std::fs::write(&source, "one").unwrap();
    let body = format!(
        "with open({counter:?}, 'a') as f:\n    f.write('ran\\n')\n\
         try:\n    write_file(path='out.txt', content=open({source:?}).read())\n\
         except Exception as e:\n    print('caught', e)\n\
         final_answer('done')",
        counter = counter.display().to_string(),
        source = source.display().to_string(),
    );
    let model = Arc::new(ScriptedProvider::new().on(|_| true, vec![code(&body)]));
    let (path, cassette) = (workload(&dir), host.join("run.jsonl"));
    let live = run_file(&path, "go", model, unsandboxed(recording(&cassette, &dir), &dir)).await;
    assert_eq!(live.outcome.result, Some(json!("done")), "{:?}", live.outcome.error);
    assert_eq!(runs(&counter), 1, "{:#?}", live.payloads());

    // A crash cut the step off; resumed with `retry`, the code runs again and
    // now asks for other arguments than the journal's call had.
    std::fs::write(&source, "two").unwrap();
    let text = cut_off_in_step(&std::fs::read_to_string(&cassette).unwrap(), 1);
    let resumed_at = host.join("resumed.jsonl");
    let journal = Arc::new(
        Arc::try_unwrap(serving(Mode::Resume, &text, &dir, Some(&resumed_at)))
            .ok()
            .unwrap()
            .deciding("inv", Arc::new(Always(Decision::Retry))),
    );
    let resumed = run_file(&path, "go", Arc::new(Offline), unsandboxed(journal, &dir)).await;
    assert_eq!(runs(&counter), 2, "retried: the step ran again");
    assert_eq!(resumed.outcome.status, RunStatus::Failed, "{:?}", resumed.outcome.result);
    let error = resumed.outcome.error.clone().unwrap().message;
    assert!(error.starts_with("the run diverged from its journal"), "{error}");
    assert!(error.contains("the arguments of tool 'write_file' differ"), "{error}");
    assert!(error.contains("/content: recorded \"one\", requested \"two\""), "{error}");
    assert!(error.contains("made by the code of coding agent 'coder', step 1"), "{error}");
    let statement = std::fs::read_to_string(&path).unwrap().lines().position(|l| l.contains("run agent coder"));
    let at = resumed.outcome.error.as_ref().and_then(|e| e.location.as_ref()).map(|l| l.line as usize);
    assert_eq!(at, statement.map(|i| i + 1), "the statement that ran the agent");
    assert!(!printed(&resumed).iter().any(|t| t.contains("caught")), "the code caught the divergence");
    assert_eq!(std::fs::read_to_string(dir.join("out.txt")).unwrap(), "one", "the diverged call was made");

    // The step's end is journaled: a replay of the failed run ends (it does
    // not wait for the step), and runs nothing.
    let text = std::fs::read_to_string(&resumed_at).unwrap();
    let replay = tokio::time::timeout(
        std::time::Duration::from_secs(30),
        run_file(&path, "go", Arc::new(Offline), unsandboxed(serving(Mode::Replay, &text, &dir, None), &dir)),
    )
    .await
    .expect("the replay waited for the stopped step");
    assert_eq!(replay.outcome.status, RunStatus::Failed);
    assert_eq!(runs(&counter), 2);
}

#[tokio::test]
async fn a_step_cut_off_and_skipped_is_not_run_again_and_the_model_is_told() {
    let dir = work_dir("code-skip");
    let host = work_dir("code-skip-host");
    let counter = host.join("counter.txt");
    let body = format!(
        "with open({counter:?}, 'a') as f:\n    f.write('ran\\n')\nwrite_file(path='a.txt', content='x')\nprint('one')",
        counter = counter.display().to_string()
    );
    let replies = || vec![code(&body), code("final_answer('done')")];
    let model = Arc::new(ScriptedProvider::new().on(|_| true, replies()));
    let (path, cassette) = (workload(&dir), host.join("run.jsonl"));
    let live = run_file(&path, "go", model, unsandboxed(recording(&cassette, &dir), &dir)).await;
    assert_eq!(live.outcome.result, Some(json!("done")), "{:?}", live.outcome.error);

    // Cut off in step 1, after its tool call: resumed with the default
    // decision (skip), the code is not run again and the model reads why.
    let text = cut_off_in_step(&std::fs::read_to_string(&cassette).unwrap(), 1);
    let resumed_at = host.join("resumed.jsonl");
    let journal = serving(Mode::Resume, &text, &dir, Some(&resumed_at));
    let model = Arc::new(ScriptedProvider::new().on(|_| true, vec![code("final_answer('after the cut')")]));
    let resumed = run_file(&path, "go", model.clone(), unsandboxed(journal, &dir)).await;
    assert_eq!(resumed.outcome.status, RunStatus::Completed, "{:?}", resumed.outcome.error);
    assert_eq!(resumed.outcome.result, Some(json!("after the cut")));
    assert_eq!(runs(&counter), 1, "the step cut off ran again");
    let told = model.requests()[0].messages.last().unwrap().text();
    assert!(told.contains("was cut off when the run was interrupted"), "{told}");

    // A replay of the resumed run passes over the cut-off step's calls as it did.
    let text = std::fs::read_to_string(&resumed_at).unwrap();
    let replay =
        run_file(&path, "go", Arc::new(Offline), unsandboxed(serving(Mode::Replay, &text, &dir, None), &dir)).await;
    assert_eq!(replay.outcome.result, Some(json!("after the cut")), "{:?}", replay.outcome.error);
    assert_eq!(runs(&counter), 1);
}

/// `on failure:` handles a step's failure, never a divergence from the journal.
#[tokio::test]
async fn on_failure_does_not_catch_a_diverging_step() {
    let dir = work_dir("flow-diverge");
    let source = r#"
tool fs = builtin streetrace.fs

flow main:
    $text = fs.read_file($input_prompt)
    on failure:
        return "handled"
    return $text
"#;
    let path = dir.join("flow.sr");
    std::fs::write(&path, source).unwrap();
    std::fs::write(dir.join("a.txt"), "A").unwrap();
    let cassette = dir.join("run.jsonl");
    let options = |journal| Options { journal, work_dir: dir.clone(), ..Default::default() };
    let live = run_file(&path, "a.txt", Arc::new(Offline), options(recording(&cassette, &dir))).await;
    assert_eq!(live.outcome.result, Some(json!("A")), "{:?}", live.outcome.error);
    let missing = run_file(
        &path,
        "missing.txt",
        Arc::new(Offline),
        options(Arc::new(sr_runtime::journal::Journal::unrecorded())),
    )
    .await;
    assert_eq!(missing.outcome.result, Some(json!("handled")), "a failure is handled");

    let text = std::fs::read_to_string(&cassette).unwrap();
    let replay = run_file(&path, "b.txt", Arc::new(Offline), options(serving(Mode::Replay, &text, &dir, None))).await;
    assert_eq!(replay.outcome.status, RunStatus::Failed, "{:?}", replay.outcome.result);
    let error = replay.outcome.error.unwrap();
    assert!(error.message.starts_with("the run diverged from its journal"), "{}", error.message);
    assert!(error.message.contains("recorded \"a.txt\", requested \"b.txt\""), "{}", error.message);
    assert_eq!(error.location.map(|l| l.line), Some(5), "the statement that diverged");
}

/// `retry` runs a step a crash cut off again; the tool calls it had made are
/// served from the journal, not made again.
#[tokio::test]
async fn a_step_cut_off_and_retried_runs_again_with_its_calls_served() {
    let dir = work_dir("code-retry");
    let host = work_dir("code-retry-host");
    let counter = host.join("counter.txt");
    let body = format!(
        "with open({counter:?}, 'a') as f:\n    f.write('ran\\n')\nwrite_file(path='a.txt', content='x')\nfinal_answer('done')",
        counter = counter.display().to_string()
    );
    let model = Arc::new(ScriptedProvider::new().on(|_| true, vec![code(&body)]));
    let (path, cassette) = (workload(&dir), host.join("run.jsonl"));
    let live = run_file(&path, "go", model, unsandboxed(recording(&cassette, &dir), &dir)).await;
    assert_eq!(live.outcome.result, Some(json!("done")), "{:?}", live.outcome.error);

    std::fs::remove_file(dir.join("a.txt")).unwrap();
    let text = cut_off_in_step(&std::fs::read_to_string(&cassette).unwrap(), 1);
    let resumed_at = host.join("resumed.jsonl");
    let journal = Arc::new(
        Arc::try_unwrap(serving(Mode::Resume, &text, &dir, Some(&resumed_at)))
            .ok()
            .unwrap()
            .deciding("inv", Arc::new(Always(Decision::Retry))),
    );
    let resumed = run_file(&path, "go", Arc::new(Offline), unsandboxed(journal, &dir)).await;
    assert_eq!(resumed.outcome.result, Some(json!("done")), "{:?}", resumed.outcome.error);
    assert_eq!(runs(&counter), 2, "the step ran again");
    assert!(!dir.join("a.txt").exists(), "write_file was called again rather than served");
    let in_doubt =
        resumed.payloads().into_iter().filter(|p| matches!(p, Payload::ToolInDoubt { tool, .. } if tool == "code"));
    assert_eq!(in_doubt.count(), 1);
    // The resumed journal says how the directory differs from the cut-off
    // step's start (a.txt is gone), what was decided and what the step did.
    let added = std::fs::read_to_string(&resumed_at).unwrap()[text.len()..].to_string();
    let kinds: Vec<String> = added
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .map(|l| {
            format!("{} {}", l["kind"].as_str().unwrap(), l["name"].as_str().or(l["decision"].as_str()).unwrap_or(""))
        })
        .collect();
    assert_eq!(kinds, ["files ", "in_doubt retry", "tool_start code", "tool code", "end "]);
}
