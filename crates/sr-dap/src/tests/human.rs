//! `escalate to human` is a stop; `:answer TEXT` in the debug console (or
//! the `streetraceAnswer` request) answers it and the run goes on at
//! `continue`. Evaluating an expression never answers.

use super::{Harness, MAIN};
use crate::evaluate::ExpressionError;
use crate::inspect::InspectError;
use crate::request_error::RequestError;

const ASK: &str = "\
streetrace v1

flow main:
    $x = 1
    escalate to human \"approve?\"
    return {x: $x, answer: $human_input}
";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_answer_command_answers_and_evaluating_does_not() {
    let mut h = Harness::new(ASK, sr_runtime::scripted::ScriptedProvider::new());
    h.start(false);
    assert_eq!(h.stopped().await, ("exception".to_string(), MAIN));
    assert_eq!(h.frames(MAIN), [("flow main".to_string(), 5)]);
    let info = h.debugger.exception_info(MAIN).unwrap();
    assert_eq!(info.exception_id, "human");
    assert_eq!(
        info.description,
        "escalate to human: approve? (answer with `:answer TEXT` in the debug console, then continue)"
    );
    // Looking at values, in any context, leaves the question pending.
    for context in ["watch", "repl", "hover"] {
        assert_eq!(h.evaluate_in(None, "\"approved\"", Some(context)), Ok("\"approved\"".to_string()));
        assert_eq!(h.evaluate_in(None, "$x", Some(context)), Ok("1".to_string()));
    }
    assert_eq!(h.evaluate_in(None, "\"approved\"", Some("clipboard")), Ok("approved".to_string()));
    assert!(h.debugger.lock().run.stopped[&0].answer.is_none(), "evaluating answered");
    // Only the debug console runs commands.
    let watched = h.evaluate_in(None, ":answer no", Some("watch")).unwrap_err();
    assert!(matches!(&watched, InspectError::Expression(ExpressionError::Syntax { .. })), "{watched:?}");
    assert!(watched.to_string().starts_with("cannot read"), "{watched}");
    let unknown = h.evaluate_in(None, ":anwser yes", Some("repl")).unwrap_err();
    assert_eq!(unknown, InspectError::Console(Box::new(RequestError::UnknownConsoleCommand(":anwser".to_string()))));
    assert_eq!(
        unknown.to_string(),
        "`:anwser` is not a console command; `:answer TEXT` answers the pending `escalate to human`"
    );
    let frame = Some(h.frame_id(MAIN, 0));
    assert_eq!(
        h.evaluate_in(frame, ":answer approved, ship it", Some("repl")),
        Ok("answered thread 1: \"approve?\"".to_string())
    );
    h.cont();
    assert_eq!(h.terminated().await, 0);
    let waits = [(MAIN, Some("approve?".to_string())), (MAIN, None)];
    assert_eq!(h.questions, waits, "the client hears that the thread waits, then that it no longer does");
    let console = h.output("console");
    assert!(
        console.contains("the answer to \"approve?\" is \"approved, ship it\"; continue to give it to the run\n"),
        "{console}"
    );
    assert!(console.contains("run completed: {\"x\":1,\"answer\":\"approved, ship it\"}\n"), "{console}");
}

/// The `streetraceAnswer` request answers the thread it names, or the one
/// waiting; a thread that does not wait cannot be answered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_answer_request_answers_the_waiting_thread() {
    let mut h = Harness::new(ASK, sr_runtime::scripted::ScriptedProvider::new());
    assert_eq!(h.debugger.answer(None, "early").unwrap_err().to_string(), "no thread is waiting for an answer");
    h.lines(vec![super::line(4)]);
    h.start(false);
    assert_eq!(h.stopped().await.0, "breakpoint");
    assert_eq!(h.debugger.answer(Some(MAIN), "yes").unwrap_err(), RequestError::NotAsking(1));
    assert_eq!(h.debugger.answer(Some(7), "yes").unwrap_err().to_string(), "thread 7 is not stopped");
    h.cont();
    assert_eq!(h.stopped().await.0, "exception");
    let body = h.debugger.answer(None, "sure").unwrap();
    assert_eq!((body.thread_id, body.question.as_str()), (MAIN, "approve?"));
    let body = h.debugger.answer(Some(MAIN), "yes, really").unwrap();
    assert_eq!(body.thread_id, MAIN, "a second answer replaces the first");
    h.cont();
    assert_eq!(h.terminated().await, 0);
    assert!(h.output("console").contains("run completed: {\"x\":1,\"answer\":\"yes, really\"}\n"));
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
