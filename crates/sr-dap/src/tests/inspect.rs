//! Scopes, structured variables with paging, evaluation and setVariable.

use serde_json::json;
use sr_runtime::scripted::{Reply, ScriptedProvider, after_tool_results, instruction_contains};

use super::{Harness, MAIN, line};
use crate::evaluate::ExpressionError;
use crate::inspect::InspectError;
use crate::protocol::{EvaluateArguments, VariablesArguments};
use crate::stepping::StepKind;
use crate::variables::EditError;

const PROGRAM: &str = concat!(
    reader_header!(),
    "\
flow main:
    $count = 2
    $profile = {name: \"Ada\", tags: [\"math\", \"engines\", \"chess\"]}
    $answer = run agent reader with \"read\"
    return {count: $count, name: $profile.name}
"
);

fn reader() -> ScriptedProvider {
    ScriptedProvider::new()
        .on(after_tool_results(), vec![Reply::Text("read it".into())])
        .on(instruction_contains("Read files"), vec![Reply::Calls(vec![("read_file".into(), json!({"path": "x"}))])])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn variables_expand_and_page() {
    let mut h = Harness::new(PROGRAM, reader());
    h.lines(vec![line(17)]);
    h.start(false);
    h.stopped().await;
    let profile = h.var(MAIN, "profile").unwrap();
    assert_eq!(profile.value, r#"{"name":"Ada","tags":["math","engines","chess"]}"#);
    assert_eq!((profile.kind.as_str(), profile.named_variables), ("object", Some(2)));
    assert_eq!(profile.evaluate_name.as_deref(), Some("$profile"));
    let fields = h.children(profile.variables_reference);
    let names: Vec<_> = fields.iter().map(|v| (v.name.as_str(), v.value.as_str())).collect();
    assert_eq!(names, [("name", "\"Ada\""), ("tags", r#"["math","engines","chess"]"#)]);
    let tags = &fields[1];
    assert_eq!((tags.indexed_variables, tags.evaluate_name.as_deref()), (Some(3), Some("$profile.tags")));
    let page = h
        .debugger
        .variables(VariablesArguments {
            variables_reference: tags.variables_reference,
            filter: Some("indexed".into()),
            start: Some(1),
            count: Some(1),
        })
        .unwrap();
    assert_eq!((page.len(), page[0].name.as_str(), page[0].value.as_str()), (1, "[1]", "\"engines\""));
    assert_eq!(page[0].variables_reference, 0);
    // Handles die with the stop.
    h.cont();
    h.terminated().await;
    assert!(
        h.debugger
            .variables(VariablesArguments { variables_reference: tags.variables_reference, ..Default::default() })
            .is_err()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scopes_show_the_call_the_last_exchange_and_the_run() {
    let mut h = Harness::new(PROGRAM, reader());
    h.lines(vec![line(16)]);
    h.start(false);
    h.stopped().await;
    h.step(StepKind::In);
    h.stopped().await;
    // Before a model call, the request about to be sent.
    let names: Vec<String> = h.frames(MAIN).into_iter().map(|f| f.0).collect();
    assert_eq!(names, ["model openai/test", "agent reader", "flow main"]);
    let request = h.children(h.scope(h.frame_id(MAIN, 0), "Call"));
    let field =
        |name: &str| request.iter().find(|v| v.name == name).unwrap_or_else(|| panic!("no {name}: {request:?}"));
    assert_eq!((field("caller").value.as_str(), field("system").value.as_str()), ("\"reader\"", "\"Read files.\""));
    let messages = h.children(field("messages").variables_reference);
    assert!(messages[0].value.contains("read"), "{messages:?}");
    let tools = h.children(field("tools").variables_reference);
    let tool_names: Vec<String> = tools.iter().map(|t| h.children(t.variables_reference)[0].value.clone()).collect();
    assert!(tool_names.contains(&"\"read_file\"".to_string()), "{tool_names:?}");
    h.step(StepKind::In);
    h.stopped().await;
    assert_eq!(h.frames(MAIN)[0].0, "model openai/test (replied)");
    h.step(StepKind::In);
    h.stopped().await;
    let names: Vec<String> = h.frames(MAIN).into_iter().map(|f| f.0).collect();
    assert_eq!(names, ["tool read_file", "agent reader", "flow main"]);

    let call = h.scope(h.frame_id(MAIN, 0), "Call");
    let call = h.children(call);
    assert_eq!((call[0].name.as_str(), call[0].value.as_str()), ("tool", "\"read_file\""));
    assert_eq!(h.children(call[1].variables_reference)[0].value, "\"x\"");

    let agent = h.frame_id(MAIN, 1);
    let exchange = h.children(h.scope(agent, "Last model exchange"));
    assert_eq!(exchange.iter().map(|v| v.name.as_str()).collect::<Vec<_>>(), ["request", "response"]);
    let request = h.children(exchange[0].variables_reference);
    let system = request.iter().find(|v| v.name == "system").unwrap();
    assert_eq!(system.value, "\"Read files.\"");
    let response = h.children(exchange[1].variables_reference);
    let calls = response.iter().find(|v| v.name == "tool_calls").unwrap();
    assert_eq!(calls.indexed_variables, Some(1));

    let run = h.children(h.scope(h.frame_id(MAIN, 2), "Run"));
    let run: Vec<_> = run.iter().map(|v| (v.name.as_str(), v.value.as_str())).collect();
    assert!(run.contains(&("input", "\"hello\"")) && run.contains(&("thread", "\"main\"")), "{run:?}");
    // Flow frames have no exchange.
    assert!(h.debugger.scopes(h.frame_id(MAIN, 2)).unwrap().iter().all(|s| s.name != "Last model exchange"));
    h.cont();
    h.terminated().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn expressions_evaluate_in_any_frame() {
    let mut h = Harness::new(PROGRAM, reader());
    h.functions(&["reader"]);
    h.start(false);
    h.stopped().await;
    let top = h.frame_id(MAIN, 0);
    let flow = h.frame_id(MAIN, 2);
    assert_eq!(h.evaluate(Some(top), "len($profile.tags) + $count"), Ok("5".to_string()));
    assert_eq!(h.evaluate(Some(flow), "$profile.name + \"!\""), Ok("\"Ada!\"".to_string()));
    assert_eq!(h.evaluate(None, "count"), Ok("2".to_string()), "a hover on a bare name");
    assert_eq!(
        h.evaluate(Some(flow), "$answer"),
        Err(InspectError::Expression(ExpressionError::Eval("variable '$answer' is not defined".to_string())))
    );
    let unread = h.evaluate(Some(flow), "$count +").unwrap_err();
    assert!(matches!(&unread, InspectError::Expression(ExpressionError::Syntax { .. })), "{unread:?}");
    assert!(unread.to_string().starts_with("cannot read"), "{unread}");
    let args = EvaluateArguments {
        expression: "filter [{s: 1}, {s: 5}] where .s > $count".into(),
        frame_id: Some(flow),
        context: Some("repl".into()),
    };
    let result = h.debugger.evaluate(args).unwrap();
    assert_eq!((result.result.as_str(), result.indexed_variables), (r#"[{"s":5}]"#, Some(1)));
    assert_eq!(h.children(result.variables_reference)[0].value, r#"{"s":5}"#);
    h.cont();
    h.terminated().await;
    assert!(h.evaluate(None, "1").is_err(), "nothing is stopped");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn set_variable_changes_what_the_run_sees() {
    let mut h = Harness::new(PROGRAM, reader());
    h.lines(vec![line(17)]);
    h.start(false);
    h.stopped().await;
    let scope = h.scope(h.frame_id(MAIN, 0), "Variables");
    let set = h.set(scope, "count", "$count * 10").unwrap();
    assert_eq!((set.value.as_str(), set.kind.as_str()), ("20", "int"));
    let profile = h.var(MAIN, "profile").unwrap();
    h.set(profile.variables_reference, "name", "\"Grace\"").unwrap();
    let tags = h.children(profile.variables_reference)[1].variables_reference;
    h.set(tags, "[0]", "{\"json\": [1, 2]}").unwrap();
    assert_eq!(h.var(MAIN, "profile").unwrap().value, r#"{"name":"Grace","tags":[{"json":[1,2]},"engines","chess"]}"#);
    assert!(h.set(scope, "nothing", "1").is_err());
    let unread = h.set(scope, "count", "$undefined +").unwrap_err();
    assert!(matches!(&unread, InspectError::Expression(ExpressionError::NeitherDslNorJson(_))), "{unread:?}");
    assert!(unread.to_string().ends_with("; it is not JSON either"), "{unread}");
    let run = h.scope(h.frame_id(MAIN, 0), "Run");
    assert_eq!(h.set(run, "input", "\"x\"").unwrap_err(), InspectError::NotEditable);
    h.cont();
    h.terminated().await;
    assert!(h.output("console").contains(r#"run completed: {"count":20,"name":"Grace"}"#), "{}", h.output("console"));
}

/// Stopped before a model call, the *Call* scope is the request about to be
/// sent, every setting present; `setVariable` changes what is sent, and an
/// edit that would not be a request is refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_edited_model_call_is_what_the_model_gets() {
    let provider =
        std::sync::Arc::new(ScriptedProvider::new().on(after_tool_results(), vec![Reply::Text("done".into())]).on(
            instruction_contains("Read files"),
            vec![Reply::Calls(vec![("read_file".into(), json!({"path": "x"}))])],
        ));
    let mut h = Harness::new(PROGRAM, provider.clone());
    h.functions(&["reader"]);
    h.start(false);
    h.stopped().await;
    let call = h.scope(h.frame_id(MAIN, 0), "Call");
    let names: Vec<String> = h.children(call).into_iter().map(|v| v.name).collect();
    assert_eq!(
        names,
        ["model", "system", "messages", "tools", "response_schema", "temperature", "max_tokens", "caller"]
    );
    assert_eq!(h.set(call, "temperature", "0.5").unwrap().value, "0.5");
    assert_eq!(h.set(call, "max_tokens", "99").unwrap().value, "99");
    let refused = h.set(call, "model", "42").unwrap_err();
    assert!(
        matches!(&refused, InspectError::Edit(EditError::InvalidRequest(m)) if m.starts_with("invalid type: integer `42`")),
        "{refused:?}"
    );
    assert!(refused.to_string().starts_with("the call would not be a valid request: invalid type"), "{refused}");
    assert_eq!(h.children(call).iter().find(|v| v.name == "model").unwrap().value, "\"openai/test\"", "unchanged");

    // The tool call that follows cannot be edited.
    h.step(StepKind::In);
    h.stopped().await;
    h.step(StepKind::In);
    h.stopped().await;
    assert_eq!(h.frames(MAIN)[0].0, "tool read_file");
    let tool_call = h.scope(h.frame_id(MAIN, 0), "Call");
    assert_eq!(h.set(tool_call, "tool", "\"x\"").unwrap_err(), InspectError::CallNotEditable);
    h.cont();
    assert_eq!(h.terminated().await, 0);
    let sent = provider.requests();
    assert_eq!((sent[0].temperature, sent[0].max_tokens), (Some(0.5), Some(99)));
    assert_eq!(sent[1].temperature, None, "the next call is the agent's own");
}

/// Stopped after a model call, its reply can be replaced before the agent
/// sees it: here a tool call becomes a final answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replaced_reply_is_what_the_agent_gets() {
    let provider = std::sync::Arc::new(
        ScriptedProvider::new().on(after_tool_results(), vec![Reply::Text("from the model".into())]).on(
            instruction_contains("Read files"),
            vec![Reply::Calls(vec![("read_file".into(), json!({"path": "x"}))])],
        ),
    );
    let mut h = Harness::new(PROGRAM, provider.clone());
    h.functions(&["reader"]);
    h.start(false);
    h.stopped().await;
    h.step(StepKind::Over);
    h.stopped().await;
    assert_eq!(h.frames(MAIN)[0].0, "model openai/test (replied)");
    let reply = h.scope(h.frame_id(MAIN, 0), "Call");
    let fields = h.children(reply);
    let names: Vec<&str> = fields.iter().map(|v| v.name.as_str()).collect();
    assert_eq!(names, ["text", "tool_calls", "usage", "finish_reason", "caller"]);
    assert_eq!(fields[1].indexed_variables, Some(1), "the model asked for read_file");
    h.set(reply, "text", "\"injected\"").unwrap();
    h.set(reply, "tool_calls", "[]").unwrap();
    h.set(reply, "finish_reason", "\"stop\"").unwrap();
    let refused = h.set(reply, "tool_calls", "3").unwrap_err();
    assert!(matches!(&refused, InspectError::Edit(EditError::InvalidReply(_))), "{refused:?}");
    h.cont();
    assert_eq!(h.terminated().await, 0);
    assert_eq!(provider.requests().len(), 1, "no tool ran, no second call");
    assert!(h.output("console").contains("$answer = injected\n"), "{}", h.output("console"));
}
