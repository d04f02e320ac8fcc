//! Forks over stdio: a new choice after going back in time (an edit, an
//! answer, `streetraceRunLiveFrom`) makes a fork, `streetraceForks` lists
//! them with their parent and fork point, and `streetraceSwitchFork` goes to
//! any of them, the original run included, with its files and without
//! calling anything again. Judged by the files on disk and the requests the
//! mock model server received.
#![allow(clippy::unwrap_used)]

mod common;
mod transcript;

use serde_json::{Value, json};
use sr_llm::mock::{MockReply, MockServer};
use transcript::{Adapter, READS_ITS_WRITES, adapter, asked, eval, file, files, go, program, set, start, temp, top};

/// `streetraceForks`: (id, parent, reason, label, current) of each fork.
async fn forks(dap: &mut Adapter) -> Vec<(i64, Option<i64>, Option<String>, String, bool)> {
    let listed = dap.request("streetraceForks", json!({})).await;
    assert_eq!(listed["success"], true, "{listed}");
    let forks = listed["body"]["forks"].as_array().unwrap();
    let current = forks.iter().find(|f| f["current"] == true).unwrap()["id"].clone();
    assert_eq!(listed["body"]["current"], current);
    forks
        .iter()
        .map(|f| {
            (
                f["id"].as_i64().unwrap(),
                f["parent"].as_i64(),
                f["reason"].as_str().map(str::to_string),
                f["label"].as_str().unwrap().to_string(),
                f["current"] == true,
            )
        })
        .collect()
}

fn fork(
    id: i64,
    parent: Option<i64>,
    reason: Option<&str>,
    label: &str,
    current: bool,
) -> (i64, Option<i64>, Option<String>, String, bool) {
    (id, parent, reason.map(str::to_string), label.to_string(), current)
}

/// `streetraceSwitchFork` to `id`, and the stop it makes.
async fn switch(dap: &mut Adapter, id: i64) -> Value {
    let switched = dap.request("streetraceSwitchFork", json!({"id": id})).await;
    assert_eq!(switched["success"], true, "{switched}");
    dap.event("stopped").await
}

/// An edit after going back makes fork 2; switching to fork 1 (the
/// original run) stops where fork 2 left it, with the original's files,
/// and going on there serves the original's recording; switching to fork 2
/// brings its edit and files back. Nothing is asked twice.
#[tokio::test(flavor = "multi_thread")]
async fn forks_are_listed_and_each_comes_back_with_its_files() {
    let dir = temp("forks-switch");
    let program = program(&dir, "fork.sr", READS_ITS_WRITES);
    let server = MockServer::start().await;
    server.push(MockReply::text("A fruit."));
    server.push(MockReply::text("Another fruit."));
    let mut dap = adapter(&dir, &server);
    start(&mut dap, json!({"program": "fork.sr"}), &program, &[11, 14]).await;
    go(&mut dap, "continue").await;
    assert_eq!(forks(&mut dap).await, [fork(1, None, None, "the original run", true)]);

    go(&mut dap, "reverseContinue").await;
    set(&mut dap, "v", "\"pear\"").await;
    go(&mut dap, "continue").await;
    assert_eq!(files(&dir), [file("pear.txt", "pear")]);
    let console = dap.output("console");
    assert!(
        console.contains("fork 2: $v edited at fork.sr:11 (main), leaving fork 1; the run goes on in fork 2\n"),
        "{console}"
    );
    let listed = dap.request("streetraceForks", json!({})).await;
    let second = &listed["body"]["forks"][1];
    assert_eq!((&second["threadId"], &second["line"], &second["frame"]), (&json!(1), &json!(11), &json!("flow main")));
    assert_eq!(second["source"]["path"], json!(program.display().to_string()));
    assert_eq!(
        forks(&mut dap).await,
        [
            fork(1, None, None, "the original run", false),
            fork(2, Some(1), Some("edit"), "$v edited at fork.sr:11 (main)", true),
        ]
    );

    // The original run, where fork 2 left it: before the write, `$v` its own.
    let stopped = switch(&mut dap, 1).await;
    assert_eq!((&stopped["body"]["reason"], &stopped["body"]["threadId"]), (&json!("goto"), &json!(1)));
    assert_eq!(top(&mut dap).await, ("flow main".to_string(), 11));
    assert_eq!(eval(&mut dap, "$v").await, json!("\"apple\""));
    assert_eq!(files(&dir), [], "fork 2's file is gone, the original's not written yet");
    go(&mut dap, "continue").await;
    assert_eq!(files(&dir), [file("apple.txt", "apple")]);
    assert_eq!(eval(&mut dap, "$answer").await, json!("\"A fruit.\""), "the original's reply, served");
    assert_eq!(forks(&mut dap).await[0], fork(1, None, None, "the original run", true));

    // Fork 2 again, from its own fork point: its edit is made again.
    switch(&mut dap, 2).await;
    assert_eq!(eval(&mut dap, "$v").await, json!("\"pear\""));
    assert_eq!(files(&dir), []);
    go(&mut dap, "continue").await;
    assert_eq!(files(&dir), [file("pear.txt", "pear")]);
    assert_eq!(eval(&mut dap, "$answer").await, json!("\"Another fruit.\""));
    assert_eq!(server.requests().len(), 2, "nothing was asked again");
    assert_eq!(asked(&server, 1), "What is pear?");

    for (arguments, refusal) in [
        (json!({"id": 2}), "fork 2 is the one the run is in"),
        (json!({"id": 9}), "there is no fork 9"),
        (json!({"id": 0}), "there is no fork 0"),
        (json!({}), "streetraceSwitchFork needs `id`, a fork of streetraceForks"),
    ] {
        let refused = dap.request("streetraceSwitchFork", arguments).await;
        assert_eq!((&refused["success"], &refused["message"]), (&json!(false), &json!(refusal)));
    }
    dap.request("continue", json!({"threadId": 1})).await;
    assert_eq!(dap.event("exited").await["body"]["exitCode"], 0);
    assert!(dap.output("console").contains("run completed: Another fruit.\n"));
    dap.disconnect().await;
}

