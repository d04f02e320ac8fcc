//! Going back in time over stdio (`stepBack`, `reverseContinue`,
//! `restartFrame`): the run is replayed from its recording, no model is asked
//! again, and in `parallel` blocks only the thread that goes back moves: the
//! others are brought back to where they were and held there, each known by
//! where it starts (its journal name), whatever order the replay starts them in.
#![allow(clippy::unwrap_used)]

mod common;
mod transcript;

use serde_json::{Value, json};
use transcript::{Adapter, temp};

/// Going back in time replays the run's recording: no model is called again,
/// and the variables are those of that moment.
#[tokio::test(flavor = "multi_thread")]
async fn step_back_and_reverse_continue_replay_the_run() {
    use sr_llm::mock::{MOCK_KEY, MockReply, MockServer};
    let dir = temp("travel");
    let source = "streetrace v1\n\nmodel main = openai/gpt-4o-mini\n\nprompt hi: \"\"\"Say hi.\"\"\"\n\n\
                  flow main:\n    $n = 1\n    $greeting = call llm hi\n    $n = $n + 1\n    log \"${greeting} ${n}\"\n    return $n\n";
    std::fs::write(dir.join("travel.sr"), source).unwrap();
    let program = dir.join("travel.sr").canonicalize().unwrap();
    let server = MockServer::start().await;
    server.push(MockReply::text("Hi!"));
    let env = [("OPENAI_BASE_URL", format!("{}/v1", server.url())), ("OPENAI_API_KEY", MOCK_KEY.to_string())];
    let mut dap = Adapter::start_in(&dir, &env);
    let init = dap.request("initialize", json!({})).await;
    assert_eq!(init["body"]["supportsStepBack"], true);
    dap.request("launch", json!({"program": "travel.sr"})).await;
    dap.event("initialized").await;
    dap.request("setBreakpoints", json!({"source": {"path": program}, "breakpoints": [{"line": 8}, {"line": 11}]}))
        .await;
    dap.request("configurationDone", json!({})).await;
    assert_eq!(dap.event("stopped").await["body"]["reason"], "breakpoint");
    dap.request("continue", json!({"threadId": 1})).await;
    assert_eq!(dap.event("stopped").await["body"]["reason"], "breakpoint");
    let where_ = dap.request("stackTrace", json!({"threadId": 1})).await;
    assert_eq!(where_["body"]["stackFrames"][0]["line"], 11);
    assert_eq!(server.requests().len(), 1);

    // Back one point: the statement before, `$n` not incremented yet.
    assert_eq!(dap.request("stepBack", json!({"threadId": 1})).await["success"], true);
    assert_eq!(dap.event("stopped").await["body"]["reason"], "step");
    let trace = dap.request("stackTrace", json!({"threadId": 1})).await;
    assert_eq!(trace["body"]["stackFrames"][0]["line"], 10);
    let frame = trace["body"]["stackFrames"][0]["id"].clone();
    let n = dap.request("evaluate", json!({"expression": "$n", "frameId": frame})).await;
    assert_eq!(n["body"]["result"], "1");
    // Back three more: the model's reply, then the call, then `$n = 1`'s line... before it.
    for line in [9, 9] {
        dap.request("stepBack", json!({"threadId": 1})).await;
        dap.event("stopped").await;
        let trace = dap.request("stackTrace", json!({"threadId": 1})).await;
        assert_eq!(trace["body"]["stackFrames"][0]["line"], line);
    }
    let trace = dap.request("stackTrace", json!({"threadId": 1})).await;
    assert_eq!(trace["body"]["stackFrames"][0]["name"], "model openai/gpt-4o-mini", "before the call");
    // Reverse continue: the breakpoint on line 8.
    dap.request("reverseContinue", json!({"threadId": 1})).await;
    assert_eq!(dap.event("stopped").await["body"]["reason"], "breakpoint");
    let trace = dap.request("stackTrace", json!({"threadId": 1})).await;
    assert_eq!(trace["body"]["stackFrames"][0]["line"], 8);
    let back = dap.request("stepBack", json!({"threadId": 1})).await;
    assert_eq!(back["message"], "this is the first point of the run");

    // Forward again from the recording, to the end.
    dap.request("continue", json!({"threadId": 1})).await;
    assert_eq!(dap.event("stopped").await["body"]["reason"], "breakpoint");
    dap.request("continue", json!({"threadId": 1})).await;
    assert_eq!(dap.event("exited").await["body"]["exitCode"], 0);
    assert_eq!(server.requests().len(), 1, "the model was called once, by the first run");
    // The first run streamed "Hi!"; the replays up to a point said nothing; the last one
    // went on from line 8 to the end.
    assert_eq!(dap.output("stdout"), "Hi!\nHi!\nHi! 2\n");
    // The runs that going back replaced ended silently: no "the run was terminated".
    assert_eq!(dap.output("stderr"), "");
    dap.disconnect().await;
}

