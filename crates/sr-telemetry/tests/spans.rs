//! Spans of real runs under a scripted model: names, nesting, attributes,
//! content capture and errors.

mod common;

use common::{Collector, attr, content_keys, run};
use expect_test::expect;
use opentelemetry::trace::{SpanKind, Status};
use serde_json::json;
use sr_llm::ChatRequest;
use sr_runtime::event::EventSink;
use sr_runtime::scripted::{Reply, ScriptedProvider, after_tool_results, instruction_contains, user_says};
use sr_telemetry::TelemetryConfig;

/// A flow with a parallel block (one agent calls a tool, one answers), an
/// agent that uses a sub-agent as a tool, a `call llm` and a `log`.
const TEAM: &str = r#"
model main = openai/gpt-4o
model fast = anthropic/claude-haiku-4-5

tool fs = builtin streetrace.fs

prompt searcher_prompt: """You search files."""
prompt reader_prompt using model "fast": """You read notes."""
prompt lead_prompt: """You lead the team."""
prompt helper_prompt: """You help the lead."""
prompt title_prompt: """Write a title for this."""

agent searcher:
    tools fs
    instruction searcher_prompt

agent reader:
    instruction reader_prompt

agent helper:
    instruction helper_prompt
    description "Summarizes"

agent lead:
    instruction lead_prompt
    use helper

flow main:
    parallel do
        $found = run agent searcher with $input_prompt
        $notes = run agent reader with $input_prompt
    end
    $answer = run agent lead with $found
    $title = call llm title_prompt with $answer
    log "Titled"
    return $title
"#;

fn both(
    a: impl Fn(&ChatRequest) -> bool + Send + Sync + 'static,
    b: impl Fn(&ChatRequest) -> bool + Send + Sync + 'static,
) -> impl Fn(&ChatRequest) -> bool + Send + Sync + 'static {
    move |r| a(r) && b(r)
}

fn team() -> ScriptedProvider {
    ScriptedProvider::new()
        .on(both(instruction_contains("You search"), after_tool_results()), vec![Reply::Text("Found a.sr.".into())])
        .on(
            instruction_contains("You search"),
            vec![Reply::Calls(vec![("list_directory".into(), json!({"path": "."}))])],
        )
        .on(instruction_contains("You read"), vec![Reply::Text("No notes.".into())])
        .on(
            both(instruction_contains("You lead"), after_tool_results()),
            vec![Reply::Text("The repo has a.sr.".into())],
        )
        .on(instruction_contains("You lead"), vec![Reply::Calls(vec![("helper".into(), json!({"request": "sum up"}))])])
        .on(instruction_contains("You help"), vec![Reply::Text("One file.".into())])
        .on(user_says("Write a title"), vec![Reply::Text("A Title".into())])
}