/// A tool that failed, retried after its cause was fixed: going back to the
/// call serves its recorded failure again, until `streetraceRunLiveFrom`
/// makes the thread go live there; the retry is a fork.
#[tokio::test(flavor = "multi_thread")]
async fn run_live_from_retries_a_tool_after_its_cause_is_fixed() {
    let dir = temp("forks-live");
    let source = "streetrace v1\n\ntool fs = builtin streetrace.fs\n\nflow main:\n    \
                  $c = fs.read_file(\"config.txt\")\n    return $c\n";
    let program = program(&dir, "live.sr", source);
    let server = MockServer::start().await;
    let mut dap = adapter(&dir, &server);
    let stopped = start(&mut dap, json!({"program": "live.sr"}), &program, &[]).await;
    assert_eq!(stopped["body"]["reason"], "exception", "the file is missing");
    let live = dap.request("streetraceRunLiveFrom", json!({"threadId": 1})).await;
    assert_eq!(live["success"], true, "{live}");
    assert!(dap.output("console").contains("main is live from here already"), "{}", dap.output("console"));

    // Back to the call, the cause fixed: the recording still has the failure.
    go(&mut dap, "stepBack").await;
    assert_eq!(top(&mut dap).await, ("tool read_file".to_string(), 6));
    std::fs::write(dir.join("config.txt"), "debug=true").unwrap();
    assert_eq!(go(&mut dap, "continue").await["body"]["reason"], "exception", "the recorded failure, served");
    assert_eq!(forks(&mut dap).await.len(), 1);

    go(&mut dap, "stepBack").await;
    let live = dap.request("streetraceRunLiveFrom", json!({})).await;
    assert_eq!(live["body"]["threadId"], 1, "the thread that stopped last");
    assert!(dap.output("console").contains("main goes live here when it resumes"), "{}", dap.output("console"));
    dap.request("continue", json!({"threadId": 1})).await;
    assert_eq!(dap.event("exited").await["body"]["exitCode"], 0);
    assert!(dap.output("console").contains("run completed: debug=true\n"), "{}", dap.output("console"));
    assert_eq!(
        forks(&mut dap).await,
        [
            fork(1, None, None, "the original run", false),
            fork(2, Some(1), Some("live"), "run live at live.sr:6 (main)", true),
        ]
    );
    let refused = dap.request("streetraceRunLiveFrom", json!({"threadId": 1})).await;
    assert_eq!(refused["message"], "thread 1 is not stopped");
    dap.disconnect().await;
}

