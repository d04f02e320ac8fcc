//! Going back in time judged by its effects: the files on disk and the
//! requests the mock model server received. Stepping back over a tool that
//! wrote puts the file back; going forward again serves what was recorded
//! (no model call, no command run again, the same `uuid()` and `now()`); an
//! edit forks the run, which then writes and reads its own files while the
//! old branch's are gone; an injected reply stays in its fork; a replay whose
//! recording differs from the run stops with the divergence in the console.
#![allow(clippy::unwrap_used)]

mod common;
mod transcript;

use serde_json::json;
use sr_llm::mock::{MockReply, MockServer};
use transcript::{READS_ITS_WRITES, adapter, asked, eval, file, files, go, program, set, start, temp, top};

/// Stepping back over a flow's `write_file` puts the file back as it was;
/// going forward writes it again, from the recording.
#[tokio::test(flavor = "multi_thread")]
async fn stepping_back_over_write_file_restores_the_file() {
    let dir = temp("effects-write");
    std::fs::write(dir.join("notes.txt"), "first").unwrap();
    let source = "streetrace v1\n\ntool fs = builtin streetrace.fs\n\nflow main:\n    \
                  fs.write_file(\"notes.txt\", \"second\")\n    fs.write_file(\"made/new.txt\", \"new\")\n    \
                  return 1\n";
    let program = program(&dir, "write.sr", source);
    let server = MockServer::start().await;
    let mut dap = adapter(&dir, &server);
    start(&mut dap, json!({"program": "write.sr"}), &program, &[8]).await;
    let written = vec![file("made/new.txt", "new"), file("notes.txt", "second")];
    assert_eq!(files(&dir), written);

    // Back over the second write: the file and the directory it made are gone.
    go(&mut dap, "stepBack").await;
    assert_eq!(top(&mut dap).await, ("tool write_file".to_string(), 7));
    assert_eq!(files(&dir), [file("notes.txt", "second")]);
    assert!(!dir.join("made").exists(), "the directory the write made is gone");
    // Back to the first statement: the first file as it was before the run.
    go(&mut dap, "reverseContinue").await;
    assert_eq!(top(&mut dap).await, ("flow main".to_string(), 6));
    assert_eq!(files(&dir), [file("notes.txt", "first")]);
    go(&mut dap, "continue").await;
    assert_eq!(top(&mut dap).await, ("flow main".to_string(), 8));
    assert_eq!(files(&dir), written, "written again, from the recording");
    dap.request("continue", json!({"threadId": 1})).await;
    assert_eq!(dap.event("exited").await["body"]["exitCode"], 0);
    dap.disconnect().await;
}