/// Going back in a live run, then changing what the model will be asked,
/// forks the run: the recorded part is served again, the new request goes to
/// the model, and the fork can itself be gone back in.
#[tokio::test(flavor = "multi_thread")]
async fn continuing_from_an_earlier_point_forks_the_run() {
    use sr_llm::mock::{MOCK_KEY, MockReply, MockServer};
    let dir = temp("fork");
    let source = "streetrace v1\n\nmodel main = openai/gpt-4o-mini\n\nprompt hi: \"\"\"Say hi to ${n}.\"\"\"\n\n\
                  flow main:\n    $n = 1\n    $greeting = call llm hi\n    $n = $n + 1\n    log \"${greeting} ${n}\"\n    return $n\n";
    std::fs::write(dir.join("fork.sr"), source).unwrap();
    let program = dir.join("fork.sr").canonicalize().unwrap();
    let server = MockServer::start().await;
    server.push(MockReply::text("Hi 1!"));
    server.push(MockReply::text("Hi 5!"));
    let env = [("OPENAI_BASE_URL", format!("{}/v1", server.url())), ("OPENAI_API_KEY", MOCK_KEY.to_string())];
    let mut dap = Adapter::start_in(&dir, &env);
    dap.request("initialize", json!({})).await;
    dap.request("launch", json!({"program": "fork.sr"})).await;
    dap.event("initialized").await;
    dap.request("setBreakpoints", json!({"source": {"path": program}, "breakpoints": [{"line": 9}, {"line": 11}]}))
        .await;
    dap.request("configurationDone", json!({})).await;
    dap.event("stopped").await;
    dap.request("continue", json!({"threadId": 1})).await;
    dap.event("stopped").await;
    assert_eq!(server.requests().len(), 1);

    // Back to line 9, before the call; ask about 5 instead of 1.
    dap.request("reverseContinue", json!({"threadId": 1})).await;
    assert_eq!(dap.event("stopped").await["body"]["reason"], "breakpoint");
    let trace = dap.request("stackTrace", json!({"threadId": 1})).await;
    assert_eq!(trace["body"]["stackFrames"][0]["line"], 9);
    let frame = trace["body"]["stackFrames"][0]["id"].clone();
    let scopes = dap.request("scopes", json!({"frameId": frame})).await;
    let locals = scopes["body"]["scopes"][0]["variablesReference"].clone();
    let set = dap.request("setVariable", json!({"variablesReference": locals, "name": "n", "value": "5"})).await;
    assert_eq!(set["success"], true, "{set}");
    dap.request("continue", json!({"threadId": 1})).await;
    assert_eq!(dap.event("stopped").await["body"]["reason"], "breakpoint");
    let trace = dap.request("stackTrace", json!({"threadId": 1})).await;
    let frame = trace["body"]["stackFrames"][0]["id"].clone();
    let greeting = dap.request("evaluate", json!({"expression": "$greeting", "frameId": frame})).await;
    assert_eq!(greeting["body"]["result"], "\"Hi 5!\"", "a new answer from the model");
    assert_eq!(server.requests().len(), 2);

    // The fork is recorded too: going back in it calls nothing.
    dap.request("stepBack", json!({"threadId": 1})).await;
    dap.event("stopped").await;
    let trace = dap.request("stackTrace", json!({"threadId": 1})).await;
    let frame = trace["body"]["stackFrames"][0]["id"].clone();
    let n = dap.request("evaluate", json!({"expression": "$n", "frameId": frame})).await;
    assert_eq!(n["body"]["result"], "5");
    dap.request("continue", json!({"threadId": 1})).await;
    dap.event("stopped").await;
    dap.request("continue", json!({"threadId": 1})).await;
    assert_eq!(dap.event("exited").await["body"]["exitCode"], 0);
    assert!(dap.output("stdout").ends_with("Hi 5! 6\n"), "{}", dap.output("stdout"));
    assert_eq!(server.requests().len(), 2, "nothing was asked again");
    dap.disconnect().await;
}