/// A launch that replays a recording never goes live.
#[tokio::test(flavor = "multi_thread")]
async fn a_replay_refuses_to_run_live() {
    let dir = temp("forks-replay");
    let source = "streetrace v1\n\nflow main:\n    $n = 1\n    return $n\n";
    let program = program(&dir, "r.sr", source);
    let server = MockServer::start().await;
    let mut dap = adapter(&dir, &server);
    dap.request("initialize", json!({})).await;
    dap.request("launch", json!({"program": "r.sr", "record": "r.jsonl"})).await;
    dap.request("configurationDone", json!({})).await;
    dap.event("exited").await;
    dap.disconnect().await;
    let mut dap = adapter(&dir, &server);
    start(&mut dap, json!({"program": "r.sr", "replay": "r.jsonl", "stopOnEntry": true}), &program, &[]).await;
    let refused = dap.request("streetraceRunLiveFrom", json!({"threadId": 1})).await;
    assert_eq!(
        (&refused["success"], &refused["message"]),
        (&json!(false), &json!("a replay never goes live: launch without `replay` to make calls for real"))
    );
    assert_eq!(forks(&mut dap).await, [fork(1, None, None, "the original run", true)]);
    dap.disconnect().await;
}

/// Another answer to a question the run answered before, after going back,
/// is a fork: the model is asked about the new answer (not a divergence).
/// Met again in a fork, the question stops with that fork's answer given.
#[tokio::test(flavor = "multi_thread")]
async fn another_answer_is_a_fork_and_each_fork_keeps_its_answer() {
    let dir = temp("forks-answer");
    let source = "streetrace v1\n\nmodel main = openai/gpt-4o-mini\n\nprompt about: \"\"\"Tell me about ${human_input}.\"\"\"\n\n\
                  flow main:\n    escalate to human \"which fruit?\"\n    $said = call llm about\n    return $said\n";
    let program = program(&dir, "ask.sr", source);
    let server = MockServer::start().await;
    server.push(MockReply::text("Apples are red."));
    server.push(MockReply::text("Pears are green."));
    let mut dap = adapter(&dir, &server);
    let asked_first = start(&mut dap, json!({"program": "ask.sr"}), &program, &[10]).await;
    assert_eq!(asked_first["body"]["reason"], "exception");
    dap.request("streetraceAnswer", json!({"text": "apple"})).await;
    go(&mut dap, "continue").await;
    assert_eq!(eval(&mut dap, "$said").await, json!("\"Apples are red.\""));

    // Back to before the question: it stops with the answer it was given.
    go(&mut dap, "reverseContinue").await;
    assert_eq!(go(&mut dap, "continue").await["body"]["reason"], "exception");
    assert!(dap.output("console").contains("\"which fruit?\" was answered \"apple\" here before"));
    dap.request("streetraceAnswer", json!({"text": "pear"})).await;
    go(&mut dap, "continue").await;
    assert_eq!(eval(&mut dap, "$said").await, json!("\"Pears are green.\""));
    assert_eq!(asked(&server, 1), "Tell me about pear.");
    assert_eq!(
        forks(&mut dap).await[1],
        fork(2, Some(1), Some("answer"), "answered \"pear\" at ask.sr:8 (main)", true)
    );

    // In fork 2, the question comes with "pear"; continuing gives it again.
    go(&mut dap, "reverseContinue").await;
    go(&mut dap, "continue").await;
    go(&mut dap, "continue").await;
    assert_eq!(eval(&mut dap, "$said").await, json!("\"Pears are green.\""));
    // The original run, with its answer.
    switch(&mut dap, 1).await;
    go(&mut dap, "continue").await;
    go(&mut dap, "continue").await;
    assert_eq!(eval(&mut dap, "$said").await, json!("\"Apples are red.\""));
    assert_eq!(server.requests().len(), 2, "each answer's question was asked once");
    assert_eq!(forks(&mut dap).await.len(), 2);
    dap.request("continue", json!({"threadId": 1})).await;
    assert_eq!(dap.event("exited").await["body"]["exitCode"], 0);
    dap.disconnect().await;
}