/// Stepping back over a sandboxed `cli` command that appends to a file puts
/// the file back; going forward unedited runs no command and asks the model
/// nothing: the line is appended once, and the model was asked once.
#[tokio::test(flavor = "multi_thread")]
async fn stepping_back_over_a_command_restores_its_files_and_going_on_runs_nothing_again() {
    if !sr_testing::required(sr_sandbox::Bubblewrap::available(), "bubblewrap (bwrap, prlimit) for the cli tool") {
        return;
    }
    let dir = temp("effects-cli");
    std::fs::write(dir.join("log.txt"), "start\n").unwrap();
    let source = "streetrace v1\n\ntool sh = builtin streetrace.cli\ntool fs = builtin streetrace.fs\n\n\
                  model main = openai/gpt-4o-mini\n\nprompt sum: \"\"\"Summarize: ${text}\"\"\"\n\nflow main:\n    \
                  $r = sh.execute_cli_command([\"sh\", \"-c\", \"echo ran >> log.txt; mkdir out; echo made > out/x\"])\n    \
                  $text = fs.read_file(\"log.txt\")\n    $s = call llm sum\n    return $s\n";
    let program = program(&dir, "cli.sr", source);
    let server = MockServer::start().await;
    server.push(MockReply::text("It ran."));
    let mut dap = adapter(&dir, &server);
    start(&mut dap, json!({"program": "cli.sr"}), &program, &[14]).await;
    let after = vec![file("log.txt", "start\nran\n"), file("out/x", "made\n")];
    assert_eq!(files(&dir), after, "{}", eval(&mut dap, "$r.stderr").await);
    assert_eq!(server.requests().len(), 1);

    // Back to the start: the command's changes are undone.
    go(&mut dap, "reverseContinue").await;
    assert_eq!(top(&mut dap).await, ("flow main".to_string(), 11));
    assert_eq!(files(&dir), [file("log.txt", "start\n")]);
    assert!(!dir.join("out").exists());
    // Forward, unedited: the recorded changes come back, nothing runs again.
    for _ in 0..2 {
        go(&mut dap, "continue").await;
        assert_eq!(top(&mut dap).await, ("flow main".to_string(), 14));
        assert_eq!(files(&dir), after, "appended once");
        assert_eq!(eval(&mut dap, "$text").await, json!("\"start\\nran\\n\""));
        go(&mut dap, "stepBack").await;
    }
    assert_eq!(top(&mut dap).await, ("model openai/gpt-4o-mini (replied)".to_string(), 13));
    assert_eq!(files(&dir), after);
    go(&mut dap, "continue").await;
    dap.request("continue", json!({"threadId": 1})).await;
    assert_eq!(dap.event("exited").await["body"]["exitCode"], 0);
    assert_eq!(files(&dir), after);
    assert_eq!(server.requests().len(), 1);
    dap.disconnect().await;
}

/// A run that names a file after `uuid()` and writes `now()` in it: going
/// back and forth several times serves the same values, so no other file
/// appears, and the model is asked once.
#[tokio::test(flavor = "multi_thread")]
async fn uuid_and_now_are_the_recorded_ones_however_often_the_run_goes_back() {
    let dir = temp("effects-values");
    let source = "streetrace v1\n\ntool fs = builtin streetrace.fs\n\nmodel main = openai/gpt-4o-mini\n\n\
                  prompt stamp: \"\"\"Saved at ${t}.\"\"\"\n\nflow main:\n    $id = uuid()\n    $t = now()\n    \
                  fs.write_file(\"out/${id}.txt\", $t)\n    $said = call llm stamp\n    return $said\n";
    let program = program(&dir, "stamp.sr", source);
    let server = MockServer::start().await;
    server.push(MockReply::text("Noted."));
    let mut dap = adapter(&dir, &server);
    start(&mut dap, json!({"program": "stamp.sr"}), &program, &[14]).await;
    let written = files(&dir);
    assert_eq!(written.len(), 1, "{written:?}");
    let (id, t) = (eval(&mut dap, "$id").await, eval(&mut dap, "$t").await);
    assert_eq!(written[0].0, format!("out/{}.txt", id.as_str().unwrap().trim_matches('"')));
    assert_eq!(json!(written[0].1), json!(t.as_str().unwrap().trim_matches('"')));

    for back in ["stepBack", "reverseContinue", "stepBack", "reverseContinue"] {
        go(&mut dap, back).await;
        if back == "reverseContinue" {
            assert_eq!(files(&dir), [], "before the write, the file is gone");
        }
        go(&mut dap, "continue").await;
        assert_eq!(top(&mut dap).await, ("flow main".to_string(), 14));
        assert_eq!(files(&dir), written, "the same file, the same time");
        assert_eq!((eval(&mut dap, "$id").await, eval(&mut dap, "$t").await), (id.clone(), t.clone()));
    }
    assert_eq!(server.requests().len(), 1, "the model was asked once");
    dap.request("continue", json!({"threadId": 1})).await;
    assert_eq!(dap.event("exited").await["body"]["exitCode"], 0);
    dap.disconnect().await;
}