/// `restartFrame` goes back to the first point of a frame.
#[tokio::test]
async fn restart_frame_goes_back_to_where_the_frame_started() {
    let dir = temp("restart-frame");
    let source = "streetrace v1\n\nflow helper:\n    $n = $n + 1\n    $n = $n * 10\n    return $n\n\n\
                  flow main:\n    $n = 1\n    $r = run helper\n    return $r\n";
    std::fs::write(dir.join("frames.sr"), source).unwrap();
    let program = dir.join("frames.sr").canonicalize().unwrap();
    let mut dap = Adapter::start_in(&dir, &[]);
    let init = dap.request("initialize", json!({})).await;
    assert_eq!(init["body"]["supportsRestartFrame"], true);
    dap.request("launch", json!({"program": "frames.sr"})).await;
    dap.event("initialized").await;
    dap.request("setBreakpoints", json!({"source": {"path": program}, "breakpoints": [{"line": 5}]})).await;
    dap.request("configurationDone", json!({})).await;
    dap.event("stopped").await;
    let top = |trace: &Value| {
        let frame = &trace["body"]["stackFrames"][0];
        (frame["name"].as_str().unwrap().to_string(), frame["line"].as_i64().unwrap())
    };
    let trace = dap.request("stackTrace", json!({"threadId": 1})).await;
    assert_eq!(top(&trace), ("flow helper".to_string(), 5));
    let helper = trace["body"]["stackFrames"][0]["id"].clone();
    let main = trace["body"]["stackFrames"][1]["id"].clone();
    assert_eq!(dap.request("restartFrame", json!({"frameId": helper})).await["success"], true);
    assert_eq!(dap.event("stopped").await["body"]["reason"], "restart");
    let trace = dap.request("stackTrace", json!({"threadId": 1})).await;
    assert_eq!(top(&trace), ("flow helper".to_string(), 4));
    let frame = trace["body"]["stackFrames"][0]["id"].clone();
    let n = dap.request("evaluate", json!({"expression": "$n", "frameId": frame})).await;
    assert_eq!(n["body"]["result"], "1");
    let stale = dap.request("restartFrame", json!({"frameId": main})).await;
    assert_eq!(stale["success"], false, "a frame id from before is gone");
    let main = trace["body"]["stackFrames"][1]["id"].clone();
    dap.request("restartFrame", json!({"frameId": main})).await;
    assert_eq!(dap.event("stopped").await["body"]["reason"], "restart");
    let trace = dap.request("stackTrace", json!({"threadId": 1})).await;
    assert_eq!(top(&trace), ("flow main".to_string(), 9));
    dap.request("continue", json!({"threadId": 1})).await;
    assert_eq!(dap.event("stopped").await["body"]["reason"], "breakpoint");
    dap.request("continue", json!({"threadId": 1})).await;
    assert_eq!(dap.event("exited").await["body"]["exitCode"], 0);
    assert!(dap.output("console").contains("run completed: 20\n"));
    let seq = dap.send("disconnect", None).await;
    dap.response(seq).await;
}

const BRANCHES: &str = "streetrace v1\n\nflow left:\n    $l = 1\n    $l = $l + 10\n    return $l\n\n\
                        flow right:\n    $r = 2\n    $r = $r * 10\n    return $r\n\n\
                        flow main:\n    $a = 0\n    parallel do\n        $x = run left\n        $y = run right\n    end\n    \
                        return [$a, $x, $y]\n";

/// The top frame of a stopped thread: (name, line), or the error.
async fn top(dap: &mut Adapter, thread: i64) -> Result<(String, i64), String> {
    let trace = dap.request("stackTrace", json!({"threadId": thread})).await;
    match trace["success"].as_bool() {
        Some(true) => {
            let frame = &trace["body"]["stackFrames"][0];
            Ok((frame["name"].as_str().unwrap().to_string(), frame["line"].as_i64().unwrap()))
        }
        _ => Err(trace["message"].as_str().unwrap_or_default().to_string()),
    }
}

/// A request that moves `thread`, and the `stopped`, `continued`, `thread`
/// and `exited` events up to the `stops`-th `stopped` (sorted by thread:
/// threads stop concurrently).
async fn moved(dap: &mut Adapter, command: &str, thread: i64, stops: usize) -> Vec<Value> {
    let answer = dap.request(command, json!({"threadId": thread})).await;
    assert_eq!(answer["success"], true, "{answer}");
    let mut events = Vec::new();
    while events.iter().filter(|e: &&Value| e["event"] == "stopped").count() < stops {
        let message = dap.next().await;
        if matches!(message["event"].as_str(), Some("stopped" | "continued" | "thread" | "exited")) {
            let exited = message["event"] == "exited";
            events.push(message);
            if exited {
                break;
            }
        }
    }
    events.sort_by_key(|e| e["body"]["threadId"].as_i64());
    events
}

/// An event as (event, thread, reason, preserveFocusHint).
fn fact(event: &Value) -> (&str, i64, &str, bool) {
    let body = &event["body"];
    let thread = body["threadId"].as_i64().unwrap_or_default();
    (
        event["event"].as_str().unwrap(),
        thread,
        body["reason"].as_str().unwrap_or_default(),
        body["preserveFocusHint"] == true,
    )
}

