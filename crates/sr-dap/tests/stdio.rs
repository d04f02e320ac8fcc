//! The real `sr-dap` binary over stdio: the full configuration sequence on the
//! fixture (replayed from its recording) as a JSON transcript, broken input,
//! a program that does not compile, failures (shown where they happen, caught
//! or not) and `escalate to human` (answered only on purpose), hostile
//! expressions, recording and replaying, a launch that does not wait for MCP
//! servers, parallel branches, Copy Value, breakpoints under every spelling of
//! a file, and data breakpoints (in branches too). Going back in time is
//! `tests/travel.rs`, what it does to files and model requests
//! `tests/effects.rs`, forks `tests/forks.rs`.
#![allow(clippy::unwrap_used)]

mod common;
mod transcript;

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use transcript::{Adapter, fixtures, temp};

#[tokio::test]
async fn configuration_sequence_breakpoints_and_run_to_the_end() {
    let program = fixtures().join("debug.sr").canonicalize().unwrap();
    let program_path = program.display().to_string();
    let mut dap = Adapter::start();

    let init =
        dap.request("initialize", json!({"clientID": "test", "adapterID": "streetrace", "linesStartAt1": true})).await;
    assert_eq!(init["success"], true);
    let capabilities = &init["body"];
    for capability in [
        "supportsConfigurationDoneRequest",
        "supportsConditionalBreakpoints",
        "supportsHitConditionalBreakpoints",
        "supportsLogPoints",
        "supportsFunctionBreakpoints",
        "supportsSetVariable",
        "supportsRestartRequest",
        "supportsTerminateRequest",
        "supportsEvaluateForHovers",
        "supportsClipboardContext",
    ] {
        assert_eq!(capabilities[capability], true, "{capability}");
    }
    let filters: Vec<&str> = capabilities["exceptionBreakpointFilters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["filter"].as_str().unwrap())
        .collect();
    assert_eq!(filters, ["uncaught", "caught", "tool-error", "llm-error", "escalation"]);
    let defaults: Vec<&Value> =
        capabilities["exceptionBreakpointFilters"].as_array().unwrap().iter().map(|f| &f["default"]).collect();
    assert_eq!(defaults, [true, false, false, false, false]);

    let launch = dap
        .request(
            "launch",
            json!({"program": "debug.sr", "replay": "debug.cassette.jsonl", "prompt": "Greet Ada", "workDir": "."}),
        )
        .await;
    assert_eq!(launch["success"], true, "{launch}");
    dap.event("initialized").await;

    let set = dap
        .request(
            "setBreakpoints",
            json!({"source": {"path": program_path}, "breakpoints": [{"line": 27}, {"line": 22}, {"line": 3}, {"line": 28, "logMessage": "logpoint sees {$count}"}]}),
        )
        .await;
    let breakpoints = set["body"]["breakpoints"].as_array().unwrap();
    assert_eq!((breakpoints[0]["verified"].clone(), breakpoints[0]["line"].clone()), (json!(true), json!(27)));
    // A blank line between flows has no statement; a comment outside any body neither.
    assert_eq!(breakpoints[1]["verified"], false);
    assert_eq!(breakpoints[1]["message"], "no flow or handler statement on this line");
    assert_eq!(breakpoints[2]["verified"], false);
    assert_eq!(breakpoints[3]["verified"], true);
    assert_eq!(breakpoints[0]["source"]["path"], program_path);

    let functions =
        dap.request("setFunctionBreakpoints", json!({"breakpoints": [{"name": "count_up"}, {"name": "nope"}]})).await;
    let functions = functions["body"]["breakpoints"].as_array().unwrap();
    assert_eq!((functions[0]["verified"].clone(), functions[0]["line"].clone()), (json!(true), json!(19)));
    assert_eq!(functions[1]["message"], "there is no flow or agent named 'nope'");
    let exceptions = dap.request("setExceptionBreakpoints", json!({"filters": ["tool-error"]})).await;
    assert_eq!(exceptions["body"]["breakpoints"][0]["verified"], true);
    assert_eq!(dap.request("configurationDone", json!({})).await["success"], true);

    let stopped = dap.event("stopped").await;
    assert_eq!(stopped["body"]["reason"], "breakpoint");
    assert_eq!(stopped["body"]["threadId"], 1);
    assert_eq!(stopped["body"]["hitBreakpointIds"], json!([breakpoints[0]["id"]]));
    let trace = dap.request("stackTrace", json!({"threadId": 1})).await;
    let top = &trace["body"]["stackFrames"][0];
    assert_eq!((top["name"].as_str(), top["line"].as_i64()), (Some("flow main"), Some(27)));
    assert_eq!(top["source"]["path"], program_path);
    // The agent ran (replayed) before the breakpoint: its text streamed to the console.
    assert!(dap.output("stdout").contains("Hello Ada, engine lover!"), "{}", dap.output("stdout"));

    dap.request("continue", json!({"threadId": 1})).await;
    let stopped = dap.event("stopped").await;
    assert_eq!(stopped["body"]["reason"], "function breakpoint");
    let trace = dap.request("stackTrace", json!({"threadId": 1})).await;
    let names: Vec<&str> =
        trace["body"]["stackFrames"].as_array().unwrap().iter().map(|f| f["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["flow count_up", "flow main"]);
    assert_eq!(trace["body"]["stackFrames"][0]["line"], 20);

    dap.request("continue", json!({"threadId": 1})).await;
    let exited = dap.event("exited").await;
    assert_eq!(exited["body"]["exitCode"], 0);
    dap.event("terminated").await;
    let stdout = dap.output("stdout");
    assert!(stdout.contains("count is 2\n") && stdout.contains("Hi Ada!"), "{stdout}");
    let console = dap.output("console");
    assert!(console.contains("logpoint sees 2\n"), "{console}");
    assert!(
        console
            .contains("run completed: {\"greeting\":\"Hello Ada, engine lover!\",\"count\":2,\"summary\":\"Hi Ada!\"}")
    );

    // `disconnect` without arguments.
    let seq = dap.send("disconnect", None).await;
    assert_eq!(dap.response(seq).await["success"], true);
    assert_eq!(
        dap.outline(),
        [
            "response initialize true",
            "response launch true",
            "event initialized",
            "response setBreakpoints true",
            "response setFunctionBreakpoints true",
            "response setExceptionBreakpoints true",
            "response configurationDone true",
            "event stopped",
            "response stackTrace true",
            "response continue true",
            "event stopped",
            "response stackTrace true",
            "response continue true",
            "event exited",
            "event terminated",
            "response disconnect true",
        ]
    );
    // Sequence numbers count up from 1.
    let seqs: Vec<i64> = dap.transcript.iter().map(|m| m["seq"].as_i64().unwrap()).collect();
    assert_eq!(seqs, (1..=seqs.len() as i64).collect::<Vec<_>>());
    assert_eq!(dap.exit_code().await, Some(0));
}

#[tokio::test]
async fn broken_input_gets_errors_not_a_crash() {
    let mut dap = Adapter::start();
    dap.write_raw(b"Content-Length: 5\r\n\r\n{nope").await;
    dap.write_raw(b"garbage without a header\r\n\r\n").await;
    dap.write_raw(b"Content-Length: 2\r\n\r\n[]").await;
    let unknown = dap.request("frobnicate", json!({})).await;
    assert_eq!(unknown["success"], false);
    assert_eq!(unknown["message"], "sr-dap does not handle the request 'frobnicate'");
    let bad = dap.request("setBreakpoints", json!({"source": 3})).await;
    assert_eq!(bad["success"], false);
    assert!(bad["message"].as_str().unwrap().starts_with("bad arguments for 'setBreakpoints'"), "{bad}");
    let seq = dap.send("stackTrace", None).await;
    assert_eq!(dap.response(seq).await["message"], "thread 0 is not stopped");
    let launch = dap.request("launch", json!({})).await;
    assert_eq!(launch["message"], "the launch configuration needs `program`, the .sr file to debug");
    let seq = dap.send("disconnect", None).await;
    assert_eq!(dap.response(seq).await["success"], true);
    assert_eq!(dap.exit_code().await, Some(0));
}

#[tokio::test]
async fn compile_errors_are_shown_and_end_the_session() {
    let dir = std::env::temp_dir().join(format!("sr-dap-broken-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let broken = dir.join("broken.sr");
    std::fs::write(&broken, "streetrace v1\n\nflow main:\n    $x = run agent missing\n").unwrap();
    let mut dap = Adapter::start();
    dap.request("initialize", json!({})).await;
    let launch = dap.request("launch", json!({"program": broken.display().to_string()})).await;
    assert_eq!(launch["success"], false);
    assert!(launch["message"].as_str().unwrap().ends_with("broken.sr has 1 error; see the debug console"), "{launch}");
    dap.event("terminated").await;
    let diagnostic = dap.transcript.iter().find(|m| m["event"] == "output").unwrap();
    assert_eq!(diagnostic["body"]["category"], "stderr");
    assert_eq!(diagnostic["body"]["line"], 4);
    assert_eq!(diagnostic["body"]["source"]["path"], broken.display().to_string());
    assert!(diagnostic["body"]["output"].as_str().unwrap().contains("undefined reference to agent 'missing'"));
    assert_eq!(dap.outline(), ["response initialize true", "response launch false", "event terminated"]);
}

#[tokio::test]
async fn restart_runs_again_and_terminate_ends_the_run() {
    let mut dap = Adapter::start();
    dap.request("initialize", json!({})).await;
    let launch =
        json!({"program": "debug.sr", "replay": "debug.cassette.jsonl", "prompt": "Greet Ada", "stopOnEntry": true});
    dap.request("launch", launch).await;
    dap.event("initialized").await;
    dap.request("configurationDone", json!({})).await;
    assert_eq!(dap.event("stopped").await["body"]["reason"], "entry");
    let step = dap.request("next", json!({"threadId": 1})).await;
    assert_eq!(step["success"], true);
    dap.event("stopped").await;
    let trace = dap.request("stackTrace", json!({"threadId": 1})).await;
    assert_eq!(trace["body"]["stackFrames"][0]["line"], 25);

    assert_eq!(dap.request("restart", json!({})).await["success"], true);
    assert_eq!(dap.event("stopped").await["body"]["reason"], "entry");
    let trace = dap.request("stackTrace", json!({"threadId": 1})).await;
    assert_eq!(trace["body"]["stackFrames"][0]["line"], 24, "from the start again");

    assert_eq!(dap.request("terminate", json!({})).await["success"], true);
    assert_eq!(dap.event("exited").await["body"]["exitCode"], 1);
    dap.event("terminated").await;
    assert!(!dap.output("stdout").contains("Hello Ada"), "the agent never ran");
    let seq = dap.send("disconnect", Some(json!({"terminateDebuggee": true}))).await;
    dap.response(seq).await;
    assert_eq!(
        dap.outline(),
        [
            "response initialize true",
            "response launch true",
            "event initialized",
            "response configurationDone true",
            "event stopped",
            "response next true",
            "event stopped",
            "response stackTrace true",
            "response restart true",
            "event stopped",
            "response stackTrace true",
            "response terminate true",
            "event exited",
            "event terminated",
            "response disconnect true",
        ]
    );
    assert_eq!(dap.exit_code().await, Some(0));
}

/// `escalate to human` stops; `:answer` in the debug console answers it; an
/// uncaught failure then stops where it happens, with its exception info,
/// before the run ends.
#[tokio::test]
async fn a_human_question_and_an_uncaught_failure_as_a_transcript() {
    let dir = temp("human");
    let source = "streetrace v1\n\nflow main:\n    $x = {a: 1}\n    escalate to human \"ship it?\"\n    \
                  log \"answer: ${human_input}\"\n    $y = $x.b\n    return $y\n";
    std::fs::write(dir.join("ask.sr"), source).unwrap();
    let mut dap = Adapter::start_in(&dir, &[]);
    dap.request("initialize", json!({})).await;
    dap.request("launch", json!({"program": "ask.sr"})).await;
    dap.event("initialized").await;
    dap.request("configurationDone", json!({})).await;

    let stopped = dap.event("stopped").await;
    assert_eq!(
        (stopped["body"]["reason"].as_str(), stopped["body"]["threadId"].as_i64()),
        (Some("exception"), Some(1))
    );
    let info = dap.request("exceptionInfo", json!({"threadId": 1})).await;
    assert_eq!(info["body"]["exceptionId"], "human");
    assert_eq!(info["body"]["breakMode"], "always");
    let answer = dap.request("evaluate", json!({"expression": ":answer yes", "context": "repl"})).await;
    assert_eq!(answer["body"]["result"], "answered thread 1: \"ship it?\"");
    dap.request("continue", json!({"threadId": 1})).await;

    let stopped = dap.event("stopped").await;
    assert_eq!(stopped["body"]["reason"], "exception");
    assert_eq!(stopped["body"]["text"], "no field 'b' (fields: a)");
    let info = dap.request("exceptionInfo", json!({"threadId": 1})).await;
    assert_eq!(
        (info["body"]["exceptionId"].as_str(), info["body"]["breakMode"].as_str()),
        (Some("uncaught"), Some("unhandled"))
    );
    let trace = dap.request("stackTrace", json!({"threadId": 1})).await;
    assert_eq!(trace["body"]["stackFrames"][0]["line"], 7);
    let x = dap.request("evaluate", json!({"expression": "$x.a + 1", "context": "watch"})).await;
    assert_eq!(x["body"]["result"], "2", "inspectable before the run ends");
    dap.request("continue", json!({"threadId": 1})).await;
    assert_eq!(dap.event("exited").await["body"]["exitCode"], 1);
    dap.event("terminated").await;
    assert!(dap.output("stdout").contains("answer: yes\n"), "{}", dap.output("stdout"));
    assert!(dap.output("console").contains("the answer to \"ship it?\" is \"yes\"; continue to give it to the run\n"));
    assert!(dap.output("stderr").contains("run failed: no field 'b' (fields: a)"));
    let seq = dap.send("disconnect", None).await;
    dap.response(seq).await;
    assert_eq!(
        dap.outline(),
        [
            "response initialize true",
            "response launch true",
            "event initialized",
            "response configurationDone true",
            "event stopped",
            "event streetraceQuestion",
            "response exceptionInfo true",
            "response evaluate true",
            "response continue true",
            "event streetraceQuestion",
            "event stopped",
            "response exceptionInfo true",
            "response stackTrace true",
            "response evaluate true",
            "response continue true",
            "event exited",
            "event terminated",
            "response disconnect true",
        ]
    );
    assert_eq!(dap.exit_code().await, Some(0));
}

/// Looking at a value in the debug console while a question is pending
/// leaves it pending: `$draft` shows the draft, and a run continued without
/// an answer ends paused. The answer is the `streetraceAnswer` request.
#[tokio::test]
async fn evaluating_never_answers_a_human_question() {
    let dir = temp("draft");
    let source = "streetrace v1\n\nflow main:\n    $draft = \"Dear team, we ship today.\"\n    \
                  escalate to human \"send the draft?\"\n    return $human_input\n";
    std::fs::write(dir.join("draft.sr"), source).unwrap();
    for answer in [None, Some("send it")] {
        let mut dap = Adapter::start_in(&dir, &[]);
        dap.request("initialize", json!({})).await;
        dap.request("launch", json!({"program": "draft.sr"})).await;
        dap.request("configurationDone", json!({})).await;
        assert_eq!(dap.event("stopped").await["body"]["reason"], "exception");
        let shown = dap.request("evaluate", json!({"expression": "$draft", "context": "repl"})).await;
        assert_eq!(shown["body"]["result"], "\"Dear team, we ship today.\"");
        assert_eq!(
            dap.output("console"),
            "run flow main of draft.sr\nflow main started\n$draft = Dear team, we ship today.\n"
        );
        if let Some(text) = answer {
            let bad = dap.request("streetraceAnswer", json!({"threadId": 1})).await;
            assert_eq!(bad["message"], "streetraceAnswer needs `text`, the answer");
            let bad = dap.request("streetraceAnswer", json!({"text": ["no"]})).await;
            assert!(bad["message"].as_str().unwrap().starts_with("bad arguments for 'streetraceAnswer'"), "{bad}");
            let answered = dap.request("streetraceAnswer", json!({"threadId": 1, "text": text})).await;
            assert_eq!(answered["body"], json!({"threadId": 1, "question": "send the draft?"}));
            let again = dap.request("streetraceAnswer", json!({"threadId": 2, "text": text})).await;
            assert_eq!(again["message"], "thread 2 is not stopped");
        }
        dap.request("continue", json!({"threadId": 1})).await;
        let code = dap.event("exited").await["body"]["exitCode"].as_i64();
        let questions: Vec<&Value> =
            dap.transcript.iter().filter(|m| m["event"] == "streetraceQuestion").map(|m| &m["body"]).collect();
        let waits = json!({"threadId": 1, "question": "send the draft?"});
        assert_eq!(questions, [&waits, &json!({"threadId": 1, "question": null})], "it waits, then no longer");
        match answer {
            None => {
                assert_eq!(code, Some(3), "paused: the question is still open");
                assert!(dap.output("important").contains("run paused: waiting for a human"));
            }
            Some(text) => {
                assert_eq!(code, Some(0));
                assert!(dap.output("console").contains(&format!("run completed: {text}\n")));
            }
        }
        dap.disconnect().await;
    }
}

/// A model's HTTP 400 handled by `on failure:` does not stop the thread
/// (the `caught` filter is off) but shows in the debug console, naming the
/// statement that made the call; an uncaught failure shows where it happens
/// too. With `noDebug` the same lines show.
#[tokio::test(flavor = "multi_thread")]
async fn caught_failures_show_in_the_debug_console() {
    use sr_llm::mock::{MOCK_KEY, MockReply, MockServer};
    let dir = temp("caught");
    let source = "streetrace v1\n\nmodel main = openai/gpt-4o-mini\n\nprompt hi: \"\"\"Say hi.\"\"\"\n\n\
                  flow main:\n    $greeting = call llm hi\n    on failure:\n        $greeting = \"fallback\"\n    \
                  log $greeting\n    $n = $greeting.size\n    return $n\n";
    std::fs::write(dir.join("caught.sr"), source).unwrap();
    let path = dir.join("caught.sr").display().to_string();
    for no_debug in [false, true] {
        let server = MockServer::start().await;
        server.push(MockReply::error(400, "Unsupported value: 'temperature'"));
        let env = [("OPENAI_BASE_URL", format!("{}/v1", server.url())), ("OPENAI_API_KEY", MOCK_KEY.to_string())];
        let mut dap = Adapter::start_in(&dir, &env);
        dap.request("initialize", json!({})).await;
        dap.request("launch", json!({"program": "caught.sr", "noDebug": no_debug})).await;
        dap.request("configurationDone", json!({})).await;
        if !no_debug {
            // Only the uncaught failure stops.
            let stopped = dap.event("stopped").await;
            assert_eq!(stopped["body"]["text"], "cannot read field 'size' of a string", "{stopped}");
            dap.request("continue", json!({"threadId": 1})).await;
        }
        assert_eq!(dap.event("exited").await["body"]["exitCode"], 1);
        let failures: Vec<&Value> = dap
            .transcript
            .iter()
            .filter(|m| m["event"] == "output" && m["body"]["output"].as_str().unwrap().starts_with("failure"))
            .map(|m| &m["body"])
            .collect();
        assert_eq!(failures.len(), 2, "{failures:?}");
        let caught = failures[0];
        assert_eq!(caught["category"], "console");
        assert_eq!(
            (&caught["line"], &caught["column"], &caught["source"]["path"]),
            (&json!(8), &json!(5), &json!(path))
        );
        assert_eq!(
            caught["output"],
            "failure at caught.sr:8:5 (handled by `on failure:`): model openai/gpt-4o-mini: openai: HTTP 400: \
             mock_error: Unsupported value: 'temperature'\n"
        );
        let uncaught = failures[1];
        assert_eq!(uncaught["category"], "stderr");
        assert_eq!(uncaught["output"], "failure at caught.sr:12:5: cannot read field 'size' of a string\n");
        assert_eq!(uncaught["line"], 12);
        assert_eq!(dap.output("stdout"), "fallback\n");
        dap.disconnect().await;
    }
}

/// Text from the client nested 20,000 levels deep (a condition, an
/// evaluation, a new value) gets an error and the adapter goes on; nesting
/// just under the limit evaluates on the adapter's own threads.
#[tokio::test]
async fn deeply_nested_expressions_get_errors_not_a_crash() {
    let program = fixtures().join("debug.sr").canonicalize().unwrap();
    let mut dap = Adapter::start();
    dap.request("initialize", json!({})).await;
    dap.request("launch", json!({"program": "debug.sr", "replay": "debug.cassette.jsonl", "prompt": "Greet Ada"}))
        .await;
    dap.event("initialized").await;
    let deep = format!("{}1{}", "(".repeat(20_000), ")".repeat(20_000));
    let set = dap
        .request(
            "setBreakpoints",
            json!({"source": {"path": program}, "breakpoints": [{"line": 24, "condition": deep}, {"line": 25}]}),
        )
        .await;
    let breakpoints = &set["body"]["breakpoints"];
    assert_eq!(breakpoints[0]["verified"], false);
    assert!(breakpoints[0]["message"].as_str().unwrap().contains("nested more than 256 levels"), "{set}");
    assert_eq!(breakpoints[1]["verified"], true);
    dap.request("configurationDone", json!({})).await;
    assert_eq!(dap.event("stopped").await["body"]["reason"], "breakpoint");
    let trace = dap.request("stackTrace", json!({"threadId": 1})).await;
    let frame = trace["body"]["stackFrames"][0]["id"].clone();
    for context in ["repl", "watch", "hover"] {
        let answer = dap.request("evaluate", json!({"expression": deep, "frameId": frame, "context": context})).await;
        assert_eq!(answer["success"], false);
        assert!(answer["message"].as_str().unwrap().contains("nested more than 256 levels"), "{answer}");
    }
    let scopes = dap.request("scopes", json!({"frameId": frame})).await;
    let locals = scopes["body"]["scopes"][0]["variablesReference"].clone();
    let set = dap.request("setVariable", json!({"variablesReference": locals, "name": "count", "value": deep})).await;
    assert_eq!(set["success"], false);
    let near = format!("{}$count{}", "(".repeat(250), ")".repeat(250));
    let answer = dap.request("evaluate", json!({"expression": near, "frameId": frame})).await;
    assert_eq!(answer["body"]["result"], "1");
    let negated = format!("{}$count", "-".repeat(250));
    let answer = dap.request("evaluate", json!({"expression": negated, "frameId": frame})).await;
    assert_eq!(answer["body"]["result"], "1", "an even number of minus signs");
    dap.request("continue", json!({"threadId": 1})).await;
    assert_eq!(dap.event("exited").await["body"]["exitCode"], 0);
    dap.disconnect().await;
}

/// `record` writes a cassette of a live run (against the mock server);
/// `replay` runs it again offline with the same result.
#[tokio::test(flavor = "multi_thread")]
async fn record_then_replay() {
    use sr_llm::mock::{MOCK_KEY, MockReply, MockServer};
    let dir = temp("record");
    let source = "streetrace v1\n\nmodel main = openai/gpt-4o-mini\n\nprompt hi: \"\"\"Say hi to ${input_prompt}.\"\"\"\n\n\
                  flow main:\n    $greeting = call llm hi\n    return $greeting\n";
    std::fs::write(dir.join("hi.sr"), source).unwrap();
    let server = MockServer::start().await;
    server.push(MockReply::text("Hi Ada!"));
    let env = [("OPENAI_BASE_URL", format!("{}/v1", server.url())), ("OPENAI_API_KEY", MOCK_KEY.to_string())];
    let mut dap = Adapter::start_in(&dir, &env);
    dap.request("initialize", json!({})).await;
    let launch =
        dap.request("launch", json!({"program": "hi.sr", "prompt": "Ada", "record": "hi.cassette.jsonl"})).await;
    assert_eq!(launch["success"], true, "{launch}");
    dap.request("configurationDone", json!({})).await;
    assert_eq!(dap.event("exited").await["body"]["exitCode"], 0);
    assert!(dap.output("console").contains("run completed: Hi Ada!\n"), "{}", dap.output("console"));
    let seq = dap.send("disconnect", None).await;
    dap.response(seq).await;
    dap.exit_code().await;
    assert_eq!(server.requests().len(), 1);
    let cassette = std::fs::read_to_string(dir.join("hi.cassette.jsonl")).unwrap();
    assert!(cassette.contains("Hi Ada!") && !cassette.contains(MOCK_KEY), "{cassette}");

    // Offline: no server in the environment, nothing sent to the old one.
    let mut dap = Adapter::start_in(&dir, &[]);
    dap.request("initialize", json!({})).await;
    let launch =
        dap.request("launch", json!({"program": "hi.sr", "prompt": "Ada", "replay": "hi.cassette.jsonl"})).await;
    assert_eq!(launch["success"], true, "{launch}");
    dap.request("configurationDone", json!({})).await;
    assert_eq!(dap.event("exited").await["body"]["exitCode"], 0);
    assert!(dap.output("console").contains("run completed: Hi Ada!\n"), "{}", dap.output("console"));
    assert_eq!(server.requests().len(), 1);
    let seq = dap.send("disconnect", None).await;
    dap.response(seq).await;
}

/// Launching does not wait for MCP servers: one that never answers is only
/// connected when an agent first uses it, so the launch answers at once and
/// the run stops at its first statement.
#[tokio::test]
async fn launch_does_not_wait_for_mcp_servers() {
    let dir = temp("mcp");
    let source = "streetrace v1\n\nmodel main = openai/gpt-4o-mini\n\ntool slow = mcp \"stdio:sleep 600\"\n\n\
                  prompt use_it: \"\"\"Use it.\"\"\"\n\nagent helper:\n    instruction use_it\n    tools slow\n\n\
                  flow main:\n    $x = 1\n    $y = run agent helper with \"go\"\n    return $y\n";
    std::fs::write(dir.join("mcp.sr"), source).unwrap();
    let mut dap = Adapter::start_in(&dir, &[]);
    dap.request("initialize", json!({})).await;
    let started = Instant::now();
    let launch = dap.request("launch", json!({"program": "mcp.sr", "stopOnEntry": true})).await;
    assert_eq!(launch["success"], true, "{launch}");
    dap.event("initialized").await;
    dap.request("configurationDone", json!({})).await;
    assert_eq!(dap.event("stopped").await["body"]["reason"], "entry");
    assert!(started.elapsed() < Duration::from_secs(5), "took {:?}", started.elapsed());
    let trace = dap.request("stackTrace", json!({"threadId": 1})).await;
    assert_eq!(trace["body"]["stackFrames"][0]["line"], 14);
    dap.request("terminate", json!({})).await;
    dap.event("terminated").await;
    dap.disconnect().await;
}

/// Parallel branches over the wire: step in at `parallel do` stops each
/// branch on its own thread, a step on one leaves the other stopped, and a
/// failing branch stops on its own thread.
#[tokio::test]
async fn parallel_branches_step_and_fail_on_their_own_threads() {
    let dir = temp("parallel");
    let source = "streetrace v1\n\nflow main:\n    $a = {x: 0}\n    parallel do\n        $a = {x: 1}\n        $b = 2\n    end\n    \
                  parallel do\n        $c = 3\n        $d = $a.y\n    end\n    return $a\n";
    std::fs::write(dir.join("par.sr"), source).unwrap();
    let program = dir.join("par.sr").canonicalize().unwrap();
    let mut dap = Adapter::start_in(&dir, &[]);
    dap.request("initialize", json!({})).await;
    dap.request("launch", json!({"program": "par.sr"})).await;
    dap.event("initialized").await;
    dap.request("setBreakpoints", json!({"source": {"path": program}, "breakpoints": [{"line": 5}]})).await;
    dap.request("configurationDone", json!({})).await;
    assert_eq!(dap.event("stopped").await["body"]["threadId"], 1);
    assert_eq!(dap.request("stepIn", json!({"threadId": 1})).await["success"], true);
    let mut stops = Vec::new();
    for _ in 0..2 {
        let stopped = dap.event("stopped").await;
        assert_eq!(
            (&stopped["body"]["reason"], &stopped["body"]["allThreadsStopped"]),
            (&json!("step"), &json!(false))
        );
        stops.push(stopped["body"]["threadId"].as_i64().unwrap());
    }
    stops.sort();
    assert_eq!(stops, [2, 3]);
    let threads = dap.request("threads", json!({})).await;
    let names: Vec<&str> =
        threads["body"]["threads"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    // Named as the run's events name them (the runtime's threads 1 and 2).
    assert_eq!(names, ["main", "branch:1", "branch:2"]);

    // `next` on branch 1 (thread 2) ends it; branch 2 (thread 3) stays stopped.
    let next = dap.request("next", json!({"threadId": 2})).await;
    assert_eq!(next["body"], Value::Null, "a step has no allThreadsContinued");
    let exited = dap.event("thread").await;
    assert_eq!((&exited["body"]["reason"], &exited["body"]["threadId"]), (&json!("exited"), &json!(2)));
    let trace = dap.request("stackTrace", json!({"threadId": 3})).await;
    assert_eq!(trace["body"]["stackFrames"][0]["line"], 7, "still stopped where it was");
    let single = dap.request("continue", json!({"threadId": 3, "singleThread": true})).await;
    assert_eq!(single["body"]["allThreadsContinued"], false);
    let stopped = dap.event("stopped").await;
    assert_eq!((&stopped["body"]["reason"], &stopped["body"]["threadId"]), (&json!("step"), &json!(1)));
    let trace = dap.request("stackTrace", json!({"threadId": 1})).await;
    assert_eq!(trace["body"]["stackFrames"][0]["line"], 9, "after the block");

    // The second block's second branch fails: runtime thread 4, DAP thread 5.
    let all = dap.request("continue", json!({"threadId": 1})).await;
    assert_eq!(all["body"]["allThreadsContinued"], true);
    let stopped = dap.event("stopped").await;
    assert_eq!((&stopped["body"]["reason"], &stopped["body"]["threadId"]), (&json!("exception"), &json!(5)));
    assert_eq!(stopped["body"]["text"], "no field 'y' (fields: x)");
    let trace = dap.request("stackTrace", json!({"threadId": 5})).await;
    assert_eq!(trace["body"]["stackFrames"][0]["line"], 11);
    dap.request("continue", json!({"threadId": 5})).await;
    assert_eq!(dap.event("exited").await["body"]["exitCode"], 1);
    dap.disconnect().await;
}

/// Copy Value: the adapter advertises the `clipboard` context, so VS Code
/// evaluates the variable's `evaluateName` there and copies all of it;
/// the *Variables* view and every other context keep the preview.
#[tokio::test]
async fn copy_value_copies_the_whole_value() {
    let dir = temp("clipboard");
    let source = "streetrace v1\n\nflow main:\n    $long = \"x\" * 23889\n    return len($long)\n";
    std::fs::write(dir.join("copy.sr"), source).unwrap();
    let program = dir.join("copy.sr").canonicalize().unwrap();
    let mut dap = Adapter::start_in(&dir, &[]);
    let init = dap.request("initialize", json!({})).await;
    assert_eq!(init["body"]["supportsClipboardContext"], true);
    dap.request("launch", json!({"program": "copy.sr"})).await;
    dap.request("setBreakpoints", json!({"source": {"path": program}, "breakpoints": [{"line": 5}]})).await;
    dap.request("configurationDone", json!({})).await;
    dap.event("stopped").await;
    let trace = dap.request("stackTrace", json!({"threadId": 1})).await;
    let frame = trace["body"]["stackFrames"][0]["id"].clone();
    let scopes = dap.request("scopes", json!({"frameId": frame})).await;
    let locals = scopes["body"]["scopes"][0]["variablesReference"].clone();
    let variables = dap.request("variables", json!({"variablesReference": locals})).await;
    let long = variables["body"]["variables"].as_array().unwrap().iter().find(|v| v["name"] == "long").unwrap();
    assert_eq!(long["value"].as_str().unwrap().chars().count(), 10_002, "a preview");
    let name = long["evaluateName"].clone();
    assert_eq!(name, "$long");
    let copied = dap.request("evaluate", json!({"expression": name, "frameId": frame, "context": "clipboard"})).await;
    assert_eq!(copied["body"]["result"].as_str().unwrap(), "x".repeat(23_889));
    for context in ["watch", "repl", "hover", "variables"] {
        let shown = dap.request("evaluate", json!({"expression": name, "frameId": frame, "context": context})).await;
        assert_eq!(shown["body"]["result"].as_str().unwrap().chars().count(), 10_002, "{context}");
    }
    dap.request("continue", json!({"threadId": 1})).await;
    assert_eq!(dap.event("exited").await["body"]["exitCode"], 0);
    dap.disconnect().await;
}

/// Over the wire: a 1 MB reply in 20,000 deltas is a few output events; a
/// value over 10,000 characters expands and copies whole; a column
/// breakpoint (set on a `sub/../` spelling of the file) stands on the inline
/// statement.
#[tokio::test(flavor = "multi_thread")]
async fn long_replies_long_values_and_columns() {
    use sr_llm::mock::{MOCK_KEY, MockReply, MockServer};
    let dir = temp("long");
    let source = "streetrace v1\n\nmodel main = openai/gpt-4o-mini\n\nprompt talk: \"\"\"Talk.\"\"\"\n\n\
                  flow main:\n    $reply = call llm talk\n    $seen = []\n    for $i in [1, 2] do\n        \
                  if $i > 1: push len($reply) to $seen\n    end\n    return $seen\n";
    std::fs::write(dir.join("long.sr"), source).unwrap();
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    let chunk = "y".repeat(49) + " ";
    let server = MockServer::start().await;
    server.push(MockReply::chunks(std::iter::repeat_n(chunk.clone(), 20_000)));
    let env = [("OPENAI_BASE_URL", format!("{}/v1", server.url())), ("OPENAI_API_KEY", MOCK_KEY.to_string())];
    let mut dap = Adapter::start_in(&dir, &env);
    dap.request("initialize", json!({})).await;
    dap.request("launch", json!({"program": "long.sr"})).await;
    dap.event("initialized").await;
    let dotted = dir.join("sub/../long.sr");
    let set = dap
        .request("setBreakpoints", json!({"source": {"path": dotted}, "breakpoints": [{"line": 11, "column": 20}]}))
        .await;
    assert_eq!(
        (&set["body"]["breakpoints"][0]["line"], &set["body"]["breakpoints"][0]["column"]),
        (&json!(11), &json!(20))
    );
    dap.request("configurationDone", json!({})).await;

    let stopped = dap.event("stopped").await;
    assert_eq!(stopped["body"]["reason"], "breakpoint");
    let trace = dap.request("stackTrace", json!({"threadId": 1})).await;
    assert_eq!(trace["body"]["stackFrames"][0]["line"], 11);
    let frame = trace["body"]["stackFrames"][0]["id"].clone();
    let i = dap.request("evaluate", json!({"expression": "$i", "frameId": frame})).await;
    assert_eq!(i["body"]["result"], "2", "the `if` ran for 1 without stopping");
    let stdout = dap.output("stdout");
    assert_eq!(stdout, chunk.repeat(20_000) + "\n");
    let batches = dap.transcript.iter().filter(|m| m["event"] == "output" && m["body"]["category"] == "stdout").count();
    assert!(batches < 1_000, "{batches} output events for 20,000 deltas");

    let reply = dap.request("evaluate", json!({"expression": "$reply", "frameId": frame, "context": "watch"})).await;
    assert_eq!(reply["body"]["result"].as_str().unwrap().chars().count(), 10_002);
    assert_eq!(reply["body"]["indexedVariables"], 100);
    let pieces = dap
        .request(
            "variables",
            json!({"variablesReference": reply["body"]["variablesReference"], "start": 99, "count": 1}),
        )
        .await;
    assert_eq!(pieces["body"]["variables"][0]["name"], "[990000..1000000]");
    let copied =
        dap.request("evaluate", json!({"expression": "$reply", "frameId": frame, "context": "clipboard"})).await;
    assert_eq!(copied["body"]["result"].as_str().unwrap().len(), 1_000_000);
    dap.request("continue", json!({"threadId": 1})).await;
    assert_eq!(dap.event("exited").await["body"]["exitCode"], 0);
    assert!(dap.output("console").contains("run completed: [1000000]\n"));
    let seq = dap.send("disconnect", None).await;
    dap.response(seq).await;
}

/// One file under every spelling a client may use (absolute, relative,
/// `./`, `sub/../`, a symlink) is one file: each spelling's breakpoints hit,
/// and setting one spelling's leaves the others'. A breakpoint in a file the
/// program does not load is unverified, with a message.
#[tokio::test]
async fn every_spelling_of_a_file_hits() {
    let dir = temp("spellings");
    let source = "streetrace v1\n\nflow main:\n    $a = 1\n    $b = 2\n    $c = 3\n    $d = 4\n    $e = 5\n    \
                  return $a + $b + $c + $d + $e\n";
    std::fs::write(dir.join("x.sr"), source).unwrap();
    std::fs::write(dir.join("other.sr"), source).unwrap();
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    std::os::unix::fs::symlink(dir.join("x.sr"), dir.join("link.sr")).unwrap();
    let absolute = dir.join("x.sr").display().to_string();
    let spellings = [
        absolute.clone(),
        "x.sr".to_string(),
        "./x.sr".to_string(),
        "sub/../x.sr".to_string(),
        dir.join("link.sr").display().to_string(),
    ];
    let mut dap = Adapter::start_in(&dir, &[]);
    dap.request("initialize", json!({})).await;
    dap.request("launch", json!({"program": "./x.sr"})).await;
    let mut ids = Vec::new();
    for (line, path) in (4..).zip(&spellings) {
        let set =
            dap.request("setBreakpoints", json!({"source": {"path": path}, "breakpoints": [{"line": line}]})).await;
        let breakpoint = &set["body"]["breakpoints"][0];
        assert_eq!((&breakpoint["verified"], &breakpoint["line"]), (&json!(true), &json!(line)), "{path}: {set}");
        ids.push(breakpoint["id"].clone());
    }
    for path in [dir.join("other.sr").display().to_string(), "gone/x.sr".to_string()] {
        let set = dap.request("setBreakpoints", json!({"source": {"path": path}, "breakpoints": [{"line": 4}]})).await;
        let breakpoint = &set["body"]["breakpoints"][0];
        assert_eq!(breakpoint["verified"], false);
        assert_eq!(breakpoint["message"], format!("{path} is not part of the program"));
    }
    dap.request("configurationDone", json!({})).await;
    let mut hits = Vec::new();
    loop {
        let stopped = dap.next().await;
        match stopped["event"].as_str() {
            Some("exited") => break,
            Some("stopped") => {}
            _ => continue,
        }
        assert_eq!(stopped["body"]["reason"], "breakpoint");
        let trace = dap.request("stackTrace", json!({"threadId": 1})).await;
        assert_eq!(trace["body"]["stackFrames"][0]["source"]["path"], absolute);
        hits.push((
            trace["body"]["stackFrames"][0]["line"].as_i64().unwrap(),
            stopped["body"]["hitBreakpointIds"][0].clone(),
        ));
        if hits.len() == 1 {
            // The relative spelling's breakpoints go; the others' stay.
            dap.request("setBreakpoints", json!({"source": {"path": "x.sr"}, "breakpoints": []})).await;
        }
        dap.request("continue", json!({"threadId": 1})).await;
    }
    let expected: Vec<(i64, Value)> = [(4, 0), (6, 2), (7, 3), (8, 4)].map(|(line, i)| (line, ids[i].clone())).to_vec();
    assert_eq!(hits, expected);
    dap.disconnect().await;
}

/// A data breakpoint over the wire: `dataBreakpointInfo` on a flow variable
/// gives its data id (and none for a run-scope name), `setDataBreakpoints`
/// with a condition verifies it, and the thread stops (reason `data
/// breakpoint`) after each write that meets the condition, at the next
/// statement, with the new value.
#[tokio::test]
async fn data_breakpoints_as_a_transcript() {
    let dir = temp("data");
    let source = "streetrace v1\n\nflow main:\n    $total = 0\n    for $i in [1, 2, 3, 4] do\n        \
                  $total = $total + $i\n    end\n\n    log \"total ${total}\"\n    return $total\n";
    std::fs::write(dir.join("data.sr"), source).unwrap();
    let program = dir.join("data.sr").canonicalize().unwrap();
    let mut dap = Adapter::start_in(&dir, &[]);
    let init = dap.request("initialize", json!({})).await;
    assert_eq!(init["body"]["supportsDataBreakpoints"], true);
    dap.request("launch", json!({"program": "data.sr"})).await;
    dap.event("initialized").await;
    dap.request("setBreakpoints", json!({"source": {"path": program}, "breakpoints": [{"line": 4}]})).await;
    dap.request("configurationDone", json!({})).await;
    assert_eq!(dap.event("stopped").await["body"]["reason"], "breakpoint");

    let trace = dap.request("stackTrace", json!({"threadId": 1})).await;
    let frame = trace["body"]["stackFrames"][0]["id"].clone();
    let scopes = dap.request("scopes", json!({"frameId": frame})).await;
    let scope = |name: &str| {
        scopes["body"]["scopes"].as_array().unwrap().iter().find(|s| s["name"] == name).unwrap()["variablesReference"]
            .clone()
    };
    let (variables, run) = (scope("Variables"), scope("Run"));
    let info = dap.request("dataBreakpointInfo", json!({"variablesReference": variables, "name": "total"})).await;
    assert_eq!(info["body"]["dataId"], "total");
    assert_eq!(info["body"]["description"], "$total is assigned");
    let not_a_variable = dap.request("dataBreakpointInfo", json!({"variablesReference": run, "name": "total"})).await;
    assert_eq!(not_a_variable["body"]["dataId"], Value::Null);

    let set = dap
        .request("setDataBreakpoints", json!({"breakpoints": [{"dataId": "total", "condition": "$total > 2"}]}))
        .await;
    assert_eq!(set["body"]["breakpoints"][0]["verified"], true);
    dap.request("setBreakpoints", json!({"source": {"path": program}, "breakpoints": []})).await;
    dap.request("continue", json!({"threadId": 1})).await;
    let mut seen = Vec::new();
    for _ in 0..3 {
        assert_eq!(dap.event("stopped").await["body"]["reason"], "data breakpoint");
        let trace = dap.request("stackTrace", json!({"threadId": 1})).await;
        let top = &trace["body"]["stackFrames"][0];
        let total = dap.request("evaluate", json!({"expression": "$total", "frameId": top["id"]})).await;
        seen.push((top["line"].as_i64().unwrap(), total["body"]["result"].as_str().unwrap().to_string()));
        dap.request("continue", json!({"threadId": 1})).await;
    }
    assert_eq!(seen, [(6, "3".to_string()), (6, "6".to_string()), (9, "10".to_string())]);
    assert_eq!(dap.event("exited").await["body"]["exitCode"], 0);
    assert_eq!(dap.output("stdout"), "total 10\n");
    dap.disconnect().await;
}

/// A data breakpoint on a variable a `parallel do` branch writes: the branch
/// is that one assignment and ends with it, so its parent stops after the
/// block (the writes of every branch are there), once.
#[tokio::test]
async fn a_write_in_a_parallel_branch_fires_its_data_breakpoint() {
    let dir = temp("data-parallel");
    let source = "streetrace v1\n\nflow bump:\n    $b = $b + 1\n    $b = $b * 10\n    return $b\n\nflow main:\n    \
                  $a = 0\n    $b = 0\n    parallel do\n        $a = 1\n        $c = run bump\n    end\n    \
                  log \"a is ${a}\"\n    return [$a, $b, $c]\n";
    std::fs::write(dir.join("par.sr"), source).unwrap();
    let program = dir.join("par.sr").canonicalize().unwrap();
    let mut dap = Adapter::start_in(&dir, &[]);
    dap.request("initialize", json!({})).await;
    dap.request("launch", json!({"program": "par.sr"})).await;
    dap.request("setBreakpoints", json!({"source": {"path": program}, "breakpoints": [{"line": 11}]})).await;
    dap.request("configurationDone", json!({})).await;
    dap.event("stopped").await;
    let set = dap.request("setDataBreakpoints", json!({"breakpoints": [{"dataId": "a"}, {"dataId": "b"}]})).await;
    let ids: Vec<Value> = set["body"]["breakpoints"].as_array().unwrap().iter().map(|b| b["id"].clone()).collect();
    dap.request("continue", json!({"threadId": 1})).await;
    let mut stops = Vec::new();
    loop {
        let message = dap.next().await;
        match message["event"].as_str() {
            Some("stopped") => {}
            Some("exited") => break,
            _ => continue,
        }
        let thread = message["body"]["threadId"].as_i64().unwrap();
        let trace = dap.request("stackTrace", json!({"threadId": thread})).await;
        let top = &trace["body"]["stackFrames"][0];
        let value = |name: &str| json!({"expression": name, "frameId": top["id"], "context": "watch"});
        let a = dap.request("evaluate", value("$a")).await["body"]["result"].clone();
        let b = dap.request("evaluate", value("$b")).await["body"]["result"].clone();
        stops.push((thread, top["line"].clone(), message["body"]["hitBreakpointIds"].clone(), a, b));
        dap.request("continue", json!({"threadId": thread})).await;
    }
    // `$b` in `bump` (branch 2, thread 3): after each write, at the branch's
    // next point; its last write and `$a = 1` (branch 1) stop main after the block.
    assert_eq!(
        stops,
        [
            (3, json!(5), json!([ids[1]]), json!("0"), json!("1")),
            (3, json!(6), json!([ids[1]]), json!("0"), json!("10")),
            (1, json!(15), json!([ids[0]]), json!("1"), json!("10")),
        ]
    );
    assert!(dap.output("console").contains("run completed: [1,10,10]\n"), "{}", dap.output("console"));
    dap.disconnect().await;
}