/// Going back to before a write and changing the variable it writes forks
/// the run: the fork writes the new value, reads it back and asks the model
/// about it, while the old branch's file is gone from disk.
#[tokio::test(flavor = "multi_thread")]
async fn a_fork_reads_its_own_writes_and_the_old_branch_files_are_gone() {
    let dir = temp("effects-fork");
    let program = program(&dir, "fork.sr", READS_ITS_WRITES);
    let server = MockServer::start().await;
    server.push(MockReply::text("A fruit."));
    server.push(MockReply::text("Another fruit."));
    let mut dap = adapter(&dir, &server);
    start(&mut dap, json!({"program": "fork.sr"}), &program, &[11, 14]).await;
    go(&mut dap, "continue").await;
    assert_eq!(files(&dir), [file("apple.txt", "apple")]);
    assert_eq!(asked(&server, 0), "What is apple?");

    go(&mut dap, "reverseContinue").await;
    assert_eq!(top(&mut dap).await, ("flow main".to_string(), 11));
    assert_eq!(files(&dir), [], "before the write");
    set(&mut dap, "v", "\"pear\"").await;
    // Into the fork: its write, then its read.
    go(&mut dap, "stepIn").await;
    assert_eq!(top(&mut dap).await, ("tool write_file".to_string(), 11));
    go(&mut dap, "next").await;
    assert_eq!(files(&dir), [file("pear.txt", "pear")], "the fork's file, and the old one gone");
    go(&mut dap, "continue").await;
    assert_eq!(top(&mut dap).await, ("flow main".to_string(), 14));
    assert_eq!(eval(&mut dap, "$seen").await, json!("\"pear\""));
    assert_eq!(eval(&mut dap, "$answer").await, json!("\"Another fruit.\""));
    assert_eq!(server.requests().len(), 2);
    assert_eq!(asked(&server, 1), "What is pear?");
    assert_eq!(files(&dir), [file("pear.txt", "pear")]);

    // Back inside the fork to before the edit, and forward: the fork's edit
    // is made again where it was made, and nothing is asked.
    go(&mut dap, "reverseContinue").await;
    go(&mut dap, "stepBack").await;
    assert_eq!(top(&mut dap).await, ("flow main".to_string(), 10));
    assert_eq!(files(&dir), []);
    go(&mut dap, "continue").await;
    assert_eq!(top(&mut dap).await, ("flow main".to_string(), 11));
    assert_eq!(eval(&mut dap, "$v").await, json!("\"pear\""), "the fork's edit, made again");
    go(&mut dap, "continue").await;
    assert_eq!(eval(&mut dap, "$seen").await, json!("\"pear\""));
    assert_eq!(files(&dir), [file("pear.txt", "pear")]);
    assert_eq!(server.requests().len(), 2);
    dap.request("continue", json!({"threadId": 1})).await;
    assert_eq!(dap.event("exited").await["body"]["exitCode"], 0);
    dap.disconnect().await;
}

