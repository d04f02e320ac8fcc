//! Line breakpoints, conditions, hit counts, logpoints, function and
//! exception breakpoints.

use serde_json::json;
use sr_runtime::scripted::{Reply, ScriptedProvider, instruction_contains};

use super::{Harness, MAIN, line};
use crate::client::Client;
use crate::debugger::Debugger;
use crate::protocol::{
    BreakpointLocationsArguments, DataBreakpoint, DataBreakpointInfoArguments, Outgoing, SetBreakpointsArguments,
    Source, SourceBreakpoint, StackTraceArguments,
};

const LOOP: &str = "\
streetrace v1

flow main:
    $total = 0
    for $i in [1, 2, 3, 4] do
        $total = $total + $i
    end

    log \"total ${total}\"
    return $total
";

fn no_model() -> ScriptedProvider {
    ScriptedProvider::new()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_breakpoint_stops_before_its_statement_and_lines_resolve_to_statements() {
    let mut h = Harness::new(LOOP, no_model());
    let set = h.lines(vec![line(8), line(2), line(5)]);
    assert_eq!((set[0].verified, set[0].line), (true, Some(9)), "a blank line in a body: the next statement");
    assert_eq!(set[1].message.as_deref(), Some("no flow or handler statement on this line"));
    assert_eq!((set[2].verified, set[2].line, set[2].column), (true, Some(5), Some(5)));
    h.start(false);

    assert_eq!(h.stopped().await, ("breakpoint".to_string(), MAIN));
    assert_eq!(h.frames(MAIN), [("flow main".to_string(), 5)]);
    assert_eq!(h.var(MAIN, "total").unwrap().value, "0");
    assert!(h.var(MAIN, "i").is_none(), "the `for` has not started");
    h.cont();
    assert_eq!(h.stopped().await.0, "breakpoint");
    assert_eq!(h.frames(MAIN), [("flow main".to_string(), 9)]);
    assert_eq!(h.var(MAIN, "total").unwrap().value, "10");
    assert!(!h.output("stdout").contains("total 10"), "the `log` has not run yet");
    h.cont();
    assert_eq!(h.terminated().await, 0);
    assert!(h.output("stdout").contains("total 10\n"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_condition_stops_only_when_it_holds() {
    let mut h = Harness::new(LOOP, no_model());
    h.lines(vec![SourceBreakpoint { line: 6, condition: Some("$i == 3".into()), ..Default::default() }]);
    h.start(false);
    assert_eq!(h.stopped().await.0, "breakpoint");
    assert_eq!(h.var(MAIN, "i").unwrap().value, "3");
    assert_eq!(h.var(MAIN, "total").unwrap().value, "3");
    h.cont();
    assert_eq!(h.terminated().await, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_condition_stops_and_says_why() {
    let mut h = Harness::new(LOOP, no_model());
    h.lines(vec![SourceBreakpoint { line: 4, condition: Some("$nope > 1".into()), ..Default::default() }]);
    h.start(false);
    assert_eq!(h.stopped().await.0, "breakpoint");
    assert!(h.output("console").contains("breakpoint condition failed: variable '$nope' is not defined"));
    h.cont();
    h.terminated().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hit_count_stops_on_matching_hits() {
    let mut h = Harness::new(LOOP, no_model());
    h.lines(vec![SourceBreakpoint { line: 6, hit_condition: Some("% 2".into()), ..Default::default() }]);
    h.start(false);
    let mut seen = Vec::new();
    for _ in 0..2 {
        assert_eq!(h.stopped().await.0, "breakpoint");
        seen.push(h.var(MAIN, "i").unwrap().value);
        h.cont();
    }
    assert_eq!(seen, ["2", "4"]);
    assert_eq!(h.terminated().await, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_logpoint_logs_without_stopping() {
    let mut h = Harness::new(LOOP, no_model());
    let set = h.lines(vec![SourceBreakpoint {
        line: 6,
        log_message: Some("i={$i} total={$total}".into()),
        hit_condition: Some("<= 3".into()),
        ..Default::default()
    }]);
    assert!(set[0].verified);
    h.start(false);
    assert_eq!(h.terminated().await, 0);
    let console = h.output("console");
    let logged: Vec<&str> = console.lines().filter(|l| l.starts_with("i=")).collect();
    assert_eq!(logged, ["i=1 total=0", "i=2 total=1", "i=3 total=3"], "the hit count limits the logpoint too");
}

const CALLS: &str = "\
streetrace v1

model main = openai/test

prompt helper_instruction: \"\"\"Help.\"\"\"

agent helper:
    instruction helper_instruction

flow twice:
    $n = $n * 2
    return $n

flow main:
    $n = 1
    $n = run twice
    $answer = run agent helper with \"hi\"
    $n = run twice
    return $n
";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn function_breakpoints_stop_on_entering_flows_and_agents() {
    let provider = ScriptedProvider::new().always(instruction_contains("Help."), Reply::Text("sure".into()));
    let mut h = Harness::new(CALLS, provider);
    let set = h.functions(&["twice", "helper", "nothing"]);
    assert_eq!((set[0].verified, set[0].line), (true, Some(10)));
    assert_eq!((set[1].verified, set[1].line), (true, Some(7)));
    assert!(!set[2].verified);
    h.start(false);

    assert_eq!(h.stopped().await.0, "function breakpoint");
    assert_eq!(h.frames(MAIN), [("flow twice".to_string(), 11), ("flow main".to_string(), 16)]);
    // Stack traces page (`startFrame`, `levels`).
    let args = StackTraceArguments { thread_id: MAIN, start_frame: Some(1), levels: Some(1) };
    let (frames, total) = h.debugger.stack_trace(args).unwrap();
    assert_eq!((frames.len(), frames[0].name.as_str(), total), (1, "flow main", 2));
    h.cont();
    assert_eq!(h.stopped().await.0, "function breakpoint");
    assert_eq!(
        h.frames(MAIN),
        [("model openai/test".to_string(), 7), ("agent helper".to_string(), 7), ("flow main".to_string(), 17)]
    );
    h.cont();
    assert_eq!(h.stopped().await.0, "function breakpoint");
    assert_eq!(h.frames(MAIN)[1], ("flow main".to_string(), 18));
    assert_eq!(h.var(MAIN, "n").unwrap().value, "2");
    h.cont();
    assert_eq!(h.terminated().await, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn breakpoints_in_handlers() {
    let source = "streetrace v1\n\non start do\n    $greeting = \"hi\"\nend\n\nflow main:\n    return $greeting\n";
    let mut h = Harness::new(source, no_model());
    assert!(h.lines(vec![line(4)])[0].verified);
    h.functions(&["main"]);
    h.start(false);
    assert_eq!(h.stopped().await.0, "breakpoint");
    let frames = h.frames(MAIN);
    assert_eq!(frames.len(), 1);
    assert!(frames[0].0.starts_with("handler"), "{frames:?}");
    assert_eq!(frames[0].1, 4);
    // The flow follows the handler at the same depth: it is entered all the same.
    h.cont();
    assert_eq!(h.stopped().await.0, "function breakpoint");
    assert_eq!(h.frames(MAIN), [("flow main".to_string(), 8)]);
    h.cont();
    assert_eq!(h.terminated().await, 0);
}

#[tokio::test]
async fn breakpoints_set_before_the_program_loads_are_resolved_when_it_does() {
    let dir = std::env::temp_dir().join(format!("sr-dap-pending-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("p.sr");
    std::fs::write(&path, LOOP).unwrap();
    let (client, mut queue) = Client::channel();
    let debugger = Debugger::new(client);
    let source = Source { path: Some(path.display().to_string()), ..Source::default() };
    let set = debugger
        .set_breakpoints(SetBreakpointsArguments { source, breakpoints: Some(vec![line(7)]), ..Default::default() })
        .unwrap();
    assert_eq!((set[0].verified, set[0].reason.as_deref()), (false, Some("pending")));
    let program = sr_runtime::compile::compile_path(&mut sr_hir::RootDatabase::default(), &path).unwrap();
    debugger.load(program);
    let Some(Outgoing::Event(event)) = queue.recv().await else { panic!("no event") };
    assert_eq!(event.name(), "breakpoint");
    let body = event.body().unwrap();
    assert_eq!(body["reason"], "changed");
    assert_eq!(body["breakpoint"]["id"], json!(set[0].id));
    assert_eq!((body["breakpoint"]["verified"].clone(), body["breakpoint"]["line"].clone()), (json!(true), json!(9)));
}

#[tokio::test]
async fn breakpoint_locations_are_the_statements_between_two_lines() {
    let h = Harness::new(LOOP, no_model());
    let source = Source { path: Some(h.path.display().to_string()), ..Source::default() };
    let args = BreakpointLocationsArguments { source, line: 1, end_line: Some(9) };
    let lines: Vec<(i64, i64)> =
        h.debugger.breakpoint_locations(args).into_iter().map(|l| (l.line, l.column)).collect();
    assert_eq!(lines, [(4, 5), (5, 5), (6, 9), (9, 5)]);
}

/// A column breakpoint on an inline statement stands on that statement, not
/// on the `if` that starts the line.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_inline_column_breakpoint_stops_at_the_statement_at_that_column() {
    let source = "\
streetrace v1

flow main:
    $n = []
    for $i in [1, 2, 3] do
        if $i > 1: push $i to $n
    end
    return $n
";
    let mut h = Harness::new(source, no_model());
    let set = h.lines(vec![SourceBreakpoint { line: 6, column: Some(20), ..Default::default() }]);
    assert_eq!((set[0].verified, set[0].line, set[0].column), (true, Some(6), Some(20)));
    h.start(false);
    assert_eq!(h.stopped().await.0, "breakpoint");
    assert_eq!(h.var(MAIN, "i").unwrap().value, "2", "the `if` ran for 1 without reaching the statement");
    h.cont();
    assert_eq!(h.stopped().await.0, "breakpoint");
    assert_eq!(h.var(MAIN, "i").unwrap().value, "3");
    h.cont();
    assert_eq!(h.terminated().await, 0);

    let h = Harness::new(source, no_model());
    let set = h.lines(vec![SourceBreakpoint { line: 6, column: Some(9), ..Default::default() }]);
    assert_eq!((set[0].line, set[0].column), (Some(6), Some(9)), "at the `if`: the `if`");
}

/// One file under two spellings (a symlink, `..`) is one file: each
/// spelling's breakpoints hit, also when the program is loaded again (a
/// restart), and setting one spelling's leaves the other's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_spelling_of_a_file_has_its_breakpoints() {
    let mut h = Harness::new(LOOP, no_model());
    let dir = h.path.parent().unwrap().to_path_buf();
    let link = dir.join("link.sr");
    std::os::unix::fs::symlink(&h.path, &link).unwrap();
    let dotted = dir.join("..").join(dir.file_name().unwrap()).join("test.sr");
    let debugger = h.debugger.clone();
    let set = |path: &std::path::Path, lines: Vec<SourceBreakpoint>| {
        let source = Source { path: Some(path.display().to_string()), ..Source::default() };
        let args = SetBreakpointsArguments { source, breakpoints: Some(lines), ..Default::default() };
        debugger.set_breakpoints(args).unwrap()
    };
    assert!(set(&link, vec![line(4)])[0].verified);
    let second = set(&dotted, vec![line(6), line(9)]);
    assert_eq!((second[0].verified, second[0].line), (true, Some(6)));
    assert_eq!(second[0].source.as_ref().unwrap().path, h.path.display().to_string(), "the program's own spelling");
    h.debugger.load(h.program.clone());
    h.start(false);
    assert_eq!(h.stopped().await.0, "breakpoint");
    assert_eq!(h.frames(MAIN), [("flow main".to_string(), 4)], "the link's");
    h.cont();
    assert_eq!(h.stopped().await.0, "breakpoint");
    assert_eq!(h.frames(MAIN), [("flow main".to_string(), 6)], "the dotted spelling's");
    set(&dotted, vec![line(9)]);
    h.cont();
    assert_eq!(h.stopped().await.0, "breakpoint");
    assert_eq!(h.frames(MAIN), [("flow main".to_string(), 9)], "line 6 went, line 9 stayed");
    set(&link, vec![line(6)]);
    assert_eq!(set(&dotted, vec![]).len(), 0);
    h.cont();
    assert_eq!(h.terminated().await, 0, "line 6 is past");
}

/// A data breakpoint on `$total` stops the thread after each write that
/// meets its condition, at its next statement.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_data_breakpoint_stops_after_the_variable_is_written() {
    let mut h = Harness::new(LOOP, no_model());
    h.lines(vec![line(4)]);
    h.start(false);
    h.stopped().await;
    let frame = h.frame_id(MAIN, 0);
    let info = |reference| {
        let args =
            DataBreakpointInfoArguments { variables_reference: Some(reference), name: "total".into(), frame_id: None };
        h.debugger.data_breakpoint_info(args)
    };
    let watchable = info(h.scope(frame, "Variables"));
    assert_eq!((watchable.data_id.as_deref(), watchable.description.as_str()), (Some("total"), "$total is assigned"));
    assert_eq!(info(h.scope(frame, "Run")).data_id, None, "not a flow variable");
    let request =
        DataBreakpoint { data_id: "total".into(), condition: Some("$total > 2".into()), ..Default::default() };
    let set = h.debugger.lock().breakpoints.set_data(vec![request]);
    assert!(set[0].verified);
    h.lines(vec![]);
    h.cont();
    let mut seen = Vec::new();
    for _ in 0..3 {
        assert_eq!(h.stopped().await.0, "data breakpoint");
        let (line, total) = (h.frames(MAIN)[0].1, h.var(MAIN, "total").unwrap().value);
        seen.push((line, total));
        h.cont();
    }
    assert_eq!(seen, [(6, "3".to_string()), (6, "6".to_string()), (9, "10".to_string())]);
    assert_eq!(h.terminated().await, 0);
}

/// A breakpoint in a prompt's body stops before each model call that
/// renders it, with the rendered text.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prompt_breakpoint_stops_before_each_call_that_renders_it() {
    let source = "\
streetrace v1

model main = openai/test

prompt greet: \"\"\"Say hi
to ${name}.\"\"\"

flow main:
    $name = \"Ada\"
    $a = call llm greet
    $name = \"Grace\"
    $b = call llm greet
    return [$a, $b]
";
    let provider = ScriptedProvider::new().always(sr_runtime::scripted::user_says("Say hi"), Reply::Text("hi".into()));
    let mut h = Harness::new(source, provider);
    let set = h.lines(vec![line(6), line(3)]);
    assert_eq!((set[0].verified, set[0].line), (true, Some(6)));
    assert_eq!(set[1].message.as_deref(), Some("no flow or handler statement on this line"));
    h.start(false);
    for name in ["Ada", "Grace"] {
        let stopped = h.stopped_body().await;
        assert_eq!(stopped["reason"], "breakpoint");
        assert_eq!(stopped["description"], format!("prompt greet:\nSay hi\nto {name}."));
        assert_eq!(stopped["hitBreakpointIds"], json!([set[0].id]));
        assert_eq!(h.frames(MAIN)[0].0, "model openai/test");
        h.cont();
    }
    assert_eq!(h.terminated().await, 0);
}

/// An agent's instruction is rendered as the system text of each of its calls.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_breakpoint_in_an_instruction_stops_at_each_of_the_agents_calls() {
    let source = "\
streetrace v1

model main = openai/test

prompt helper: \"\"\"You help.\"\"\"

agent aide:
    instruction helper

flow main:
    $a = run agent aide with \"go\"
    return $a
";
    let provider = ScriptedProvider::new().always(instruction_contains("You help"), Reply::Text("ok".into()));
    let mut h = Harness::new(source, provider);
    assert!(h.lines(vec![line(5)])[0].verified);
    h.start(false);
    let stopped = h.stopped_body().await;
    assert_eq!(stopped["description"], "prompt helper:\nYou help.");
    assert_eq!(h.frames(MAIN)[0].0, "model openai/test");
    h.cont();
    assert_eq!(h.terminated().await, 0);
}