/// Every argument shape for the fork requests, at a stop: each is answered
/// (refused unless it names the stopped thread), nothing moves, and the
/// session goes on.
#[tokio::test(flavor = "multi_thread")]
async fn hostile_arguments_to_the_fork_requests_are_refused() {
    let dir = temp("forks-hostile");
    let source = "streetrace v1\n\nflow main:\n    $n = 1\n    return $n\n";
    let program = program(&dir, "h.sr", source);
    let server = MockServer::start().await;
    let mut dap = adapter(&dir, &server);
    start(&mut dap, json!({"program": "h.sr", "stopOnEntry": true}), &program, &[]).await;
    let values = [
        json!(null),
        json!(-1),
        json!(0),
        json!(1),
        json!(2),
        json!(i64::MAX),
        json!(i64::MIN),
        json!(u64::MAX),
        json!(1.5),
        json!("1"),
        json!([1]),
        json!({"id": 1}),
    ];
    let mut accepted = Vec::new();
    for (command, field) in
        [("streetraceRunLiveFrom", "threadId"), ("streetraceSwitchFork", "id"), ("streetraceForks", "id")]
    {
        for value in &values {
            let answer = dap.request(command, json!({ field: value })).await;
            if answer["success"] == true {
                accepted.push(format!("{command} {value}"));
            } else {
                assert!(answer["message"].as_str().is_some_and(|m| !m.is_empty()), "{answer}");
            }
        }
        let answer = dap.request(command, json!("not an object")).await;
        assert_eq!(answer["success"], command == "streetraceForks", "{answer}");
    }
    // Forks takes no arguments; run-live-from takes the stopped thread, named or not.
    let mut expected = vec!["streetraceRunLiveFrom null".to_string(), "streetraceRunLiveFrom 1".to_string()];
    expected.extend(values.iter().map(|v| format!("streetraceForks {v}")));
    assert_eq!(accepted, expected);
    assert_eq!(top(&mut dap).await, ("flow main".to_string(), 4), "still stopped where it was");
    dap.request("continue", json!({"threadId": 1})).await;
    assert_eq!(dap.event("exited").await["body"]["exitCode"], 0);
    dap.disconnect().await;
}

/// Variables set at a stop inside a statement (on its failure) are set
/// again there when the run passes it again, not before the statement:
/// set before, the statement would not fail, and the run would diverge.
#[tokio::test(flavor = "multi_thread")]
async fn an_edit_made_on_a_failure_is_made_again_on_it() {
    let dir = temp("forks-inside");
    let source = "streetrace v1\n\ntool fs = builtin streetrace.fs\n\nflow main:\n    $n = 1\n    $x = $n.b\n    \
                  on failure:\n        $x = \"failed with ${n}\"\n    fs.write_file(\"x.txt\", $x)\n    return $x\n";
    let program = program(&dir, "inside.sr", source);
    let server = MockServer::start().await;
    let mut dap = adapter(&dir, &server);
    dap.request("initialize", json!({})).await;
    dap.request("launch", json!({"program": "inside.sr"})).await;
    dap.request("setExceptionBreakpoints", json!({"filters": ["caught"]})).await;
    dap.request("setBreakpoints", json!({"source": {"path": program}, "breakpoints": [{"line": 11}]})).await;
    dap.request("configurationDone", json!({})).await;
    assert_eq!(dap.event("stopped").await["body"]["reason"], "exception");
    set(&mut dap, "n", "{b: 2}").await;
    go(&mut dap, "continue").await;
    assert_eq!(files(&dir), [file("x.txt", "failed with {\"b\":2}")]);

    go(&mut dap, "reverseContinue").await;
    assert_eq!(top(&mut dap).await, ("flow main".to_string(), 6));
    assert_eq!(go(&mut dap, "continue").await["body"]["reason"], "exception", "the failure again");
    assert_eq!(eval(&mut dap, "$n").await, json!("{\"b\":2}"), "with the variables set on it");
    assert_eq!(go(&mut dap, "continue").await["body"]["reason"], "breakpoint");
    assert_eq!(eval(&mut dap, "$x").await, json!("\"failed with {\\\"b\\\":2}\""));
    assert_eq!(dap.output("stderr"), "", "no divergence");
    dap.request("continue", json!({"threadId": 1})).await;
    assert_eq!(dap.event("exited").await["body"]["exitCode"], 0);
    dap.disconnect().await;
}

/// `$l` on thread 2's top frame.
async fn left(dap: &mut Adapter) -> Value {
    let trace = dap.request("stackTrace", json!({"threadId": 2})).await;
    let frame = trace["body"]["stackFrames"][0]["id"].clone();
    dap.request("evaluate", json!({"expression": "$l", "frameId": frame})).await["body"]["result"].clone()
}

