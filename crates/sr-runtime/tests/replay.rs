//! A replay emits the events of the live run it was recorded from, in the
//! same order, also where the live run timed out, cancelled a branch or ran
//! branches at once.
#![allow(clippy::unwrap_used)]

mod common;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use common::{Offline, Options, recording, run_file, serving};
use futures::StreamExt;
use serde_json::json;
use sr_llm::{ChatEvent, ChatRequest, ChatStream, FinishReason, Provider};
use sr_runtime::event::{Event, Payload, RunStatus};
use sr_runtime::journal::Mode;
use sr_runtime::scripted::{Reply, ScriptedProvider, user_says};

/// The events of each producer in order: branches run at once interleave
/// their events differently from run to run, each branch's own order is fixed.
fn story(events: &[Event]) -> BTreeMap<String, Vec<String>> {
    let mut story: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for event in events {
        story.entry(event.path.join("/")).or_default().push(serde_json::to_string(&event.payload).unwrap());
    }
    story
}

fn order(events: &[Event]) -> Vec<String> {
    events.iter().map(|e| format!("{} {:?}", e.path.join("/"), e.payload)).collect()
}

/// Runs `source` live, recorded, then `replays` times from the recording;
/// every replay must end and emit the live run's events, in its order.
async fn record_and_replay(name: &str, source: &str, model: Arc<dyn Provider>, replays: usize) -> common::Run {
    let dir = common::work_dir(&format!("replay-{name}"));
    let (workload, cassette) = (dir.join(format!("{name}.sr")), dir.join("run.cassette.jsonl"));
    std::fs::write(&workload, source).unwrap();
    let live =
        run_file(&workload, "go", model, Options { journal: recording(&cassette, &dir), ..Options::default() }).await;
    let text = std::fs::read_to_string(&cassette).unwrap();
    for _ in 0..replays {
        let journal = serving(Mode::Replay, &text, &dir, None);
        let replay = run_file(&workload, "go", Arc::new(Offline), Options { journal, ..Options::default() }).await;
        assert_eq!(replay.outcome.status, live.outcome.status, "{:?}", replay.outcome.error);
        assert_eq!(replay.outcome.result, live.outcome.result);
        assert_eq!(replay.outcome.error.as_ref().map(|e| &e.message), live.outcome.error.as_ref().map(|e| &e.message));
        assert_eq!(story(&replay.events), story(&live.events));
        // Branches' events come out in the order they came in the live run,
        // on one thread or several.
        assert_eq!(order(&replay.events), order(&live.events));
    }
    live
}

#[tokio::test(start_paused = true)]
async fn a_replay_times_out_where_the_live_run_timed_out() {
    let source = common::TIMED_OUT_AND_RETRIED;
    // The timeout strikes before the model's first word, and after it.
    let silent = ScriptedProvider::new()
        .always(|_| true, Reply::Text("a late answer".into()))
        .with_delay(Duration::from_secs(60));
    let live = record_and_replay("timeout", source, Arc::new(silent), 2).await;
    assert_eq!(live.outcome.result, Some(json!("gave up")));
    let live = record_and_replay("timeout-mid-reply", source, Arc::new(Stalling), 2).await;
    assert_eq!(live.outcome.result, Some(json!("gave up")));
}

/// Says its first words at once, then nothing for an hour.
struct Stalling;

impl Provider for Stalling {
    fn chat(&self, _: ChatRequest) -> ChatStream {
        let first = futures::stream::iter([Ok(ChatEvent::TextDelta("a late ".into()))]);
        let rest = futures::stream::once(tokio::time::sleep(Duration::from_secs(3600))).flat_map(|()| {
            futures::stream::iter([
                Ok(ChatEvent::TextDelta("answer".into())),
                Ok(ChatEvent::Finished { reason: FinishReason::Stop }),
            ])
        });
        first.chain(rest).boxed()
    }
}

#[tokio::test(start_paused = true)]
async fn a_replay_cancels_the_branch_the_live_run_cancelled() {
    let source = common::FAILING_BRANCH;
    let slow = ScriptedProvider::new().always(user_says("slow"), Reply::Text("late".into()));
    let model = common::FailFast { slow: slow.with_delay(Duration::from_secs(3600)) };
    let live = record_and_replay("cancel", source, Arc::new(model), 2).await;
    assert_eq!(live.outcome.status, RunStatus::Failed);
    let cancelled = live
        .payloads()
        .into_iter()
        .any(|p| matches!(p, Payload::AgentFinished { error: Some(e), .. } if e == "cancelled"));
    assert!(cancelled, "the slow branch was cancelled");
}