/// Stepping back on one branch moves it to its own previous statement; the
/// other branch, held where it was stopped, is stopped there again (a
/// `stopped` event that keeps the focus) and never runs on. The replay is
/// silent: what the branches printed is not printed twice.
#[tokio::test]
async fn stepping_back_on_a_branch_moves_only_that_branch() {
    let dir = temp("travel-branch");
    std::fs::write(dir.join("branches.sr"), BRANCHES).unwrap();
    let program = dir.join("branches.sr").canonicalize().unwrap();
    let mut dap = Adapter::start_in(&dir, &[]);
    dap.request("initialize", json!({})).await;
    dap.request("launch", json!({"program": "branches.sr"})).await;
    dap.request("setBreakpoints", json!({"source": {"path": program}, "breakpoints": [{"line": 15}]})).await;
    dap.request("configurationDone", json!({})).await;
    assert_eq!(dap.event("stopped").await["body"]["threadId"], 1);
    dap.request("stepIn", json!({"threadId": 1})).await;
    dap.event("stopped").await;
    dap.event("stopped").await;
    assert_eq!(top(&mut dap, 2).await, Ok(("flow main".to_string(), 16)));
    assert_eq!(top(&mut dap, 3).await, Ok(("flow main".to_string(), 17)));
    moved(&mut dap, "stepIn", 2, 1).await;
    moved(&mut dap, "next", 2, 1).await;
    assert_eq!(top(&mut dap, 2).await, Ok(("flow left".to_string(), 5)));

    // Back on branch 1 (thread 2): it alone moves; branch 2 stays at line 17.
    let events = moved(&mut dap, "stepBack", 2, 2).await;
    let facts: Vec<_> = events.iter().map(fact).collect();
    assert_eq!(facts, [("stopped", 2, "step", false), ("stopped", 3, "step", true)], "{events:?}");
    assert_eq!(top(&mut dap, 2).await, Ok(("flow left".to_string(), 4)));
    assert_eq!(top(&mut dap, 3).await, Ok(("flow main".to_string(), 17)), "held where it was");
    let threads = dap.request("threads", json!({})).await;
    assert_eq!(threads["body"]["threads"].as_array().unwrap().len(), 3);

    // Into `right` on branch 2, then back: it returns to line 17; branch 1
    // stays in `left` at line 4 and does not enter `right`.
    moved(&mut dap, "stepIn", 3, 1).await;
    assert_eq!(top(&mut dap, 3).await, Ok(("flow right".to_string(), 9)));
    let events = moved(&mut dap, "stepBack", 3, 2).await;
    let facts: Vec<_> = events.iter().map(fact).collect();
    assert_eq!(facts, [("stopped", 2, "step", true), ("stopped", 3, "step", false)], "{events:?}");
    assert_eq!(top(&mut dap, 3).await, Ok(("flow main".to_string(), 17)));
    assert_eq!(top(&mut dap, 2).await, Ok(("flow left".to_string(), 4)));
    let trace = dap.request("stackTrace", json!({"threadId": 2})).await;
    let frame = trace["body"]["stackFrames"][0]["id"].clone();
    let l = dap.request("evaluate", json!({"expression": "$l", "frameId": frame})).await;
    assert_eq!(l["success"], false, "before `$l = 1`: {l}");

    // Continue (not single-threaded) from branch 1: branch 2 is told it runs on.
    let seq = dap.send("continue", Some(json!({"threadId": 2}))).await;
    assert_eq!(dap.response(seq).await["body"]["allThreadsContinued"], true);
    assert_eq!(dap.event("continued").await["body"], json!({"threadId": 3, "allThreadsContinued": false}));
    assert_eq!(dap.event("exited").await["body"]["exitCode"], 0);
    let console = dap.output("console");
    assert!(console.contains("run completed: [0,11,20]\n"), "{console}");
    assert_eq!(console.matches("flow left started").count(), 1, "{console}");
    assert_eq!(console.matches("flow right started").count(), 2, "entered, gone back out of, entered again");
    let thread_events = dap.transcript.iter().filter(|m| m["event"] == "thread").count();
    assert_eq!(thread_events, 4, "each branch started and exited once, as the client sees it");
    dap.disconnect().await;
}

/// Stepping back on the main thread after a `parallel do` goes to its own
/// previous statement, the block itself, before the branches ran.
#[tokio::test]
async fn stepping_back_on_main_goes_to_its_own_previous_statement() {
    let dir = temp("travel-main");
    std::fs::write(dir.join("branches.sr"), BRANCHES).unwrap();
    let program = dir.join("branches.sr").canonicalize().unwrap();
    let mut dap = Adapter::start_in(&dir, &[]);
    dap.request("initialize", json!({})).await;
    dap.request("launch", json!({"program": "branches.sr"})).await;
    dap.request("setBreakpoints", json!({"source": {"path": program}, "breakpoints": [{"line": 19}]})).await;
    dap.request("configurationDone", json!({})).await;
    assert_eq!(dap.event("stopped").await["body"]["threadId"], 1);
    let events = moved(&mut dap, "stepBack", 1, 1).await;
    assert_eq!(events.iter().map(fact).collect::<Vec<_>>(), [("stopped", 1, "step", false)]);
    assert_eq!(top(&mut dap, 1).await, Ok(("flow main".to_string(), 15)));
    let trace = dap.request("stackTrace", json!({"threadId": 1})).await;
    let frame = trace["body"]["stackFrames"][0]["id"].clone();
    let x = dap.request("evaluate", json!({"expression": "$x", "frameId": frame})).await;
    assert_eq!(x["success"], false, "the branches have not run: {x}");
    // Step in: the branches start again (the client hears of it) and stop.
    dap.request("stepIn", json!({"threadId": 1})).await;
    let mut stops = vec![dap.event("stopped").await["body"]["threadId"].clone()];
    stops.push(dap.event("stopped").await["body"]["threadId"].clone());
    stops.sort_by_key(|t| t.as_i64());
    assert_eq!(stops, [json!(2), json!(3)]);
    dap.request("continue", json!({"threadId": 2})).await;
    assert_eq!(dap.event("stopped").await["body"]["reason"], "breakpoint");
    dap.request("continue", json!({"threadId": 1})).await;
    assert_eq!(dap.event("exited").await["body"]["exitCode"], 0);
    assert!(dap.output("console").contains("run completed: [0,11,20]\n"));
    let started = dap.transcript.iter().filter(|m| m["event"] == "thread" && m["body"]["reason"] == "started").count();
    assert_eq!(started, 4, "twice each: the first run, and after going back before the block");
    dap.disconnect().await;
}