#[tokio::test]
async fn spans_nest_as_the_conventions_say() {
    let run = run(TEAM, "look around", team(), TelemetryConfig::default()).await;
    // Chats and tools are children of their agent; an agent used as a tool is a
    // child of that tool's span; parallel branches hang from their flow; the
    // `call llm` chat hangs from the flow; text deltas make no spans.
    expect![[r#"
        invoke_workflow workload
          invoke_workflow main
            invoke_agent searcher
              chat gpt-4o
              execute_tool list_directory
              chat gpt-4o
            invoke_agent reader
              chat claude-haiku-4-5
            invoke_agent lead
              chat gpt-4o
              execute_tool helper
                invoke_agent helper
                  chat gpt-4o
              chat gpt-4o
            chat gpt-4o
    "#]]
    .assert_eq(&run.spans.tree());
}

#[tokio::test]
async fn spans_carry_the_conventions_attributes() {
    let run = run(TEAM, "look around", team(), TelemetryConfig::default()).await;
    let spans = &run.spans;

    let root = spans.named("invoke_workflow workload");
    assert_eq!(attr(root, "gen_ai.operation.name").as_deref(), Some("invoke_workflow"));
    assert_eq!(attr(root, "sr.run.status").as_deref(), Some("completed"));
    assert_eq!(attr(root, "sr.invocation.id").as_deref(), Some("test-invocation"));
    assert_eq!(attr(root, "sr.entry").as_deref(), Some("flow main"));
    assert_eq!(root.status, Status::Unset);

    let flow = spans.named("invoke_workflow main");
    assert_eq!(attr(flow, "gen_ai.workflow.name").as_deref(), Some("main"));
    assert_eq!(flow.span_kind, SpanKind::Internal);

    let reader = spans.named("invoke_agent reader");
    assert_eq!(attr(reader, "gen_ai.operation.name").as_deref(), Some("invoke_agent"));
    assert_eq!(attr(reader, "gen_ai.agent.name").as_deref(), Some("reader"));
    assert_eq!(attr(reader, "gen_ai.provider.name").as_deref(), Some("anthropic"));
    assert_eq!(attr(reader, "gen_ai.request.model").as_deref(), Some("claude-haiku-4-5"));
    let chat = spans.named("chat claude-haiku-4-5");
    assert_eq!(chat.span_kind, SpanKind::Client);
    assert_eq!(attr(chat, "gen_ai.operation.name").as_deref(), Some("chat"));
    assert_eq!(attr(chat, "gen_ai.provider.name").as_deref(), Some("anthropic"));
    assert_eq!(attr(chat, "gen_ai.request.model").as_deref(), Some("claude-haiku-4-5"));
    // The scripted model reports 10 input tokens and a quarter of the text's length, plus one.
    assert_eq!(attr(chat, "gen_ai.usage.input_tokens").as_deref(), Some("10"));
    assert_eq!(attr(chat, "gen_ai.usage.output_tokens").as_deref(), Some("3"));
    assert_eq!(attr(chat, "gen_ai.response.finish_reasons").as_deref(), Some(r#"["stop"]"#));
    assert_eq!(attr(reader, "gen_ai.usage.input_tokens").as_deref(), Some("10"));

    // The lead's usage includes its helper's (the runtime's accounting).
    let lead = spans.named("invoke_agent lead");
    assert_eq!(attr(lead, "gen_ai.usage.input_tokens").as_deref(), Some("30"));
    assert_eq!(attr(root, "gen_ai.usage.input_tokens").as_deref(), Some("70"));

    let tool = spans.named("execute_tool list_directory");
    assert_eq!(attr(tool, "gen_ai.operation.name").as_deref(), Some("execute_tool"));
    assert_eq!(attr(tool, "gen_ai.tool.name").as_deref(), Some("list_directory"));
    assert_eq!(attr(tool, "gen_ai.tool.call.id").as_deref(), Some("call_0"));
    assert_eq!(tool.status, Status::Unset);
    let asks_tool = spans.0.iter().find(|s| {
        s.name == "chat gpt-4o" && attr(s, "gen_ai.response.finish_reasons").as_deref() == Some(r#"["tool_calls"]"#)
    });
    assert!(asks_tool.is_some());

    let title = spans.0.iter().find(|s| attr(s, "sr.prompt.name").as_deref() == Some("title_prompt")).unwrap();
    assert_eq!(spans.parent_of(title).map(|p| p.name.as_ref()), Some("invoke_workflow main"));

    // Spans are timed by the events: children within their parents.
    for span in &spans.0 {
        if let Some(parent) = spans.parent_of(span) {
            assert!(parent.start_time <= span.start_time && span.end_time <= parent.end_time, "{}", span.name);
        }
    }
}

#[tokio::test]
async fn content_is_left_out_by_default() {
    let run = run(TEAM, "look around", team(), TelemetryConfig::default()).await;
    assert_eq!(content_keys(&run.spans), Vec::<String>::new());
}

#[tokio::test]
async fn content_is_recorded_when_enabled() {
    let run = run(TEAM, "look around", team(), TelemetryConfig { capture_content: true }).await;
    let spans = &run.spans;
    let user = |text: &str| json!([{"role": "user", "parts": [{"type": "text", "content": text}]}]).to_string();
    let answer = |text: &str| {
        json!([{"role": "assistant", "parts": [{"type": "text", "content": text}], "finish_reason": "stop"}])
            .to_string()
    };

    let root = spans.named("invoke_workflow workload");
    assert_eq!(attr(root, "gen_ai.input.messages"), Some(user("look around")));
    assert_eq!(attr(root, "gen_ai.output.messages"), Some(answer("A Title")));
    let searcher = spans.named("invoke_agent searcher");
    assert_eq!(attr(searcher, "gen_ai.input.messages"), Some(user("look around")));
    assert_eq!(attr(searcher, "gen_ai.output.messages"), Some(answer("Found a.sr.")));

    let tool = spans.named("execute_tool list_directory");
    assert_eq!(attr(tool, "gen_ai.tool.call.arguments").as_deref(), Some(r#"{"path":"."}"#));
    assert!(attr(tool, "gen_ai.tool.call.result").unwrap().contains("a.sr"));
    let asks = spans.parent_of(tool).unwrap();
    let call = spans.0.iter().find(|s| s.parent_span_id == asks.span_context.span_id() && s.name == "chat gpt-4o");
    let asked = json!([{
        "role": "assistant",
        "parts": [{"type": "tool_call", "name": "list_directory"}],
        "finish_reason": "tool_calls",
    }]);
    assert_eq!(attr(call.unwrap(), "gen_ai.output.messages"), Some(asked.to_string()));

    // `call llm` sends its rendered prompt as the chat's input.
    let title = spans.0.iter().find(|s| attr(s, "sr.prompt.name").as_deref() == Some("title_prompt")).unwrap();
    assert!(attr(title, "gen_ai.input.messages").unwrap().contains("Write a title for this."));
    assert_eq!(attr(title, "gen_ai.output.messages"), Some(answer("A Title")));

    // What the flow logs is an event of its span.
    let flow = spans.named("invoke_workflow main");
    let log = flow.events.iter().find(|e| e.name == "log").unwrap();
    let message = log.attributes.iter().find(|kv| kv.key.as_str() == "sr.message");
    assert_eq!(message.map(|kv| kv.value.to_string()).as_deref(), Some("Titled"));
}

const ONE_AGENT: &str = r#"
model main = openai/gpt-4o

tool fs = builtin streetrace.fs

prompt worker_prompt: """You work."""

agent worker:
    tools fs
    instruction worker_prompt

flow main:
    $x = run agent worker with $input_prompt
    return $x
"#;

#[tokio::test]
async fn a_failure_marks_every_span_it_ends() {
    let provider =
        ScriptedProvider::new().on(instruction_contains("You work"), vec![Reply::Error("overloaded".into())]);
    let run = run(ONE_AGENT, "go", provider, TelemetryConfig::default()).await;
    // The failed model call ends the agent, the flow and the run, each with the error…
    expect![[r#"
        - run_started workload.sr entry=flow main input="go"
        flow:main flow_started main
        flow:main/agent:worker agent_started worker model=openai/gpt-4o input="go"
        flow:main/agent:worker model_request openai/gpt-4o messages=1 tools=[read_file,create_directory,write_file,append_to_file,list_directory,find_in_files]
        flow:main/agent:worker agent_finished worker output=null error="model openai/gpt-4o: scripted: HTTP 500: overloaded"
        flow:main flow_finished main result=null error="model openai/gpt-4o: scripted: HTTP 500: overloaded (workload.sr:13:5)"
        - error "model openai/gpt-4o: scripted: HTTP 500: overloaded" at workload.sr:13:5
        - run_finished failed error="model openai/gpt-4o: scripted: HTTP 500: overloaded (workload.sr:13:5)"
    "#]]
    .assert_eq(&sr_runtime::trace::trace(&run.events));
    // …and so marks each of their spans.
    expect![[r#"
        invoke_workflow workload [error.type=_OTHER]
          invoke_workflow main [error.type=_OTHER]
            invoke_agent worker [error.type=_OTHER]
              chat gpt-4o [error.type=_OTHER]
    "#]]
    .assert_eq(&run.spans.tree());
    assert_eq!(attr(run.spans.named("invoke_workflow workload"), "sr.run.status").as_deref(), Some("failed"));
    // The error message may quote content: not without capture.
    assert_eq!(content_keys(&run.spans), Vec::<String>::new());
}

#[tokio::test]
async fn error_messages_come_with_content_capture() {
    let provider =
        ScriptedProvider::new().on(instruction_contains("You work"), vec![Reply::Error("overloaded".into())]);
    let run = run(ONE_AGENT, "go", provider, TelemetryConfig { capture_content: true }).await;
    for name in ["invoke_workflow workload", "invoke_agent worker"] {
        let Status::Error { description } = &run.spans.named(name).status else { panic!("{name} did not fail") };
        assert!(description.contains("overloaded"), "{name}: {description}");
    }
}

#[tokio::test]
async fn a_failed_tool_call_marks_its_span_only() {
    let provider = ScriptedProvider::new()
        .on(after_tool_results(), vec![Reply::Text("It failed.".into())])
        .on(instruction_contains("You work"), vec![Reply::Calls(vec![("no_such_tool".into(), json!({}))])]);
    let run = run(ONE_AGENT, "go", provider, TelemetryConfig::default()).await;
    // The tool's error is its result, and the agent goes on to a second model call…
    expect![[r#"
        - run_started workload.sr entry=flow main input="go"
        flow:main flow_started main
        flow:main/agent:worker agent_started worker model=openai/gpt-4o input="go"
        flow:main/agent:worker model_request openai/gpt-4o messages=1 tools=[read_file,create_directory,write_file,append_to_file,list_directory,find_in_files]
        flow:main/agent:worker model_response openai/gpt-4o tool_calls text="" calls=[no_such_tool] tokens=10/5
        flow:main/agent:worker tool_call no_such_tool {}
        flow:main/agent:worker tool_result no_such_tool error "there is no tool named 'no_such_tool'"
        flow:main/agent:worker model_request openai/gpt-4o messages=3 tools=[read_file,create_directory,write_file,append_to_file,list_directory,find_in_files]
        flow:main/agent:worker text_delta "It failed."
        flow:main/agent:worker model_response openai/gpt-4o stop text="It failed." calls=[] tokens=10/3
        flow:main/agent:worker agent_finished worker output="It failed." tokens=20/8
        flow:main state_change x = "It failed."
        flow:main flow_finished main result="It failed."
        - flow_result "It failed."
        - run_finished completed result="It failed." tokens=20/8
    "#]]
    .assert_eq(&sr_runtime::trace::trace(&run.events));
    // …so only the tool's span is marked.
    expect![[r#"
        invoke_workflow workload
          invoke_workflow main
            invoke_agent worker
              chat gpt-4o
              execute_tool no_such_tool [error.type=tool_error]
              chat gpt-4o
    "#]]
    .assert_eq(&run.spans.tree());
}

#[tokio::test]
async fn a_delegated_agent_runs_inside_the_delegating_one() {
    let source = r#"
model main = openai/gpt-4o

prompt desk_prompt: """You route questions."""
prompt expert_prompt: """You are the expert."""

agent expert:
    instruction expert_prompt
    description "Knows"

agent:
    instruction desk_prompt
    delegate expert
"#;
    let provider = ScriptedProvider::new()
        .on(
            instruction_contains("You route"),
            vec![Reply::Calls(vec![("transfer_to_agent".into(), json!({"agent_name": "expert"}))])],
        )
        .on(instruction_contains("You are the expert"), vec![Reply::Text("Answered.".into())]);
    let run = run(source, "a question", provider, TelemetryConfig::default()).await;
    expect![[r#"
        invoke_workflow workload
          invoke_agent default +transfer
            chat gpt-4o
            invoke_agent expert
              chat gpt-4o
    "#]]
    .assert_eq(&run.spans.tree());
}

#[tokio::test]
async fn replayed_events_give_the_same_spans() {
    let live = run(TEAM, "look around", team(), TelemetryConfig { capture_content: true }).await;
    let replay = Collector::new(TelemetryConfig { capture_content: true });
    for event in &live.events {
        replay.telemetry.record(event);
    }
    let replayed = replay.spans();
    assert_eq!(replayed.tree(), live.spans.tree());
    let attributes = |spans: &common::Spans| {
        let mut all: Vec<String> = spans.0.iter().map(|s| format!("{} {:?}", s.name, s.attributes)).collect();
        all.sort();
        all
    };
    assert_eq!(attributes(&replayed), attributes(&live.spans));
}

/// A continued attempt emits again the events its journal serves: those make
/// no span (the earlier attempt's made them); the run and flow they leave
/// open start again as this attempt's, with what comes after inside.
#[tokio::test]
async fn served_events_make_no_spans_and_what_they_leave_open_starts_anew() {
    use sr_runtime::event::Payload;
    let live = run(TEAM, "look around", team(), TelemetryConfig::default()).await;
    let is_delta = |payload: &Payload| matches!(payload, Payload::TextDelta { .. });
    let title = live.events.iter().position(|e| matches!(e.payload, Payload::LlmCall { .. })).unwrap();
    let served = live.events[..title].iter().filter(|e| !is_delta(&e.payload)).count() as u64;
    let continued = Collector::served(TelemetryConfig::default(), served);
    for event in &live.events {
        continued.telemetry.record(event);
    }
    expect![[r#"
        invoke_workflow workload
          invoke_workflow main
            chat gpt-4o
    "#]]
    .assert_eq(&continued.spans().tree());
}

/// A coding agent's events as the runtime emits them: each step is a
/// `code_execution` span, and the tool calls its code makes are its children.
#[test]
fn tool_calls_from_code_are_children_of_their_step() {
    use sr_runtime::event::{Event, Payload, RunStatus, Usage};
    let collector = Collector::new(TelemetryConfig::default());
    let agent_path = vec!["agent:coder".to_string()];
    let events = [
        (vec![], Payload::RunStarted { workload: "w".into(), entry: "coder".into(), input: "sum".into() }),
        (
            agent_path.clone(),
            Payload::AgentStarted { agent: "coder".into(), model: "openai/m".into(), input: "sum".into() },
        ),
        (agent_path.clone(), Payload::ModelRequest { model: "openai/m".into(), messages: 1, tools: vec![] }),
        (
            agent_path.clone(),
            Payload::ModelResponse {
                model: "openai/m".into(),
                text: "code".into(),
                tool_calls: vec![],
                finish_reason: "stop".into(),
                usage: Usage::default(),
            },
        ),
        (agent_path.clone(), Payload::CodeStarted { step: 1, code: "read_file('a')".into() }),
        (agent_path.clone(), Payload::ToolCall { call_id: "c1".into(), tool: "read_file".into(), args: json!({}) }),
        (
            agent_path.clone(),
            Payload::ToolResult { call_id: "c1".into(), tool: "read_file".into(), result: json!("x"), is_error: false },
        ),
        (
            agent_path.clone(),
            Payload::CodeFinished { step: 1, outcome: "final_answer".into(), is_error: false, message: None },
        ),
        (agent_path.clone(), Payload::ToolCall { call_id: "c2".into(), tool: "write_file".into(), args: json!({}) }),
        (
            agent_path.clone(),
            Payload::ToolResult {
                call_id: "c2".into(),
                tool: "write_file".into(),
                result: json!("ok"),
                is_error: false,
            },
        ),
        (
            agent_path.clone(),
            Payload::AgentFinished { agent: "coder".into(), output: json!("3"), usage: Usage::default(), error: None },
        ),
        (
            vec![],
            Payload::RunFinished {
                status: RunStatus::Completed,
                result: Some(json!("3")),
                error: None,
                usage: Usage::default(),
            },
        ),
    ];
    for (seq, (path, payload)) in events.into_iter().enumerate() {
        collector.telemetry.record(&Event { seq: seq as u64, invocation_id: "i".into(), path, at_ms: None, payload });
    }
    // A call made after the step ended is the agent's own again.
    expect![[r#"
        invoke_workflow w
          invoke_agent coder
            chat m
            code_execution
              execute_tool read_file
            execute_tool write_file
    "#]]
    .assert_eq(&collector.spans().tree());
}
