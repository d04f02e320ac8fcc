//! A coding agent (`executor` extension) end to end: the scripted model writes
//! Python that calls a builtin tool and a `use` agent as functions, runs in
//! the bubblewrap sandbox, keeps a variable across steps, recovers from an
//! error, and answers with several lines.

mod common;

use std::sync::Arc;

use common::{Options, run_source, work_dir};
use serde_json::json;
use sr_runtime::event::{Payload, RunStatus};
use sr_runtime::scripted::{Reply, ScriptedProvider, instruction_contains};

const SOURCE: &str = r#"
model main = openai/gpt-4o

executor sandbox:
    backend: bubblewrap
    allow: [json]
    timeout: 20

tool fs = builtin streetrace.fs

prompt solver: """You solve tasks with code."""
prompt greeter: """You greet people."""

agent main:
    instruction solver
    tools fs
    use greeter_agent
    executor sandbox

agent greeter_agent:
    instruction greeter
    description "Greets whoever it is asked to."
"#;

fn code(body: &str) -> Reply {
    Reply::Text(format!("```python\n{body}\n```"))
}

#[tokio::test]
async fn a_coding_agent_calls_tools_from_code_keeps_state_and_recovers() {
    if !common::bubblewrap_or_skip("the coding agent test") {
        return;
    }
    let dir = work_dir("coding");
    std::fs::write(dir.join("notes.txt"), "alpha\nbeta\ngamma\n").unwrap();
    let provider = Arc::new(
        ScriptedProvider::new()
            .on(instruction_contains("You greet people"), vec![Reply::Text("Hello, Ada!".into())])
            .on(
                instruction_contains("You solve tasks with code"),
                vec![
                    code(
                        "notes = read_file(path='notes.txt')\nlines = notes['output'].splitlines()\nprint(len(lines))",
                    ),
                    code("ratio = len(lines) / 0"),
                    code(
                        "greeting = greeter_agent(request='greet Ada')\n\
                         final_answer(f'{len(lines)} lines, the first is {lines[0]}\\n{greeting}')",
                    ),
                ],
            ),
    );
    let run = run_source(
        "coding",
        SOURCE,
        "Summarize notes.txt and greet Ada",
        provider.clone(),
        Options { work_dir: dir, ..Default::default() },
    )
    .await;
    assert_eq!(run.outcome.status, RunStatus::Completed, "{:?}\n{:#?}", run.outcome.error, run.payloads());
    assert_eq!(run.outcome.result, Some(json!("3 lines, the first is alpha\nHello, Ada!")));

    // Each step streamed its code and outcome; the error was fed back, not fatal.
    let outcomes: Vec<(u32, String)> = run
        .payloads()
        .into_iter()
        .filter_map(|p| match p {
            Payload::CodeFinished { step, outcome, .. } => Some((*step, outcome.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(
        outcomes,
        [(1, "success".to_string()), (2, "runtime_error".to_string()), (3, "final_answer".to_string())]
    );
    let printed: Vec<&Payload> =
        run.payloads().into_iter().filter(|p| matches!(p, Payload::CodeOutput { text, .. } if text == "3\n")).collect();
    assert_eq!(printed.len(), 1);
    // The tools ran through the runtime: events, and the sub-agent's own run.
    let tools: Vec<String> = run
        .payloads()
        .into_iter()
        .filter_map(|p| match p {
            Payload::ToolCall { tool, .. } => Some(tool.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(tools, ["read_file", "greeter_agent"]);
    assert_eq!(run.of_type("agent_started").len(), 2);
    // The model was told about the ZeroDivisionError.
    let third = &provider.requests()[2];
    let told = third.messages.last().unwrap().text();
    assert!(told.contains("ZeroDivisionError"), "{told}");
}

/// `backend: unsandboxed` runs the model's code as the user: only with the
/// run's explicit consent (`sr run --allow-unsandboxed`).
#[tokio::test]
async fn an_unsandboxed_coding_agent_needs_the_runs_consent() {
    const UNSANDBOXED: &str = r#"
model main = openai/gpt-4o

executor local:
    backend: unsandboxed

prompt solver: """You solve tasks with code."""

agent main:
    instruction solver
    executor local
"#;
    let provider = || Arc::new(ScriptedProvider::new().on(|_| true, vec![code("final_answer('ran')")]));
    let run = run_source("unsandboxed", UNSANDBOXED, "go", provider(), Options::default()).await;
    assert_eq!(run.outcome.status, RunStatus::Failed);
    let error = run.outcome.error.clone().unwrap().message;
    assert!(error.contains("`backend: unsandboxed`") && error.contains("`sr run --allow-unsandboxed`"), "{error}");
    assert!(run.of_type("code_started").is_empty(), "nothing ran");

    let allowed = Options {
        options: sr_runtime::RunOptions { allow_unsandboxed: true, ..Default::default() },
        ..Default::default()
    };
    let run = run_source("unsandboxed", UNSANDBOXED, "go", provider(), allowed).await;
    assert_eq!(run.outcome.status, RunStatus::Completed, "{:?}", run.outcome.error);
    assert_eq!(run.outcome.result, Some(json!("ran")));
    assert_eq!(run.of_type("code_started").len(), 1);
}

/// `examples: PROMPT` reaches the model's instructions, `stateless: true`
/// gives every step a fresh interpreter, and a reply without code is the
/// agent's answer as plain text.
#[tokio::test]
async fn examples_stateless_steps_and_a_plain_text_answer() {
    if !common::bubblewrap_or_skip("the coding agent test") {
        return;
    }
    let source = r#"
model main = openai/gpt-4o

executor fresh:
    stateless: true
    examples: worked

prompt worked: """Task: count to ${limit}. Code: final_answer(list(range(1, ${limit} + 1)))"""
prompt solver: """You solve tasks with code."""

agent coder:
    instruction solver
    executor fresh

flow main:
    $limit = 3
    $answer = run agent coder with "go"
    return $answer
"#;
    let provider = Arc::new(ScriptedProvider::new().on(
        instruction_contains("You solve tasks with code"),
        vec![code("kept = 1"), code("print(kept)"), Reply::Text("No state carries over.".into())],
    ));
    let run = run_source("coding-stateless", source, "go", provider.clone(), Options::default()).await;
    assert_eq!(run.outcome.status, RunStatus::Completed, "{:?}", run.outcome.error);
    assert_eq!(run.outcome.result, Some(json!("No state carries over.")));
    let requests = provider.requests();
    let system = requests[0].system.clone().unwrap();
    assert!(system.contains("Examples of the work:\n\nTask: count to 3. Code:"), "{system}");
    let told = requests[2].messages.last().unwrap().text();
    assert!(told.contains("NameError: name 'kept' is not defined"), "{told}");
}