/// Model calls in two branches, live against the mock server: branch 1 steps
/// over its call to the reply, then back to before it, while branch 2 stays
/// at its statement; going on serves the recorded reply, and nothing is
/// asked twice.
#[tokio::test(flavor = "multi_thread")]
async fn stepping_back_over_a_branch_model_call_asks_nothing_again() {
    use sr_llm::mock::{MOCK_KEY, MockReply, MockServer};
    let dir = temp("travel-parallel-calls");
    let source = "streetrace v1\n\nmodel main = openai/gpt-4o-mini\n\nprompt echo: \"\"\"Repeat it.\"\"\"\n\n\
                  flow main:\n    parallel do\n        $a = call llm echo with \"one\"\n        \
                  $b = call llm echo with \"two\"\n    end\n    return [$a, $b]\n";
    std::fs::write(dir.join("calls.sr"), source).unwrap();
    let program = dir.join("calls.sr").canonicalize().unwrap();
    let server = MockServer::start().await;
    server.push(MockReply::text("first answer"));
    server.push(MockReply::text("second answer"));
    let env = [("OPENAI_BASE_URL", format!("{}/v1", server.url())), ("OPENAI_API_KEY", MOCK_KEY.to_string())];
    let mut dap = Adapter::start_in(&dir, &env);
    dap.request("initialize", json!({})).await;
    dap.request("launch", json!({"program": "calls.sr"})).await;
    dap.request("setBreakpoints", json!({"source": {"path": program}, "breakpoints": [{"line": 8}]})).await;
    dap.request("configurationDone", json!({})).await;
    dap.event("stopped").await;
    dap.request("stepIn", json!({"threadId": 1})).await;
    dap.event("stopped").await;
    dap.event("stopped").await;
    moved(&mut dap, "stepIn", 2, 1).await;
    assert_eq!(top(&mut dap, 2).await, Ok(("model openai/gpt-4o-mini".to_string(), 9)));
    moved(&mut dap, "next", 2, 1).await;
    assert_eq!(top(&mut dap, 2).await, Ok(("model openai/gpt-4o-mini (replied)".to_string(), 9)));
    assert_eq!(server.requests().len(), 1);
    let events = moved(&mut dap, "stepBack", 2, 2).await;
    let facts: Vec<_> = events.iter().map(fact).collect();
    assert_eq!(facts, [("stopped", 2, "step", false), ("stopped", 3, "step", true)]);
    assert_eq!(top(&mut dap, 2).await, Ok(("model openai/gpt-4o-mini".to_string(), 9)));
    assert_eq!(top(&mut dap, 3).await, Ok(("flow main".to_string(), 10)), "held before its call");
    let seq = dap.send("continue", Some(json!({"threadId": 2}))).await;
    dap.response(seq).await;
    assert_eq!(dap.event("exited").await["body"]["exitCode"], 0);
    assert!(
        dap.output("console").contains("run completed: [\"first answer\",\"second answer\"]\n"),
        "{}",
        dap.output("console")
    );
    assert_eq!(server.requests().len(), 2, "the first reply was replayed; the second asked once");
    dap.disconnect().await;
}

