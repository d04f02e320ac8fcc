//! `escalate to human` is a stop; a string evaluated in the debug console
//! answers it and the run goes on at `continue`.

use super::{Harness, MAIN};

const ASK: &str = "\
streetrace v1

flow main:
    $x = 1
    escalate to human \"approve?\"
    return {x: $x, answer: $human_input}
";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_string_in_the_debug_console_answers_and_continue_goes_on() {
    let mut h = Harness::new(ASK, sr_runtime::scripted::ScriptedProvider::new());
    h.start(false);
    assert_eq!(h.stopped().await, ("exception".to_string(), MAIN));
    assert_eq!(h.frames(MAIN), [("flow main".to_string(), 5)]);
    let info = h.debugger.exception_info(MAIN).unwrap();
    assert_eq!(info.exception_id, "human");
    assert_eq!(
        info.description,
        "escalate to human: approve? (answer by evaluating a string in the debug console, then continue)"
    );
    // Only the debug console answers, and only with a string.
    assert_eq!(h.evaluate_in(None, "\"watched\"", Some("watch")), Ok("\"watched\"".to_string()));
    assert_eq!(h.evaluate_in(None, "$x + 1", Some("repl")), Ok("2".to_string()));
    assert_eq!(h.evaluate_in(None, "\"approved\"", Some("repl")), Ok("\"approved\"".to_string()));
    assert!(h.output("console").is_empty() || !h.output("console").contains("watched"));
    h.cont();
    assert_eq!(h.terminated().await, 0);
    let console = h.output("console");
    assert!(
        console.contains("the answer to \"approve?\" is \"approved\"; continue to give it to the run\n"),
        "{console}"
    );
    assert!(console.contains("run completed: {\"x\":1,\"answer\":\"approved\"}\n"), "{console}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn continuing_without_an_answer_pauses_the_run() {
    let mut h = Harness::new(ASK, sr_runtime::scripted::ScriptedProvider::new());
    h.start(false);
    assert_eq!(h.stopped().await.0, "exception");
    h.cont();
    assert_eq!(h.terminated().await, 3, "paused, waiting for a human");
    assert!(h.output("important").contains("run paused: waiting for a human: approve?"), "{}", h.output("important"));
}