/// A fork made in a `parallel` branch: going to another fork brings that
/// branch (started anew by its parent) to where it parts, with the other
/// fork's variables, and the run ends with that fork's result.
#[tokio::test(flavor = "multi_thread")]
async fn a_fork_made_in_a_parallel_branch_is_gone_to_in_that_branch() {
    let dir = temp("forks-branch");
    let source = "streetrace v1\n\nflow left:\n    $l = 1\n    $l = $l + 10\n    return $l\n\n\
                  flow right:\n    $r = 2\n    return $r * 10\n\n\
                  flow main:\n    parallel do\n        $x = run left\n        $y = run right\n    end\n    return [$x, $y]\n";
    let program = program(&dir, "branch.sr", source);
    let server = MockServer::start().await;
    let mut dap = adapter(&dir, &server);
    let stopped = start(&mut dap, json!({"program": "branch.sr"}), &program, &[6]).await;
    assert_eq!(stopped["body"]["threadId"], 2);
    let back = dap.request("stepBack", json!({"threadId": 2})).await;
    assert_eq!(back["success"], true, "{back}");
    dap.event("stopped").await;
    let edit = |value: &str| json!({"name": "l", "value": value});
    let trace = dap.request("stackTrace", json!({"threadId": 2})).await;
    let frame = trace["body"]["stackFrames"][0]["id"].clone();
    let scopes = dap.request("scopes", json!({"frameId": frame})).await;
    let mut arguments = edit("100");
    arguments["variablesReference"] = scopes["body"]["scopes"][0]["variablesReference"].clone();
    assert_eq!(dap.request("setVariable", arguments).await["success"], true);
    dap.request("setBreakpoints", json!({"source": {"path": program}, "breakpoints": []})).await;
    dap.request("continue", json!({"threadId": 2})).await;
    assert_eq!(dap.event("exited").await["body"]["exitCode"], 0);
    assert!(dap.output("console").contains("run completed: [110,20]\n"), "{}", dap.output("console"));
    assert_eq!(forks(&mut dap).await[1], fork(2, Some(1), Some("edit"), "$l edited at branch.sr:5 (branch:1)", true));

    let stopped = switch(&mut dap, 1).await;
    assert_eq!((&stopped["body"]["threadId"], &stopped["body"]["reason"]), (&json!(2), &json!("goto")));
    assert_eq!(left(&mut dap).await, json!("1"));
    dap.request("continue", json!({"threadId": 2})).await;
    assert_eq!(dap.event("exited").await["body"]["exitCode"], 0);
    assert!(dap.output("console").contains("run completed: [11,20]\n"), "{}", dap.output("console"));

    switch(&mut dap, 2).await;
    assert_eq!(left(&mut dap).await, json!("100"), "fork 2's edit, made again");
    dap.request("continue", json!({"threadId": 2})).await;
    assert_eq!(dap.event("exited").await["body"]["exitCode"], 0);
    assert_eq!(dap.output("console").matches("run completed: [110,20]\n").count(), 2);
    dap.disconnect().await;
}

/// Each travel writes the journal it serves anew: the session keeps only
/// the files a fork's journal is in (and the archive of file changes), and
/// removes them all when it ends.
#[tokio::test(flavor = "multi_thread")]
async fn going_back_often_keeps_only_the_recordings_forks_use() {
    let dir = temp("forks-files");
    let scratch = temp("forks-files-tmp");
    let source = "streetrace v1\n\ntool fs = builtin streetrace.fs\n\nflow main:\n    $v = 1\n    \
                  fs.write_file(\"v.txt\", \"${v}\")\n    return $v\n";
    let program = program(&dir, "files.sr", source);
    let mut dap = Adapter::start_in(&dir, &[("TMPDIR", scratch.display().to_string())]);
    start(&mut dap, json!({"program": "files.sr"}), &program, &[8]).await;
    let kept = |scratch: &std::path::Path| std::fs::read_dir(scratch).unwrap().count();
    assert_eq!(kept(&scratch), 1, "the run's recording");
    for _ in 0..10 {
        go(&mut dap, "reverseContinue").await;
        go(&mut dap, "continue").await;
    }
    assert_eq!(kept(&scratch), 3, "the archive, the journal of fork 1, and the run's");
    go(&mut dap, "stepBack").await;
    go(&mut dap, "stepBack").await;
    set(&mut dap, "v", "2").await;
    go(&mut dap, "continue").await;
    assert_eq!(files(&dir), [file("v.txt", "2")]);
    go(&mut dap, "reverseContinue").await;
    assert_eq!(kept(&scratch), 4, "fork 2's journal as well");
    dap.disconnect().await;
    assert_eq!(kept(&scratch), 0, "all removed with the session");
}