/// Going back on one branch while the others are stopped inside a point: a
/// branch waiting for an answer (given, not yet taken) and a branch stopped
/// on a caught failure are both stopped again on the same question (answer
/// kept) and failure; a branch at its first point cannot go back.
#[tokio::test]
async fn branches_stopped_on_a_question_or_a_failure_stay_stopped_on_it() {
    let dir = temp("travel-inside");
    let source = "streetrace v1\n\nflow left:\n    $l = 1\n    $l = $l + 10\n    return $l\n\n\
                  flow broken:\n    $q = {a: 1}\n    $q = $q.b\n    on failure:\n        $q = 0\n    return $q\n\n\
                  flow main:\n    parallel do\n        $x = run left\n        escalate to human \"go?\"\n        \
                  $z = run broken\n    end\n    return [$x, $human_input, $z]\n";
    std::fs::write(dir.join("inside.sr"), source).unwrap();
    let program = dir.join("inside.sr").canonicalize().unwrap();
    let mut dap = Adapter::start_in(&dir, &[]);
    dap.request("initialize", json!({})).await;
    dap.request("launch", json!({"program": "inside.sr"})).await;
    dap.request("setBreakpoints", json!({"source": {"path": program}, "breakpoints": [{"line": 16}]})).await;
    dap.request("setExceptionBreakpoints", json!({"filters": ["caught"]})).await;
    dap.request("configurationDone", json!({})).await;
    dap.event("stopped").await;
    dap.request("stepIn", json!({"threadId": 1})).await;
    for _ in 0..3 {
        dap.event("stopped").await;
    }
    let first = dap.request("stepBack", json!({"threadId": 2})).await;
    assert_eq!(first["message"], "this is the first point of branch 1: the branch has no earlier point of its own");
    // Branch 2 asks, branch 3 fails (caught): each stops inside its statement.
    let seq = dap.send("continue", Some(json!({"threadId": 3, "singleThread": true}))).await;
    dap.response(seq).await;
    assert_eq!(dap.event("stopped").await["body"]["threadId"], 3);
    assert_eq!(dap.request("streetraceAnswer", json!({"text": "yes"})).await["success"], true);
    moved(&mut dap, "stepIn", 4, 1).await;
    let seq = dap.send("continue", Some(json!({"threadId": 4, "singleThread": true}))).await;
    dap.response(seq).await;
    let failed = dap.event("stopped").await;
    assert_eq!((&failed["body"]["threadId"], &failed["body"]["reason"]), (&json!(4), &json!("exception")));
    moved(&mut dap, "stepIn", 2, 1).await;
    moved(&mut dap, "next", 2, 1).await;
    assert_eq!(top(&mut dap, 2).await, Ok(("flow left".to_string(), 5)));

    let questions_before = dap.transcript.iter().filter(|m| m["event"] == "streetraceQuestion").count();
    let events = moved(&mut dap, "stepBack", 2, 3).await;
    let facts: Vec<_> = events.iter().map(fact).collect();
    assert_eq!(
        facts,
        [("stopped", 2, "step", false), ("stopped", 3, "exception", true), ("stopped", 4, "exception", true)],
        "{events:?}"
    );
    assert_eq!(top(&mut dap, 2).await, Ok(("flow left".to_string(), 4)));
    assert_eq!(top(&mut dap, 3).await, Ok(("flow main".to_string(), 18)));
    assert_eq!(top(&mut dap, 4).await, Ok(("flow broken".to_string(), 10)));
    let info = dap.request("exceptionInfo", json!({"threadId": 3})).await;
    assert_eq!(info["body"]["exceptionId"], "human");
    let info = dap.request("exceptionInfo", json!({"threadId": 4})).await;
    assert_eq!(
        (&info["body"]["exceptionId"], &info["body"]["description"]),
        (&json!("caught"), &json!("no field 'b' (fields: a)"))
    );
    let questions = dap.transcript.iter().filter(|m| m["event"] == "streetraceQuestion").count();
    assert_eq!(questions, questions_before + 1, "thread 3 waits again");

    let seq = dap.send("continue", Some(json!({"threadId": 2}))).await;
    dap.response(seq).await;
    assert_eq!(dap.event("exited").await["body"]["exitCode"], 0);
    let console = dap.output("console");
    assert!(console.contains("run completed: [11,\"yes\",0]\n"), "the answer was kept: {console}");
    assert_eq!(console.matches("failure at inside.sr:10:5").count(), 1, "shown once: {console}");
    dap.disconnect().await;
}

