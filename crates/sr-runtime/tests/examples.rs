//! Upstream's example workloads run to completion under a scripted provider.

mod common;

use std::sync::Arc;

use common::{Options, example, run_file, work_dir};
use serde_json::json;
use sr_runtime::event::{Payload, RunStatus};
use sr_runtime::scripted::{Reply, ScriptedProvider, after_tool_results, instruction_contains};

#[tokio::test]
async fn flow_runs_agents_in_order_with_their_tools_and_streams_them_live() {
    let dir = work_dir("flow");
    std::fs::write(dir.join("a.sr"), "model m = a/b\n").unwrap();
    let provider = ScriptedProvider::new()
        .on(after_tool_results(), vec![Reply::Text("Found one file, a.sr.".into())])
        .on(
            instruction_contains("Research this repository"),
            vec![Reply::Calls(vec![("list_directory".into(), json!({"path": "."}))])],
        )
        .on(instruction_contains("Summarize the analysis"), vec![Reply::Text("Summary: all good.".into())]);
    let run = run_file(
        &example("dsl/flow.sr"),
        "review please",
        Arc::new(provider),
        Options { work_dir: dir, ..Default::default() },
    )
    .await;
    assert_eq!(run.outcome.status, RunStatus::Completed, "{:?}", run.outcome.error);
    assert_eq!(run.outcome.result, Some(json!("Summary: all good.")));

    // The analyzer's tool call streams live, inside the flow, before the summarizer starts.
    let tool = run.of_type("tool_result")[0];
    assert_eq!(tool.path, vec!["flow:main", "agent:analyzer"]);
    assert_eq!(
        tool.payload,
        Payload::ToolResult {
            call_id: "call_0".into(),
            tool: "list_directory".into(),
            result: json!({"tool_name": "list_directory", "result": "success", "output": {"dirs": [], "files": ["a.sr"]}}),
            is_error: false,
        }
    );
    let summarizer_start = run
        .events
        .iter()
        .position(|e| matches!(&e.payload, Payload::AgentStarted { agent, .. } if agent == "summarizer"))
        .unwrap();
    assert!(tool.seq < run.events[summarizer_start].seq);
    // The summarizer got the analyzer's answer.
    assert!(
        matches!(&run.events[summarizer_start].payload, Payload::AgentStarted { input, .. } if input == "Found one file, a.sr.")
    );
    assert_eq!(run.of_type("flow_result")[0].payload, Payload::FlowResult { result: json!("Summary: all good.") });
    // Sequence numbers are strictly increasing.
    assert!(run.events.windows(2).all(|w| w[0].seq + 1 == w[1].seq));
}

#[tokio::test]
async fn delegate_transfers_the_conversation() {
    let provider = ScriptedProvider::new()
        .on(
            instruction_contains("project coordinator"),
            vec![Reply::Calls(vec![("transfer_to_agent".into(), json!({"agent_name": "code_expert"}))])],
        )
        .on(instruction_contains("code analysis expert"), vec![Reply::Text("The code is fine.".into())]);
    let provider = Arc::new(provider);
    let run = run_file(&example("dsl/coordinator.sr"), "analyze main.rs", provider.clone(), Options::default()).await;
    assert_eq!(run.outcome.result, Some(json!("The code is fine.")), "{:?}", run.outcome.error);
    let transfer = run.of_type("transfer")[0];
    assert_eq!(transfer.payload, Payload::Transfer { from: "default".into(), to: "code_expert".into() });
    // The expert answered the user's message.
    let started = run.events.iter().find_map(|e| match &e.payload {
        Payload::AgentStarted { agent, input, .. } if agent == "code_expert" => Some(input.clone()),
        _ => None,
    });
    assert_eq!(started.as_deref(), Some("analyze main.rs"));
    assert_eq!(provider.calls(), 2);
}

#[tokio::test]
async fn use_calls_a_sub_agent_as_a_tool() {
    let provider = ScriptedProvider::new()
        .on(after_tool_results(), vec![Reply::Text("Documented.".into())])
        .on(
            instruction_contains("code documentation assistant"),
            vec![Reply::Calls(vec![("analyzer".into(), json!({"request": "analyze fn main"}))])],
        )
        .on(instruction_contains("You are a code analyzer"), vec![Reply::Text("No issues.".into())]);
    let run = run_file(&example("dsl/hierarchical.sr"), "document main", Arc::new(provider), Options::default()).await;
    assert_eq!(run.outcome.result, Some(json!("Documented.")), "{:?}", run.outcome.error);
    let result = run.of_type("tool_result")[0];
    assert_eq!(
        result.payload,
        Payload::ToolResult {
            call_id: "call_0".into(),
            tool: "analyzer".into(),
            result: json!("No issues."),
            is_error: false
        }
    );
    // The sub-agent's own events stream, nested under the parent.
    let sub = run
        .events
        .iter()
        .find(|e| matches!(&e.payload, Payload::AgentFinished { agent, .. } if agent == "analyzer"))
        .unwrap();
    assert_eq!(sub.path, vec!["agent:default", "agent:analyzer"]);
}

#[tokio::test]
async fn escalation_returns_the_value_from_before_the_escalating_reply() {
    let provider = ScriptedProvider::new()
        .on(instruction_contains("PI"), vec![Reply::Text("3.1".into()), Reply::Text("**Drifting.**".into())]);
    let run = run_file(&example("flow/pingpong.sr"), "3", Arc::new(provider), Options::default()).await;
    assert_eq!(run.outcome.status, RunStatus::Completed, "{:?}", run.outcome.error);
    assert_eq!(run.outcome.result, Some(json!(3.1)));
    let escalation = run.of_type("escalation")[0];
    assert_eq!(
        escalation.payload,
        Payload::Escalation {
            agent_name: "peer2".into(),
            result: json!("**Drifting.**"),
            condition_op: "~".into(),
            condition_value: "DRIFTING".into(),
        }
    );
}

/// Every upstream `.sr` file with an entry point runs to completion when the
/// model answers everything (with values of the right schema where asked).
#[tokio::test]
async fn every_upstream_file_with_an_entry_point_runs() {
    let mut ran = Vec::new();
    for (path, _) in sr_testing::upstream_files() {
        let full = sr_testing::upstream_corpus().join("files").join(&path);
        let mut db = sr_hir::RootDatabase::default();
        let Ok(program) = sr_runtime::compile::compile_path(&mut db, &full) else { continue };
        if program.entry.is_none() {
            continue;
        }
        let provider = Arc::new(sr_runtime::scripted::conforming("done"));
        // Upstream's bundled agent names no model; it needs `--model`.
        let options = sr_runtime::RunOptions { default_model: Some("openai/gpt-4o".into()), ..Default::default() };
        let run = run_file(&full, "hello", provider, Options { options, ..Default::default() }).await;
        assert_eq!(run.outcome.status, RunStatus::Completed, "{path}: {:?}", run.outcome.error);
        ran.push(path);
    }
    // All but the two files with errors upstream rejects (test-patterns.sr: E0016,
    // invalid_syntax.sr) compile; entry_first.sr and use_pattern.sr run through
    // our first-agent fallback.
    assert_eq!(ran.len(), 33, "{ran:#?}");
}
