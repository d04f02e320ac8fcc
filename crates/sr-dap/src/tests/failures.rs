//! Failures stop where they happen: an uncaught one by default, with the
//! thread's state still there to inspect; caught ones, tool and model errors
//! when their filters are on; a branch's on the branch's own thread.

use serde_json::json;
use sr_runtime::scripted::{Reply, ScriptedProvider, after_tool_results, instruction_contains};

use super::{Harness, MAIN};
use crate::inspect::InspectError;
use crate::protocol::StackTraceArguments;

const READER: &str = concat!(
    reader_header!(),
    "\
flow main:
    $answer = run agent reader with \"read it\"
    return $answer
"
);

fn frame(name: &str, line: i64) -> (String, i64) {
    (name.to_string(), line)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_uncaught_failure_stops_at_the_failing_statement_before_the_run_ends() {
    let source = "\
streetrace v1

flow check:
    $limit = {max: 3}
    if $n > 1:
        $y = $limit.min + 1
    return $limit

flow main:
    $n = 2
    $r = run check
    return $r
";
    let mut h = Harness::new(source, ScriptedProvider::new());
    h.start(false);
    assert_eq!(h.stopped().await, ("exception".to_string(), MAIN));
    assert_eq!(h.frames(MAIN), [frame("flow check", 6), frame("flow main", 11)]);
    let info = h.debugger.exception_info(MAIN).unwrap();
    assert_eq!(
        (info.exception_id.as_str(), info.description.as_str(), info.break_mode.as_str()),
        ("uncaught", "no field 'min' (fields: max)", "unhandled")
    );
    // Inspectable: the failing flow's variables, and evaluation in its frame.
    assert_eq!(h.var(MAIN, "limit").unwrap().value, "{\"max\":3}");
    assert_eq!(h.evaluate(Some(h.frame_id(MAIN, 0)), "$n * $limit.max"), Ok("6".to_string()));
    assert!(!h.output("stderr").contains("run failed"), "the run has not ended yet");
    h.cont();
    assert_eq!(h.terminated().await, 1);
    assert!(h.output("stderr").contains("run failed: no field 'min' (fields: max)"), "{}", h.output("stderr"));

    // With every filter off, the run just fails.
    let mut h = Harness::new(source, ScriptedProvider::new());
    h.exceptions(&[]);
    h.start(false);
    assert_eq!(h.terminated().await, 1);
}

const GUARDED: &str = "\
streetrace v1

flow main:
    $n = 1
    $y = $n.value
    on failure:
        $n = 2
    return $n
";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_caught_failure_stops_only_with_its_filter_and_the_handler_still_runs() {
    let mut h = Harness::new(GUARDED, ScriptedProvider::new());
    h.start(false);
    assert_eq!(h.terminated().await, 0, "caught: no stop by default");
    assert!(h.output("console").contains("run completed: 2"), "{}", h.output("console"));

    let mut h = Harness::new(GUARDED, ScriptedProvider::new());
    h.exceptions(&["caught"]);
    h.start(false);
    assert_eq!(h.stopped().await.0, "exception");
    assert_eq!(h.frames(MAIN), [frame("flow main", 5)]);
    let info = h.debugger.exception_info(MAIN).unwrap();
    assert_eq!((info.exception_id.as_str(), info.break_mode.as_str()), ("caught", "always"));
    h.cont();
    assert_eq!(h.terminated().await, 0);
    assert!(h.output("console").contains("run completed: 2"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_branch_stops_on_its_own_thread() {
    let source = "\
streetrace v1

flow main:
    $a = {x: 0}
    parallel do
        $a = {x: 1}
        $b = $a.y
        $c = 3
    end
    return $a
";
    let mut h = Harness::new(source, ScriptedProvider::new());
    h.start(false);
    let (reason, thread) = h.stopped().await;
    // Branches are runtime threads 1, 2, 3: the second is DAP thread 3.
    assert_eq!((reason.as_str(), thread), ("exception", 3));
    assert_eq!(h.frames(3), [frame("flow main", 7)]);
    assert_eq!(h.debugger.exception_info(3).unwrap().description, "no field 'y' (fields: x)");
    assert_eq!(h.var(3, "a").unwrap().value, "{\"x\":0}", "the branch has its own copy of the variables");
    let main = StackTraceArguments { thread_id: MAIN, ..Default::default() };
    let refused = h.debugger.stack_trace(main).unwrap_err();
    assert_eq!(
        (refused.clone(), refused.to_string()),
        (InspectError::NotStopped(1), "thread 1 is not stopped".to_string())
    );
    h.cont();
    assert_eq!(h.terminated().await, 1);
    assert_eq!(h.continued, [3], "continuing names thread 1; thread 3 is told it runs on");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tool_errors_stop_at_the_failing_call() {
    let provider = || {
        ScriptedProvider::new().on(after_tool_results(), vec![Reply::Text("it is missing".into())]).on(
            instruction_contains("Read files"),
            vec![Reply::Calls(vec![("read_file".into(), json!({"path": "gone"}))])],
        )
    };
    let mut h = Harness::new(READER, provider());
    h.exceptions(&["tool-error"]);
    h.start(false);
    assert_eq!(h.stopped().await.0, "exception");
    let info = h.debugger.exception_info(MAIN).unwrap();
    assert_eq!((info.exception_id.as_str(), info.break_mode.as_str()), ("tool-error", "always"));
    assert!(info.description.starts_with("tool 'read_file' failed: "), "{}", info.description);
    assert!(info.description.contains("No such file"), "{}", info.description);
    assert_eq!(h.frames(MAIN), [frame("tool read_file", 9), frame("agent reader", 9), frame("flow main", 14)]);
    h.cont();
    assert_eq!(h.terminated().await, 0, "the model got the error and answered");
    let console = h.output("console");
    // Shown at the statement that ran the agent, once.
    let shown = "failure at test.sr:14:5 (the model gets the error): No such file or directory (os error 2)\n";
    assert_eq!(console.matches("failure at").collect::<Vec<_>>().len(), 1, "{console}");
    assert!(console.contains(shown), "{console}");

    let mut h = Harness::new(READER, provider());
    h.start(false);
    assert_eq!(h.terminated().await, 0, "tool errors do not stop by default");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_model_call_stops_at_the_call() {
    let provider =
        || ScriptedProvider::new().on(instruction_contains("Read files"), vec![Reply::Error("overloaded".into())]);
    // By default, as an uncaught failure.
    let mut h = Harness::new(READER, provider());
    h.start(false);
    assert_eq!(h.stopped().await.0, "exception");
    let info = h.debugger.exception_info(MAIN).unwrap();
    assert_eq!(
        (info.exception_id.as_str(), info.description.as_str(), info.break_mode.as_str()),
        ("llm-error", "model openai/test: scripted: HTTP 500: overloaded", "unhandled")
    );
    assert_eq!(h.frames(MAIN), [frame("model openai/test", 9), frame("agent reader", 9), frame("flow main", 14)]);
    h.cont();
    assert_eq!(h.terminated().await, 1);
}