#[tokio::test]
async fn parallel_branches_replay_in_the_live_order_every_time() {
    parallel_branches("parallel").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn parallel_branches_on_threads_replay_to_the_same_story_every_time() {
    parallel_branches("parallel-threads").await;
}

async fn parallel_branches(name: &str) {
    let source = r#"
model main = openai/gpt-4o
prompt echo: """Repeat the input."""
agent echo:
    instruction echo

flow main:
    parallel do
        $a = run agent echo with "one"
        $b = run agent echo with "two"
        $c = run agent echo with "three"
        $d = run agent echo with "three"
    end
    return [$a, $b, $c, $d]
"#;
    // Identical requests ("three" twice) get their answers in recorded order,
    // whichever branch asks first.
    let model = ScriptedProvider::new()
        .on(user_says("one"), vec![Reply::Text("1".into())])
        .on(user_says("two"), vec![Reply::Text("2".into())])
        .on(user_says("three"), vec![Reply::Text("3".into()), Reply::Text("3".into())])
        .with_delay(Duration::from_millis(5));
    let live = record_and_replay(name, source, Arc::new(model), 5).await;
    assert_eq!(live.outcome.result, Some(json!([1, 2, 3, 3])));
}

/// A person answering at the prompt, counted.
struct Person(std::sync::atomic::AtomicUsize);

impl sr_runtime::human::Human for Person {
    fn ask<'a>(&'a self, message: &'a str) -> futures::future::BoxFuture<'a, Option<String>> {
        let n = self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Box::pin(std::future::ready(Some(format!("{message} {n}"))))
    }
}

/// Answers a person gives during a run are journaled: its replay is given
/// them and asks nobody.
#[tokio::test(flavor = "multi_thread")]
async fn answers_given_during_a_run_are_served_to_its_replay() {
    use sr_runtime::launch::{LaunchSpec, Models, Recording, launch};
    let dir = tempfile::Builder::new().prefix("sr-runtime-answers-").tempdir().unwrap();
    let source = "flow main:\n    escalate to human \"first\"\n    $a = $human_input\n    \
                  escalate to human \"second\"\n    return $a + \", \" + $human_input\n";
    std::fs::write(dir.path().join("w.sr"), source).unwrap();
    let recording = dir.path().join("rec.jsonl");
    let run = |models: Models, person: Arc<Person>| {
        let program =
            sr_runtime::compile::compile_path(&mut sr_hir::RootDatabase::default(), &dir.path().join("w.sr")).unwrap();
        let launched = launch(LaunchSpec {
            program,
            message: String::new(),
            work_dir: dir.path().to_path_buf(),
            read_only: false,
            storage: None,
            models,
            options: sr_runtime::RunOptions::default(),
            human: person,
            in_doubt: sr_runtime::in_doubt::skip_all(),
        })
        .unwrap();
        async move { launched.run(Arc::new(sr_runtime::hook::NoHook), Vec::new()).await.unwrap() }
    };
    let person = Arc::new(Person(0.into()));
    let scripted = Models::Provider { provider: Arc::new(ScriptedProvider::new()), record: Some(recording.clone()) };
    let live = run(scripted, person.clone()).await;
    assert_eq!(live.result, Some(json!("first 0, second 1")), "{:?}", live.error);
    assert_eq!(person.0.load(std::sync::atomic::Ordering::SeqCst), 2);

    let nobody = Arc::new(Person(0.into()));
    let replayed = run(Models::Replay(Recording::File(recording.clone())), nobody.clone()).await;
    assert_eq!(replayed.status, Some(RunStatus::Completed), "{:?}", replayed.error);
    assert_eq!(replayed.result, Some(json!("first 0, second 1")));
    assert_eq!(nobody.0.load(std::sync::atomic::Ordering::SeqCst), 0, "the replay asked a person");

    // A run going back in time in a recording goes live: it is no replay.
    let text = std::fs::read_to_string(&recording).unwrap();
    let program =
        sr_runtime::compile::compile_path(&mut sr_hir::RootDatabase::default(), &dir.path().join("w.sr")).unwrap();
    let spec = LaunchSpec {
        program,
        message: String::new(),
        work_dir: dir.path().to_path_buf(),
        read_only: false,
        storage: None,
        models: Models::Replay(Recording::Text(text.clone())),
        options: sr_runtime::RunOptions::default(),
        human: nobody,
        in_doubt: sr_runtime::in_doubt::skip_all(),
    };
    let refused = sr_runtime::launch::launch_continuing(spec, text);
    assert!(matches!(refused, Err(sr_runtime::launch::LaunchError::ReplayContinued)));
}

/// A branch that was connecting to an MCP server when a sibling branch
/// failed: the live run journaled no listing of the server. Its replay fails
/// the same way, with no server started, instead of failing the branch at
/// once for a server without tools.
#[tokio::test(flavor = "multi_thread")]
async fn a_replay_cancels_the_branch_the_live_run_cut_off_while_it_connected_a_server() {
    use sr_runtime::launch::{LaunchSpec, Models, Recording, launch};
    let dir = tempfile::Builder::new().prefix("sr-runtime-mcp-cut-").tempdir().unwrap();
    let (work, started) = (dir.path().join("work"), dir.path().join("started.txt"));
    std::fs::create_dir(&work).unwrap();
    // A server that never answers: it only counts its starts.
    let source = format!(
        "tool fs = builtin streetrace.fs\n\
         tool slow = mcp \"stdio:sh -c 'echo started >> {}; sleep 5'\"\n\
         flow main:\n    parallel do\n        slow.bump(\"x\")\n        $v = 1\n        \
         fs.write_file(\"v.txt\", str($v))\n    end\n",
        started.display()
    );
    std::fs::write(dir.path().join("w.sr"), source).unwrap();
    let recording = dir.path().join("rec.jsonl");
    let run = |models: Models| {
        let program =
            sr_runtime::compile::compile_path(&mut sr_hir::RootDatabase::default(), &dir.path().join("w.sr")).unwrap();
        let launched = launch(LaunchSpec {
            program,
            message: String::new(),
            work_dir: work.clone(),
            read_only: false,
            storage: None,
            models,
            options: sr_runtime::RunOptions::default(),
            human: Arc::new(sr_runtime::human::Unattended),
            in_doubt: sr_runtime::in_doubt::skip_all(),
        })
        .unwrap();
        async move { launched.run(Arc::new(sr_runtime::hook::NoHook), Vec::new()).await.unwrap() }
    };
    let scripted = Models::Provider { provider: Arc::new(ScriptedProvider::new()), record: Some(recording.clone()) };
    let live = run(scripted).await;
    assert_eq!(live.status, Some(RunStatus::Failed));
    let error = live.error.clone().unwrap();
    assert!(error.contains("'$v' is not defined"), "{error}");
    let text = std::fs::read_to_string(&recording).unwrap();
    assert!(!text.contains("mcp_tools"), "the server was listed: {text}");
    // A server the live run spawned as it was cancelled may write its line
    // late on a busy machine: counts are taken once that has had time.
    let starts = || {
        std::thread::sleep(Duration::from_secs(2));
        std::fs::read_to_string(&started).unwrap_or_default().lines().count()
    };
    let live_starts = starts();

    let replay = Models::Replay(Recording::File(recording.clone()));
    let replayed = tokio::time::timeout(Duration::from_secs(30), run(replay)).await.expect("the replay ends");
    assert_eq!(replayed.status, live.status);
    assert_eq!(replayed.error, live.error);
    assert_eq!(starts(), live_starts, "the replay started the server");
}

/// Nested `parallel` blocks in concurrent branches start in an order timing
/// decides: the live run's slow branch starts its block last, a replay (served
/// at once) may start it first. Each branch gets the thread id it had, so the
/// events' `branch:ID` paths are the live run's, which `sr serve`'s time
/// travel follows a replay's branches by.
#[tokio::test]
async fn nested_blocks_in_concurrent_branches_replay_with_their_thread_ids() {
    let source = r#"
model main = openai/gpt-4o
prompt echo: """Repeat the input."""
agent echo:
    instruction echo

flow slow:
    $s = run agent echo with "slow"
    parallel do
        $a = 1
        $b = 2
    end
    return $s

flow quick:
    parallel do
        $c = 3
        $d = 4
    end
    return $c + $d

flow main:
    parallel do
        $x = run slow
        $y = run quick
    end
    return [$x, $y]
"#;
    let model = ScriptedProvider::new()
        .on(user_says("slow"), vec![Reply::Text("s".into())])
        .with_delay(Duration::from_millis(50));
    let live = record_and_replay("nested-ids", source, Arc::new(model), 3).await;
    assert_eq!(live.outcome.result, Some(json!(["s", 7])));
}
