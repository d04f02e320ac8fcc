//! Deterministic flow steps: standard library calls inside flows (errors with
//! the statement's location, caught by `on failure`), `break`, and the result
//! of a flow that ends without `return`.

mod common;

use std::sync::Arc;

use common::{Options, run_source};
use serde_json::json;
use sr_runtime::RunOptions;
use sr_runtime::event::{Payload, RunStatus};
use sr_runtime::scripted::{Reply, ScriptedProvider};

fn no_model() -> Arc<ScriptedProvider> {
    Arc::new(ScriptedProvider::new())
}

fn logs(run: &common::Run) -> Vec<String> {
    let logs = run.payloads().into_iter().filter_map(|p| match p {
        Payload::Log { message } => Some(message.clone()),
        _ => None,
    });
    logs.collect()
}

#[tokio::test]
async fn string_functions_run_in_a_flow_without_a_model() {
    let source = r#"
flow main:
    $words = split(lower(trim(initial user prompt)), " ")
    $ids = []
    for $w in unique($words) do
        push upper(slice($w, 0, 1)) + slice($w, 1) to $ids
    end
    return {joined: join($ids, "-"), n: len($words), first: slice(regex_find_all(initial user prompt, "(\w+)"), 0, 1)}
"#;
    let run = run_source("stdlib", source, "  The cat THE dog ", no_model(), Options::default()).await;
    assert_eq!(run.outcome.status, RunStatus::Completed, "{:?}", run.outcome.error);
    assert_eq!(run.outcome.result, Some(json!({"joined": "The-Cat-Dog", "n": 4, "first": ["The"]})));
}

#[tokio::test]
async fn a_wrong_type_is_a_flow_error_at_the_statement_that_on_failure_catches() {
    let source = r#"
flow main:
    $n = 3
    $shout = upper($n)
    on failure:
        log "caught: ${error}"
        $shout = "fallback"
    return $shout

flow uncaught:
    $n = 3
    $shout = upper($n)
    return $shout
"#;
    let run = run_source("wrong-type", source, "go", no_model(), Options::default()).await;
    assert_eq!(run.outcome.result, Some(json!("fallback")), "{:?}", run.outcome.error);
    assert_eq!(logs(&run), ["caught: upper() needs a string, got an int"]);

    let options = Options {
        options: RunOptions { entry: Some("uncaught".into()), ..RunOptions::default() },
        ..Options::default()
    };
    let run = run_source("wrong-type-uncaught", source, "go", no_model(), options).await;
    assert_eq!(run.outcome.status, RunStatus::Failed);
    let error = run.outcome.error.unwrap();
    assert_eq!(error.message, "upper() needs a string, got an int");
    let at = error.location.unwrap();
    assert_eq!((at.line, at.column), (12, 5), "the statement `$shout = upper($n)` of flow uncaught");
}

#[tokio::test]
async fn break_ends_the_innermost_loop_and_later_statements_run() {
    let source = r#"
flow main:
    $seen = []
    for $i in range(10) do
        loop do
            push "inner" to $seen
            break
        end
        if $i == 2:
            break
        push $i to $seen
    end
    $count = 0
    loop max 100 do
        $count = $count + 1
        if $count >= 5:
            break
    end
    push "after" to $seen
    return {seen: $seen, count: $count}
"#;
    let run = run_source("break", source, "go", no_model(), Options::default()).await;
    assert_eq!(run.outcome.status, RunStatus::Completed, "{:?}", run.outcome.error);
    assert_eq!(run.outcome.result, Some(json!({"seen": ["inner", 0, "inner", 1, "inner", "after"], "count": 5})));
}

#[tokio::test]
async fn a_flow_without_return_yields_its_last_model_step() {
    let source = r#"
model main = openai/gpt-4o
prompt summarize: """Summarize."""
prompt rate: """Rate it."""
agent writer:
    instruction summarize

flow main:
    $draft = run agent writer with "draft"
    $grade = call llm rate with $draft
    $sub = run quiet
    log "graded ${grade}; quiet gave ${sub}"

flow quiet:
    $x = upper("no model here")
"#;
    let provider = ScriptedProvider::new()
        .on(sr_runtime::scripted::user_says("draft"), vec![Reply::Text("A short draft.".into())])
        .always(|_| true, Reply::Text("B+".into()));
    let run = run_source("flow-result", source, "go", Arc::new(provider), Options::default()).await;
    assert_eq!(run.outcome.status, RunStatus::Completed, "{:?}", run.outcome.error);
    // `call llm` was the last model step of `main`; `quiet` had none, so it gives null.
    assert_eq!(run.outcome.result, Some(json!("B+")));
    assert_eq!(logs(&run), ["graded B+; quiet gave None"]);
}