/// A thread waiting for an answer that steps back goes to before the
/// question: the client hears it no longer waits, the answer it was given
/// is gone, and going on asks again. An answer given and taken before the
/// point gone back to is given again.
#[tokio::test]
async fn stepping_back_from_a_question_asks_it_again() {
    let dir = temp("travel-question");
    let source = "streetrace v1\n\nflow main:\n    escalate to human \"first?\"\n    $one = $human_input\n    \
                  escalate to human \"second?\"\n    return [$one, $human_input]\n";
    std::fs::write(dir.join("ask.sr"), source).unwrap();
    let mut dap = Adapter::start_in(&dir, &[]);
    dap.request("initialize", json!({})).await;
    dap.request("launch", json!({"program": "ask.sr"})).await;
    dap.request("configurationDone", json!({})).await;
    dap.event("stopped").await;
    dap.request("evaluate", json!({"expression": ":answer yes", "context": "repl"})).await;
    let seq = dap.send("continue", Some(json!({"threadId": 1}))).await;
    dap.response(seq).await;
    dap.event("stopped").await;
    assert_eq!(top(&mut dap, 1).await, Ok(("flow main".to_string(), 6)));
    dap.request("streetraceAnswer", json!({"text": "dropped"})).await;
    let asked = dap.transcript.iter().filter(|m| m["event"] == "streetraceQuestion").count();
    let events = moved(&mut dap, "stepBack", 1, 1).await;
    assert_eq!(events.iter().map(fact).collect::<Vec<_>>(), [("stopped", 1, "step", false)]);
    assert_eq!(top(&mut dap, 1).await, Ok(("flow main".to_string(), 6)), "before the question");
    let questions: Vec<&Value> =
        dap.transcript.iter().filter(|m| m["event"] == "streetraceQuestion").skip(asked).map(|m| &m["body"]).collect();
    assert_eq!(questions, [&json!({"threadId": 1, "question": null})]);
    let trace = dap.request("stackTrace", json!({"threadId": 1})).await;
    let frame = trace["body"]["stackFrames"][0]["id"].clone();
    let one = dap.request("evaluate", json!({"expression": "$one", "frameId": frame})).await;
    assert_eq!(one["body"]["result"], "\"yes\"", "the first answer, given again");
    let seq = dap.send("continue", Some(json!({"threadId": 1}))).await;
    dap.response(seq).await;
    let stopped = dap.event("stopped").await;
    assert_eq!(stopped["body"]["reason"], "exception", "asked again");
    dap.request("evaluate", json!({"expression": ":answer again", "context": "repl"})).await;
    let seq = dap.send("continue", Some(json!({"threadId": 1}))).await;
    dap.response(seq).await;
    assert_eq!(dap.event("exited").await["body"]["exitCode"], 0);
    assert!(dap.output("console").contains("run completed: [\"yes\",\"again\"]\n"), "{}", dap.output("console"));
    dap.disconnect().await;
}

/// Nested `parallel` blocks in concurrent branches start in another order
/// when the run goes back in time: live, `left` waits for the model while
/// `right` starts its block first; replayed, the reply is served at once and
/// `left`'s block starts first. Threads are known by where they start (their
/// journal name), so stepping back in `left`'s nested branch moves that
/// branch, under the id the client knows, and holds `right`'s where it was.
#[tokio::test(flavor = "multi_thread")]
async fn nested_branches_keep_their_ids_whatever_order_a_replay_starts_them_in() {
    use sr_llm::mock::{MOCK_KEY, MockReply, MockServer};
    let dir = temp("travel-nested");
    let source = "streetrace v1\n\nmodel main = openai/gpt-4o-mini\n\nprompt hi: \"\"\"Say hi.\"\"\"\n\n\
                  flow steps:\n    $s = 1\n    $s = $s + 1\n    return $s\n\n\
                  flow left:\n    $g = call llm hi\n    parallel do\n        $a = run steps\n        $b = 2\n    end\n    return $a\n\n\
                  flow right:\n    parallel do\n        $c = 3\n        $d = 4\n    end\n    return $c\n\n\
                  flow main:\n    parallel do\n        $x = run left\n        $y = run right\n    end\n    return [$x, $y]\n";
    std::fs::write(dir.join("nested.sr"), source).unwrap();
    let program = dir.join("nested.sr").canonicalize().unwrap();
    let server = MockServer::start().await;
    server.push(MockReply::text("hi").delay(std::time::Duration::from_secs(1)));
    let env = [("OPENAI_BASE_URL", format!("{}/v1", server.url())), ("OPENAI_API_KEY", MOCK_KEY.to_string())];
    let mut dap = Adapter::start_in(&dir, &env);
    dap.request("initialize", json!({})).await;
    dap.request("launch", json!({"program": "nested.sr"})).await;
    // `$s = $s + 1` in `steps` (left's nested branch), `$d = 4` (right's).
    let lines = [json!({"line": 9}), json!({"line": 23})];
    dap.request("setBreakpoints", json!({"source": {"path": program}, "breakpoints": lines})).await;
    dap.request("configurationDone", json!({})).await;
    let mut stops = Vec::new();
    for _ in 0..2 {
        let stopped = dap.event("stopped").await;
        stops.push(stopped["body"]["threadId"].as_i64().unwrap());
    }
    // Right's block started first: its branches are threads 4 and 5, left's 6 and 7.
    assert_eq!(stops, [5, 6], "right's second branch, then left's first");
    assert_eq!(top(&mut dap, 6).await, Ok(("flow steps".to_string(), 9)));
    assert_eq!(top(&mut dap, 5).await, Ok(("flow right".to_string(), 23)));

    let events = moved(&mut dap, "stepBack", 6, 2).await;
    let facts: Vec<_> = events.iter().map(fact).collect();
    assert_eq!(facts, [("stopped", 5, "breakpoint", true), ("stopped", 6, "step", false)], "{events:?}");
    assert_eq!(top(&mut dap, 6).await, Ok(("flow steps".to_string(), 8)), "left's branch, one point back");
    assert_eq!(top(&mut dap, 5).await, Ok(("flow right".to_string(), 23)), "right's, held where it was");
    let threads = dap.request("threads", json!({})).await;
    let ids: Vec<i64> =
        threads["body"]["threads"].as_array().unwrap().iter().map(|t| t["id"].as_i64().unwrap()).collect();
    assert_eq!(ids, [1, 2, 3, 5, 6], "the branches that ran one statement ended");
    let thread_events = dap.transcript.iter().filter(|m| m["event"] == "thread").count();
    dap.request("setBreakpoints", json!({"source": {"path": program}, "breakpoints": []})).await;
    let seq = dap.send("continue", Some(json!({"threadId": 6}))).await;
    dap.response(seq).await;
    assert_eq!(dap.event("exited").await["body"]["exitCode"], 0);
    let console = dap.output("console");
    assert!(console.contains("run completed: [2,3]\n"), "{console}");
    for flow in ["left", "right", "steps"] {
        assert_eq!(console.matches(&format!("flow {flow} started")).count(), 1, "replayed silently: {console}");
    }
    assert_eq!(server.requests().len(), 1);
    let started_again = dap.transcript.iter().filter(|m| m["event"] == "thread").skip(thread_events);
    assert!(started_again.clone().all(|m| m["body"]["reason"] == "exited"), "no thread the client knows started again");
    dap.disconnect().await;
}

