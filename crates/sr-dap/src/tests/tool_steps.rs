//! Deterministic tool steps: a flow's `fs.read_file(…)` is a tool call point
//! the debugger steps into, and an agent's `set_state` write of a flow
//! variable shows in the *Variables* scope and trips a data breakpoint.

use serde_json::json;
use sr_runtime::scripted::{Reply, ScriptedProvider, after_tool_results, instruction_contains};

use super::{Harness, MAIN, line};
use crate::inspect::InspectError;
use crate::protocol::{DataBreakpoint, DataBreakpointInfoArguments, Variable};
use crate::stepping::StepKind;

const FILES: &str = "\
streetrace v1

tool fs = builtin streetrace.fs

flow main:
    $t = fs.read_file(\"notes.txt\")
    fs.write_file(\"copy.txt\", upper($t))
    return $t
";

fn frame(name: &str, line: i64) -> (String, i64) {
    (name.to_string(), line)
}

fn field<'a>(fields: &'a [Variable], name: &str) -> &'a Variable {
    fields.iter().find(|v| v.name == name).unwrap_or_else(|| panic!("no {name}: {fields:?}"))
}

/// The *Call* scope of the top frame: (name, value) of each argument of the call.
fn call_args(h: &Harness) -> (String, Vec<(String, String)>) {
    let call = h.children(h.scope(h.frame_id(MAIN, 0), "Call"));
    let args = h.children(field(&call, "args").variables_reference);
    (field(&call, "tool").value.clone(), args.into_iter().map(|v| (v.name, v.value)).collect())
}

