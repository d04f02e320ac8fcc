//! `streetrace.state`: agents write the calling flow's variables (only those,
//! listed in the tool's declaration) and end its loop with `exit_loop`.

mod common;

use std::sync::Arc;

use common::{Options, run_source};
use serde_json::{Value, json};
use sr_runtime::event::{Payload, RunStatus};
use sr_runtime::scripted::{Reply, ScriptedProvider, after_tool_results, user_says};

#[tokio::test]
async fn an_agent_sets_and_reads_flow_variables_and_ends_the_loop() {
    let source = r#"
model main = openai/gpt-4o
tool state = builtin streetrace.state
prompt plan_it: """Plan the work."""
agent planner:
    tools state
    instruction plan_it

flow main:
    $plan = "none"
    $done = false
    $rounds = 0
    loop max 5 do
        $rounds = $rounds + 1
        run agent planner with "round ${rounds}"
    end
    return {plan: $plan, rounds: $rounds, done: $done}
"#;
    let call = |name: &str, args: Value| (name.to_string(), args);
    let provider = Arc::new(ScriptedProvider::new().always(after_tool_results(), Reply::Text("ok".into())).on(
        user_says("round"),
        vec![
            Reply::Calls(vec![
                call("set_state", json!({"key": "plan", "value": ["step A", "step B"]})),
                call("set_state", json!({"key": "bogus", "value": 1})),
            ]),
            Reply::Calls(vec![
                call("get_state", json!({"key": "plan"})),
                call("set_state", json!({"key": "done", "value": true})),
                call("exit_loop", json!({})),
            ]),
        ],
    ));
    let run = run_source("state-tool", source, "go", provider.clone(), Options::default()).await;
    assert_eq!(run.outcome.status, RunStatus::Completed, "{:?}", run.outcome.error);
    // The loop ended after the second round's agent turn.
    assert_eq!(run.outcome.result, Some(json!({"plan": ["step A", "step B"], "rounds": 2, "done": true})));

    let results: Vec<(String, Value, bool)> = run
        .payloads()
        .into_iter()
        .filter_map(|p| match p {
            Payload::ToolResult { tool, result, is_error, .. } => Some((tool.clone(), result.clone(), *is_error)),
            _ => None,
        })
        .collect();
    assert_eq!(
        results,
        [
            ("set_state".into(), json!("set plan"), false),
            (
                "set_state".into(),
                json!("'bogus' is not a variable of workflow 'main'; the variables are: plan, done, rounds"),
                true
            ),
            ("get_state".into(), json!(["step A", "step B"]), false),
            ("set_state".into(), json!("set done"), false),
            ("exit_loop".into(), json!("the loop ends after this step"), false),
        ]
    );
    let changes: Vec<(String, Value)> = run
        .payloads()
        .into_iter()
        .filter_map(|p| match p {
            Payload::StateChange { variable, value } if variable != "rounds" => Some((variable.clone(), value.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(
        changes,
        [
            ("plan".into(), json!("none")),
            ("done".into(), json!(false)),
            ("plan".into(), json!(["step A", "step B"])),
            ("done".into(), json!(true)),
        ]
    );
    // The model is told which variables it may set.
    let first = &provider.requests()[0];
    let set_state = first.tools.iter().find(|t| t.name == "set_state").unwrap();
    assert_eq!(set_state.parameters["properties"]["key"]["enum"], json!(["plan", "done", "rounds"]));
    assert_eq!(set_state.parameters["required"], json!(["key", "value"]));
}

#[tokio::test]
async fn exit_loop_from_a_flow_ends_the_innermost_loop_and_a_callers() {
    let source = r#"
tool state = builtin streetrace.state

flow main:
    $seen = []
    for $i in range(5) do
        push $i to $seen
        if $i == 1:
            state.exit_loop()
        push "after" to $seen
    end
    $calls = 0
    loop max 4 do
        $calls = $calls + 1
        run stop
    end
    $mine = state.get_state("calls")
    return {seen: $seen, calls: $calls, mine: $mine}

flow stop:
    state.exit_loop()
"#;
    let run = run_source("state-exit", source, "go", Arc::new(ScriptedProvider::new()), Options::default()).await;
    assert_eq!(run.outcome.status, RunStatus::Completed, "{:?}", run.outcome.error);
    assert_eq!(run.outcome.result, Some(json!({"seen": [0, "after", 1], "calls": 1, "mine": 1})));
}

#[tokio::test]
async fn a_key_that_is_no_variable_is_a_flow_error() {
    let source = r#"
tool state = builtin streetrace.state

flow main:
    $known = 1
    state.set_state("unknown", 2)
"#;
    let run = run_source("state-bad-key", source, "go", Arc::new(ScriptedProvider::new()), Options::default()).await;
    assert_eq!(run.outcome.status, RunStatus::Failed);
    let error = run.outcome.error.unwrap();
    assert_eq!(
        error.message,
        r#"state.set_state({"key":"unknown","value":2}): 'unknown' is not a variable of workflow 'main'; the variables are: known"#
    );
    assert_eq!(error.location.unwrap().line, 6);
}

/// A statement that is one tool call is evaluated once: its arguments are not
/// evaluated again after the call changed the variables they read (here
/// `len` of a number, after the write).
#[tokio::test]
async fn a_tool_call_statement_is_evaluated_once() {
    let source = r#"
tool state = builtin streetrace.state

flow main:
    $d = "abc"
    state.set_state("d", len($d))
    return $d
"#;
    let run = run_source("state-once", source, "go", Arc::new(ScriptedProvider::new()), Options::default()).await;
    assert_eq!(run.outcome.status, RunStatus::Completed, "{:?}", run.outcome.error);
    assert_eq!(run.outcome.result, Some(json!(3)));
}