/// A reply injected after going back (an edit of the model's reply) is the
/// fork's: stepping back and forward inside it gives it again, without
/// asking the model.
#[tokio::test(flavor = "multi_thread")]
async fn an_injected_reply_survives_going_back_and_forth_in_its_fork() {
    let dir = temp("effects-reply");
    let source = "streetrace v1\n\nmodel main = openai/gpt-4o-mini\n\nprompt hi: \"\"\"Say hi.\"\"\"\n\n\
                  flow main:\n    $greeting = call llm hi\n    $loud = \"${greeting}!\"\n    return $loud\n";
    let program = program(&dir, "reply.sr", source);
    let server = MockServer::start().await;
    server.push(MockReply::text("Hi"));
    let mut dap = adapter(&dir, &server);
    start(&mut dap, json!({"program": "reply.sr"}), &program, &[10]).await;
    assert_eq!(eval(&mut dap, "$loud").await, json!("\"Hi!\""));
    // Back to the reply, before the flow sees it, and replace its text.
    go(&mut dap, "stepBack").await;
    go(&mut dap, "stepBack").await;
    assert_eq!(top(&mut dap).await, ("model openai/gpt-4o-mini (replied)".to_string(), 8));
    let trace = dap.request("stackTrace", json!({"threadId": 1})).await;
    let frame = trace["body"]["stackFrames"][0]["id"].clone();
    let scopes = dap.request("scopes", json!({"frameId": frame})).await;
    let call = scopes["body"]["scopes"][0]["variablesReference"].clone();
    let set =
        dap.request("setVariable", json!({"variablesReference": call, "name": "text", "value": "\"Hello\""})).await;
    assert_eq!(set["success"], true, "{set}");
    go(&mut dap, "continue").await;
    assert_eq!(eval(&mut dap, "$loud").await, json!("\"Hello!\""));
    let fork = "fork 2: the model's reply replaced at reply.sr:8 (main), leaving fork 1";
    assert!(dap.output("console").contains(fork), "{}", dap.output("console"));

    for back in ["stepBack", "reverseContinue", "stepBack"] {
        go(&mut dap, back).await;
        go(&mut dap, "continue").await;
        assert_eq!(top(&mut dap).await, ("flow main".to_string(), 10));
        assert_eq!(eval(&mut dap, "$loud").await, json!("\"Hello!\""), "after {back}");
    }
    assert_eq!(server.requests().len(), 1, "the model was asked once");
    dap.request("continue", json!({"threadId": 1})).await;
    assert_eq!(dap.event("exited").await["body"]["exitCode"], 0);
    assert!(dap.output("console").contains("run completed: Hello!\n"), "{}", dap.output("console"));
    dap.disconnect().await;
}

/// A recording whose tool arguments were changed by hand, given as `replay`:
/// the run stops where it differs, and the debug console says which
/// statement and what value differ.
#[tokio::test(flavor = "multi_thread")]
async fn a_divergence_shows_in_the_console_with_the_statement_and_the_value() {
    let dir = temp("effects-divergence");
    let source = "streetrace v1\n\ntool fs = builtin streetrace.fs\n\nflow main:\n    $v = \"apple\"\n    \
                  fs.write_file(\"fruit.txt\", $v)\n    return $v\n";
    let program = program(&dir, "div.sr", source);
    let server = MockServer::start().await;
    // Record a run, then change what its tool call wrote.
    let mut dap = adapter(&dir, &server);
    dap.request("initialize", json!({})).await;
    dap.request("launch", json!({"program": "div.sr", "record": "div.jsonl"})).await;
    dap.request("configurationDone", json!({})).await;
    assert_eq!(dap.event("exited").await["body"]["exitCode"], 0);
    dap.disconnect().await;
    let recording = std::fs::read_to_string(dir.join("div.jsonl")).unwrap();
    assert_eq!(recording.matches("\"content\":\"apple\"").count(), 2, "tool_start and tool: {recording}");
    std::fs::write(dir.join("div.jsonl"), recording.replace("\"content\":\"apple\"", "\"content\":\"plum\"")).unwrap();
    std::fs::remove_file(dir.join("fruit.txt")).unwrap();

    let mut dap = adapter(&dir, &server);
    let stopped = start(&mut dap, json!({"program": "div.sr", "replay": "div.jsonl"}), &program, &[]).await;
    assert_eq!(stopped["body"]["reason"], "exception");
    assert_eq!(top(&mut dap).await.1, 7);
    assert_eq!(
        dap.output("stderr"),
        "failure at div.sr:7:5 in `fs.write_file(\"fruit.txt\", $v)`: the run diverged from its journal: \
         the arguments of tool 'write_file' differ from the journal's at:\n  /content: recorded \"plum\", requested \"apple\"\n"
    );
    dap.request("continue", json!({"threadId": 1})).await;
    assert_eq!(dap.event("exited").await["body"]["exitCode"], 1);
    assert!(!dir.join("fruit.txt").exists(), "the diverging call did not run");
    dap.disconnect().await;
}