fn pairs(items: &[(&str, &str)]) -> Vec<(String, String)> {
    items.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn step_in_stops_at_a_flow_tool_call_with_its_arguments_then_shows_its_value() {
    let mut h = Harness::new(FILES, ScriptedProvider::new());
    std::fs::write(h.dir.join("notes.txt"), "hello notes").unwrap();
    h.lines(vec![line(6)]);
    h.start(false);
    assert_eq!(h.stopped().await.0, "breakpoint");
    assert_eq!(h.frames(MAIN), [frame("flow main", 6)]);
    assert!(h.var(MAIN, "t").is_none(), "not assigned yet");

    h.step(StepKind::In);
    assert_eq!(h.stopped().await.0, "step");
    assert_eq!(h.frames(MAIN), [frame("tool read_file", 6), frame("flow main", 6)]);
    assert_eq!(call_args(&h), ("\"read_file\"".to_string(), pairs(&[("path", "\"notes.txt\"")])));
    assert!(h.var(MAIN, "t").is_none(), "the call has not run yet");
    let call = h.children(h.scope(h.frame_id(MAIN, 0), "Call"));
    assert_eq!(
        h.set(field(&call, "args").variables_reference, "path", "\"other.txt\"").unwrap_err(),
        InspectError::CallNotEditable
    );

    h.step(StepKind::In);
    assert_eq!(h.stopped().await.0, "step");
    assert_eq!(h.frames(MAIN), [frame("flow main", 7)]);
    let t = h.var(MAIN, "t").unwrap();
    assert_eq!((t.value.as_str(), t.evaluate_name.as_deref()), ("\"hello notes\"", Some("$t")));

    // The arguments are evaluated before the call stops.
    h.step(StepKind::In);
    h.stopped().await;
    assert_eq!(h.frames(MAIN), [frame("tool write_file", 7), frame("flow main", 7)]);
    assert_eq!(
        call_args(&h),
        ("\"write_file\"".to_string(), pairs(&[("path", "\"copy.txt\""), ("content", "\"HELLO NOTES\"")]))
    );
    assert!(!h.dir.join("copy.txt").exists(), "stopped before the write");
    h.cont();
    assert_eq!(h.terminated().await, 0);
    assert_eq!(std::fs::read_to_string(h.dir.join("copy.txt")).unwrap(), "HELLO NOTES");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn step_over_a_flow_tool_call_runs_it() {
    let mut h = Harness::new(FILES, ScriptedProvider::new());
    std::fs::write(h.dir.join("notes.txt"), "hello notes").unwrap();
    h.lines(vec![line(6)]);
    h.start(false);
    h.stopped().await;
    h.step(StepKind::Over);
    assert_eq!(h.stopped().await.0, "step");
    assert_eq!(h.frames(MAIN), [frame("flow main", 7)]);
    assert_eq!(h.var(MAIN, "t").unwrap().value, "\"hello notes\"");
    h.cont();
    assert_eq!(h.terminated().await, 0);
}

const MISSING: &str = "\
streetrace v1

tool fs = builtin streetrace.fs

flow main:
    $t = fs.read_file(\"gone.txt\")
    on failure:
        $t = \"none\"
    return $t
";

/// A failing flow tool call is a tool error at the call, then a failure of
/// its statement, which `on failure:` catches: each stops with its filter.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_flow_tool_call_stops_as_a_tool_error_then_as_a_caught_failure() {
    let mut h = Harness::new(MISSING, ScriptedProvider::new());
    h.exceptions(&["tool-error", "caught"]);
    h.start(false);
    assert_eq!(h.stopped().await.0, "exception");
    assert_eq!(h.frames(MAIN), [frame("tool read_file", 6), frame("flow main", 6)]);
    let info = h.debugger.exception_info(MAIN).unwrap();
    assert_eq!((info.exception_id.as_str(), info.break_mode.as_str()), ("tool-error", "always"));
    assert!(info.description.starts_with("tool 'read_file' failed: "), "{}", info.description);
    assert!(info.description.contains("No such file"), "{}", info.description);
    assert_eq!(call_args(&h).1, pairs(&[("path", "\"gone.txt\"")]));

    h.cont();
    assert_eq!(h.stopped().await.0, "exception");
    assert_eq!(h.frames(MAIN), [frame("flow main", 6)]);
    let info = h.debugger.exception_info(MAIN).unwrap();
    assert_eq!((info.exception_id.as_str(), info.break_mode.as_str()), ("caught", "always"));
    assert!(info.description.starts_with(r#"fs.read_file({"path":"gone.txt"}): "#), "{}", info.description);
    assert!(h.var(MAIN, "t").is_none());
    h.cont();
    assert_eq!(h.terminated().await, 0);
    assert!(h.output("console").contains("run completed: none"), "{}", h.output("console"));

    // By default neither stops: the failure is caught.
    let mut h = Harness::new(MISSING, ScriptedProvider::new());
    h.start(false);
    assert_eq!(h.terminated().await, 0);

    // Without `on failure:`, the statement's failure is uncaught and stops by default.
    let unguarded = MISSING.replace("    on failure:\n        $t = \"none\"\n", "");
    let mut h = Harness::new(&unguarded, ScriptedProvider::new());
    h.start(false);
    assert_eq!(h.stopped().await.0, "exception");
    assert_eq!(h.frames(MAIN), [frame("flow main", 6)]);
    let info = h.debugger.exception_info(MAIN).unwrap();
    assert_eq!((info.exception_id.as_str(), info.break_mode.as_str()), ("uncaught", "unhandled"));
    assert!(info.description.starts_with(r#"fs.read_file({"path":"gone.txt"}): "#), "{}", info.description);
    h.cont();
    assert_eq!(h.terminated().await, 1);
}

const STATE: &str = "\
streetrace v1

model main = openai/test

tool state = builtin streetrace.state

prompt planner_instruction: \"\"\"Write the plan.\"\"\"

agent planner:
    instruction planner_instruction
    tools state

flow main:
    $plan = \"none\"
    $answer = run agent planner with \"plan it\"
    return [$plan, $answer]
";

fn planner() -> ScriptedProvider {
    ScriptedProvider::new().on(after_tool_results(), vec![Reply::Text("planned".into())]).on(
        instruction_contains("Write the plan"),
        vec![Reply::Calls(vec![("set_state".into(), json!({"key": "plan", "value": ["a", "b"]}))])],
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agents_state_write_shows_in_the_flows_variables() {
    let mut h = Harness::new(STATE, planner());
    h.lines(vec![line(15)]);
    h.start(false);
    h.stopped().await;
    assert_eq!(h.var(MAIN, "plan").unwrap().value, "\"none\"");
    h.step(StepKind::Over);
    h.stopped().await;
    assert_eq!(h.frames(MAIN), [frame("flow main", 16)]);
    let plan = h.var(MAIN, "plan").unwrap();
    assert_eq!((plan.value.as_str(), plan.indexed_variables), (r#"["a","b"]"#, Some(2)));
    assert_eq!(h.var(MAIN, "answer").unwrap().value, "\"planned\"");
    h.cont();
    assert_eq!(h.terminated().await, 0);
}

/// The write is a `state_change` of the flow's thread: a data breakpoint on
/// the variable stops at the agent's next point, with the new value.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_data_breakpoint_stops_after_an_agent_sets_the_variable() {
    let mut h = Harness::new(STATE, planner());
    h.lines(vec![line(15)]);
    h.start(false);
    h.stopped().await;
    let variables = h.scope(h.frame_id(MAIN, 0), "Variables");
    let args =
        DataBreakpointInfoArguments { variables_reference: Some(variables), name: "plan".into(), frame_id: None };
    assert_eq!(h.debugger.data_breakpoint_info(args).data_id.as_deref(), Some("plan"));
    let set =
        h.debugger.lock().breakpoints.set_data(vec![DataBreakpoint { data_id: "plan".into(), ..Default::default() }]);
    h.lines(vec![]);
    h.cont();
    let stopped = h.stopped_body().await;
    assert_eq!(stopped["reason"], "data breakpoint");
    assert_eq!(stopped["hitBreakpointIds"], json!([set[0].id]));
    assert_eq!(h.frames(MAIN), [frame("model openai/test", 9), frame("agent planner", 9), frame("flow main", 15)]);
    assert_eq!(h.var(MAIN, "plan").unwrap().value, r#"["a","b"]"#);
    let flow = h.children(h.scope(h.frame_id(MAIN, 2), "Variables"));
    assert_eq!(field(&flow, "plan").value, r#"["a","b"]"#);
    h.cont();
    assert_eq!(h.terminated().await, 0, "one write, one stop");
}