/// Going back over a coding agent serves its step from the recording: the
/// code, which counts its runs in a file outside the work directory, runs
/// once, however often the run is gone back in.
#[tokio::test(flavor = "multi_thread")]
async fn going_back_over_a_coding_agent_does_not_run_its_code_again() {
    use sr_llm::mock::{MOCK_KEY, MockReply, MockServer};
    let dir = temp("travel-code");
    let counter = temp("travel-code-host").join("runs.txt");
    let source = "streetrace v1\n\nmodel main = openai/gpt-4o-mini\n\nexecutor local:\n    backend: unsandboxed\n    \
                  files: true\n\nprompt solver: \"\"\"You solve tasks with code.\"\"\"\n\nagent coder:\n    \
                  instruction solver\n    executor local\n\nflow main:\n    $n = 1\n    \
                  $answer = run agent coder with \"go\"\n    $n = $n + 1\n    log \"${answer} ${n}\"\n    return $n\n";
    std::fs::write(dir.join("code.sr"), source).unwrap();
    let program = dir.join("code.sr").canonicalize().unwrap();
    let server = MockServer::start().await;
    let code = format!(
        "```python\nwith open({:?}, 'a') as f:\n    f.write('ran\\n')\nfinal_answer('done')\n```",
        counter.display().to_string()
    );
    server.push(MockReply::text(&code));
    let runs = || std::fs::read_to_string(&counter).unwrap_or_default().lines().count();
    let env = [("OPENAI_BASE_URL", format!("{}/v1", server.url())), ("OPENAI_API_KEY", MOCK_KEY.to_string())];
    let mut dap = Adapter::start_in(&dir, &env);
    dap.request("initialize", json!({})).await;
    dap.request("launch", json!({"program": "code.sr", "allowUnsandboxed": true})).await;
    dap.event("initialized").await;
    dap.request("setBreakpoints", json!({"source": {"path": program}, "breakpoints": [{"line": 16}, {"line": 18}]}))
        .await;
    dap.request("configurationDone", json!({})).await;
    assert_eq!(dap.event("stopped").await["body"]["reason"], "breakpoint");
    dap.request("continue", json!({"threadId": 1})).await;
    assert_eq!(dap.event("stopped").await["body"]["reason"], "breakpoint");
    assert_eq!(runs(), 1, "the live run ran the code");

    // Back before the agent, then forward over it again, then back one step.
    dap.request("reverseContinue", json!({"threadId": 1})).await;
    assert_eq!(dap.event("stopped").await["body"]["reason"], "breakpoint");
    let trace = dap.request("stackTrace", json!({"threadId": 1})).await;
    assert_eq!(trace["body"]["stackFrames"][0]["line"], 16);
    dap.request("continue", json!({"threadId": 1})).await;
    assert_eq!(dap.event("stopped").await["body"]["reason"], "breakpoint");
    let trace = dap.request("stackTrace", json!({"threadId": 1})).await;
    assert_eq!(trace["body"]["stackFrames"][0]["line"], 18);
    let frame = trace["body"]["stackFrames"][0]["id"].clone();
    let answer = dap.request("evaluate", json!({"expression": "$answer", "frameId": frame})).await;
    assert!(answer["body"]["result"].as_str().unwrap().contains("done"), "{answer}");
    assert_eq!(dap.request("stepBack", json!({"threadId": 1})).await["success"], true);
    dap.event("stopped").await;
    assert_eq!(runs(), 1, "going back ran the code again");

    dap.request("continue", json!({"threadId": 1})).await;
    assert_eq!(dap.event("stopped").await["body"]["reason"], "breakpoint");
    dap.request("continue", json!({"threadId": 1})).await;
    assert_eq!(dap.event("exited").await["body"]["exitCode"], 0);
    assert_eq!(server.requests().len(), 1, "the model was asked once, by the live run");
    assert_eq!(runs(), 1);
    dap.disconnect().await;
}
