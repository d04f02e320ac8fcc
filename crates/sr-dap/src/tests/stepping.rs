//! Step over, in and out (through flows and an agent's turns), pause, entry,
//! terminate and parallel branches.

use std::time::Duration;

use serde_json::json;
use sr_runtime::scripted::{Reply, ScriptedProvider, after_tool_results, instruction_contains};

use super::{Harness, MAIN, line};
use crate::debugger::Action;
use crate::protocol::StackTraceArguments;
use crate::stepping::StepKind;

const PROGRAM: &str = concat!(
    reader_header!(),
    "\
flow helper:
    $n = $n + 1
    $n = $n * 10
    return $n

flow main:
    $n = 1
    $n = run helper
    $answer = run agent reader with \"read\"
    log \"done ${n}\"
    return $answer
"
);

fn reader() -> ScriptedProvider {
    ScriptedProvider::new()
        .on(after_tool_results(), vec![Reply::Text("read it".into())])
        .on(instruction_contains("Read files"), vec![Reply::Calls(vec![("read_file".into(), json!({"path": "x"}))])])
}

fn at(h: &Harness) -> (String, i64) {
    h.frames(MAIN)[0].clone()
}

fn frame(name: &str, line: i64) -> (String, i64) {
    (name.to_string(), line)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn step_over_runs_whole_flows_and_agents() {
    let mut h = Harness::new(PROGRAM, reader());
    h.lines(vec![line(19)]);
    h.start(false);
    assert_eq!(h.stopped().await.0, "breakpoint");
    h.step(StepKind::Over);
    assert_eq!(h.stopped().await.0, "step");
    assert_eq!(at(&h), frame("flow main", 20));
    h.step(StepKind::Over);
    h.stopped().await;
    assert_eq!(h.frames(MAIN), [frame("flow main", 21)]);
    assert_eq!(h.var(MAIN, "n").unwrap().value, "20");
    h.step(StepKind::Over);
    h.stopped().await;
    assert_eq!(h.frames(MAIN), [frame("flow main", 22)]);
    assert_eq!(h.var(MAIN, "answer").unwrap().value, "\"read it\"");
    h.step(StepKind::Over);
    h.stopped().await;
    assert_eq!(at(&h), frame("flow main", 23));
    h.step(StepKind::Over);
    assert_eq!(h.terminated().await, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn step_in_enters_flows_and_the_agents_turns_and_step_out_leaves_them() {
    let mut h = Harness::new(PROGRAM, reader());
    h.lines(vec![line(20)]);
    h.start(false);
    h.stopped().await;
    h.step(StepKind::In);
    assert_eq!(h.stopped().await.0, "step");
    assert_eq!(h.frames(MAIN), [frame("flow helper", 14), frame("flow main", 20)]);
    h.step(StepKind::In);
    h.stopped().await;
    assert_eq!(at(&h), frame("flow helper", 15));
    h.step(StepKind::Out);
    h.stopped().await;
    assert_eq!(h.frames(MAIN), [frame("flow main", 21)]);

    // Into the agent: its model call, the reply, its tool call, its next model call.
    h.step(StepKind::In);
    h.stopped().await;
    assert_eq!(h.frames(MAIN), [frame("model openai/test", 9), frame("agent reader", 9), frame("flow main", 21)]);
    h.step(StepKind::In);
    h.stopped().await;
    assert_eq!(at(&h), frame("model openai/test (replied)", 9));
    h.step(StepKind::In);
    h.stopped().await;
    assert_eq!(at(&h), frame("tool read_file", 9));
    h.step(StepKind::Over);
    h.stopped().await;
    assert_eq!(at(&h), frame("model openai/test", 9));
    h.step(StepKind::Out);
    h.stopped().await;
    assert_eq!(h.frames(MAIN), [frame("flow main", 22)]);
    h.resume(MAIN, Action::Continue);
    assert_eq!(h.terminated().await, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn step_over_inside_an_agent_goes_turn_by_turn_then_back_to_the_flow() {
    let mut h = Harness::new(PROGRAM, reader());
    h.functions(&["reader"]);
    h.start(false);
    assert_eq!(h.stopped().await.0, "function breakpoint");
    assert_eq!(at(&h), frame("model openai/test", 9));
    let mut path = Vec::new();
    for _ in 0..5 {
        h.step(StepKind::Over);
        h.stopped().await;
        path.push(at(&h));
    }
    assert_eq!(
        path,
        [
            frame("model openai/test (replied)", 9),
            frame("tool read_file", 9),
            frame("model openai/test", 9),
            frame("model openai/test (replied)", 9),
            frame("flow main", 22)
        ]
    );
    h.cont();
    h.terminated().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stop_on_entry_and_terminate() {
    let mut h = Harness::new(PROGRAM, reader());
    h.start(true);
    assert_eq!(h.stopped().await.0, "entry");
    assert_eq!(h.frames(MAIN), [frame("flow main", 19)]);
    h.debugger.terminate(&Default::default());
    assert_eq!(h.terminated().await, 1);
    assert!(!h.output("stdout").contains("done"), "nothing ran after the terminate");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pause_stops_a_running_flow() {
    let source = "streetrace v1\n\nflow main:\n    $n = 0\n    loop do\n        $n = $n + 1\n    end\n";
    let mut h = Harness::new(source, ScriptedProvider::new());
    h.start(false);
    tokio::time::sleep(Duration::from_millis(50)).await;
    h.debugger.pause();
    assert_eq!(h.stopped().await.0, "pause");
    let (name, line) = at(&h);
    assert_eq!(name, "flow main");
    assert!(line == 5 || line == 6, "{line}");
    let n: i64 = h.var(MAIN, "n").unwrap().value.parse().unwrap();
    assert!(n > 0);
    // It stays paused until resumed.
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(h.var(MAIN, "n").unwrap().value, n.to_string());
    h.debugger.terminate(&Default::default());
    assert_eq!(h.terminated().await, 1);
}

/// `pause` while a model call waits for its first byte stops at once; the
/// same call goes on at `continue` (the scripted model answers each request once).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pause_before_the_first_byte_stops_at_once_and_the_call_goes_on() {
    let provider = reader().with_delay(Duration::from_secs(2));
    let mut h = Harness::new(PROGRAM, provider);
    h.functions(&["reader"]);
    h.start(false);
    h.stopped().await;
    h.cont();
    tokio::time::sleep(Duration::from_millis(100)).await;
    let paused = std::time::Instant::now();
    h.debugger.pause();
    assert_eq!(h.stopped().await.0, "pause");
    assert!(paused.elapsed() < Duration::from_secs(1), "stopped after {:?}", paused.elapsed());
    assert_eq!(
        h.frames(MAIN),
        [frame("model openai/test (replying)", 9), frame("agent reader", 9), frame("flow main", 21)]
    );
    let call = h.scope(h.frame_id(MAIN, 0), "Call");
    let partial = h.children(call).into_iter().find(|v| v.name == "reply so far").unwrap();
    assert_eq!(partial.value, "\"\"", "nothing yet");
    h.cont();
    assert_eq!(h.terminated().await, 0);
    assert!(h.output("console").contains("run completed: read it\n"), "{}", h.output("console"));
}

/// A reply that streams "Hel", then waits: `pause` stops at once with "Hel"
/// visible, and the rest arrives after `continue`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pause_while_streaming_shows_the_reply_so_far() {
    struct Slow;
    impl sr_llm::Provider for Slow {
        fn chat(&self, _request: sr_llm::ChatRequest) -> sr_llm::ChatStream {
            use futures::StreamExt;
            let first = futures::stream::iter([Ok(sr_llm::ChatEvent::TextDelta("Hel".into()))]);
            let rest = futures::stream::once(tokio::time::sleep(Duration::from_secs(2))).flat_map(|_| {
                futures::stream::iter([
                    Ok(sr_llm::ChatEvent::TextDelta("lo".into())),
                    Ok(sr_llm::ChatEvent::Finished { reason: sr_llm::FinishReason::Stop }),
                ])
            });
            first.chain(rest).boxed()
        }
    }
    let source = "streetrace v1\n\nmodel main = openai/test\n\nprompt p: \"\"\"Talk.\"\"\"\n\nagent a:\n    instruction p\n\n\
                  flow main:\n    $r = run agent a with \"go\"\n    return $r\n";
    let mut h = Harness::new(source, Slow);
    h.start(false);
    tokio::time::sleep(Duration::from_millis(300)).await;
    let paused = std::time::Instant::now();
    h.debugger.pause();
    assert_eq!(h.stopped().await.0, "pause");
    assert!(paused.elapsed() < Duration::from_secs(1), "stopped after {:?}", paused.elapsed());
    let call = h.scope(h.frame_id(MAIN, 0), "Call");
    let partial = h.children(call).into_iter().find(|v| v.name == "reply so far").unwrap();
    assert_eq!(partial.value, "\"Hel\"");
    h.cont();
    assert_eq!(h.terminated().await, 0);
    assert!(h.output("console").contains("run completed: Hello"), "{}", h.output("console"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn parallel_branches_are_threads() {
    let source = "\
streetrace v1

model main = openai/test

prompt reader_instruction: \"\"\"Read files.\"\"\"

agent reader:
    instruction reader_instruction

flow main:
    parallel do
        $a = run agent reader with \"one\"
        $b = run agent reader with \"two\"
    end
    return $a
";
    let provider = ScriptedProvider::new().always(instruction_contains("Read files"), Reply::Text("x".into()));
    let mut h = Harness::new(source, provider);
    h.lines(vec![line(13)]);
    h.start(false);
    let (reason, thread) = h.stopped().await;
    assert_eq!(reason, "breakpoint");
    assert_ne!(thread, MAIN);
    let threads: Vec<i64> = h.debugger.threads().iter().map(|t| t.id).collect();
    assert!(threads.contains(&MAIN) && threads.contains(&thread), "{threads:?}");
    assert_eq!(h.frames(thread), [frame("flow main", 13)]);
    let main = StackTraceArguments { thread_id: MAIN, ..Default::default() };
    assert!(h.debugger.stack_trace(main).is_err(), "the main thread is not stopped");
    h.resume(thread, Action::Continue);
    assert_eq!(h.terminated().await, 0);
    assert_eq!(h.debugger.threads().len(), 1, "the branches ended");
}

const PARALLEL: &str = "\
streetrace v1

flow main:
    $a = 0
    parallel do
        $a = 1
        $b = 2
    end
    return {a: $a, b: $b}
";

/// Step in at `parallel do` stops in every branch; a step on one branch
/// leaves the other where it is; the parent's step ends after the block.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn step_in_enters_parallel_branches_and_a_step_moves_only_its_thread() {
    let mut h = Harness::new(PARALLEL, ScriptedProvider::new());
    h.lines(vec![line(5)]);
    h.start(false);
    assert_eq!(h.stopped().await, ("breakpoint".to_string(), MAIN));
    h.step(StepKind::In);
    let mut stops = vec![h.stopped().await, h.stopped().await];
    stops.sort();
    assert_eq!(stops, [("step".to_string(), 2), ("step".to_string(), 3)]);
    assert_eq!(h.frames(2), [frame("flow main", 6)]);
    assert_eq!(h.frames(3), [frame("flow main", 7)]);

    // Stepping branch 2 over its statement ends it; branch 3 stays stopped.
    h.resume(2, Action::Step(StepKind::Over));
    tokio::time::sleep(Duration::from_millis(100)).await;
    let threads: Vec<i64> = h.debugger.threads().iter().map(|t| t.id).collect();
    assert_eq!(threads, [MAIN, 3], "branch 2 ended");
    assert_eq!(h.frames(3), [frame("flow main", 7)], "branch 3 did not move");
    assert!(h.var(3, "b").is_none());

    // Branch 3 alone goes on; the main thread's step in ends after the block.
    h.resume_single(3);
    assert_eq!(h.stopped().await, ("step".to_string(), MAIN));
    assert_eq!(h.frames(MAIN), [frame("flow main", 9)]);
    assert_eq!((h.var(MAIN, "a").unwrap().value, h.var(MAIN, "b").unwrap().value), ("1".into(), "2".into()));
    h.cont();
    assert_eq!(h.terminated().await, 0);
}

/// Step over a `parallel do` runs the whole block: no branch stops.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn step_over_a_parallel_block_runs_its_branches() {
    let mut h = Harness::new(PARALLEL, ScriptedProvider::new());
    h.lines(vec![line(5)]);
    h.start(false);
    h.stopped().await;
    h.step(StepKind::Over);
    assert_eq!(h.stopped().await, ("step".to_string(), MAIN));
    assert_eq!(h.frames(MAIN), [frame("flow main", 9)]);
    h.cont();
    assert_eq!(h.terminated().await, 0);
}
