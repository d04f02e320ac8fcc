//! Upstream's example workloads run to completion under a scripted provider.

mod common;

use std::sync::Arc;

use common::{Options, example, run_file, work_dir};
use expect_test::expect;
use serde_json::json;
use sr_runtime::event::RunStatus;
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

    // The analyzer's tool call streams live, inside the flow, before the summarizer
    // starts; the summarizer gets the analyzer's answer.
    expect![[r#"
        - run_started flow.sr entry=flow main input="review please"
        flow:main flow_started main
        flow:main/agent:analyzer agent_started analyzer model=anthropic/claude-opus-4-5 input="review please"
        flow:main/agent:analyzer model_request anthropic/claude-opus-4-5 messages=1 tools=[read_file,create_directory,write_file,append_to_file,list_directory,find_in_files]
        flow:main/agent:analyzer model_response anthropic/claude-opus-4-5 tool_calls text="" calls=[list_directory] tokens=10/5
        flow:main/agent:analyzer tool_call list_directory {"path":"."}
        flow:main/agent:analyzer tool_result list_directory {"tool_name":"list_directory","result":"success","output":{"dirs":[],"files":["a.sr"]}}
        flow:main/agent:analyzer model_request anthropic/claude-opus-4-5 messages=3 tools=[read_file,create_directory,write_file,append_to_file,list_directory,find_in_files]
        flow:main/agent:analyzer text_delta "Found one file, a.sr."
        flow:main/agent:analyzer model_response anthropic/claude-opus-4-5 stop text="Found one file, a.sr." calls=[] tokens=10/6
        flow:main/agent:analyzer agent_finished analyzer output="Found one file, a.sr." tokens=20/11
        flow:main state_change analysis = "Found one file, a.sr."
        flow:main/agent:summarizer agent_started summarizer model=anthropic/claude-sonnet-4-5 input="Found one file, a.sr."
        flow:main/agent:summarizer model_request anthropic/claude-sonnet-4-5 messages=1 tools=[read_file,create_directory,write_file,append_to_file,list_directory,find_in_files]
        flow:main/agent:summarizer text_delta "Summary: all good."
        flow:main/agent:summarizer model_response anthropic/claude-sonnet-4-5 stop text="Summary: all good." calls=[] tokens=10/5
        flow:main/agent:summarizer agent_finished summarizer output="Summary: all good." tokens=10/5
        flow:main state_change summary = "Summary: all good."
        flow:main flow_finished main result="Summary: all good."
        - flow_result "Summary: all good."
        - run_finished completed result="Summary: all good." tokens=30/16
    "#]]
    .assert_eq(&run.trace());
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
    // The expert answers the user's message.
    expect![[r#"
        - run_started coordinator.sr entry=agent default input="analyze main.rs"
        - warning "coordinator.sr: model 'fast' is never used [SR100]"
        agent:default agent_started default model=anthropic/claude-sonnet input="analyze main.rs"
        agent:default model_request anthropic/claude-sonnet messages=1 tools=[read_file,create_directory,write_file,append_to_file,list_directory,find_in_files,transfer_to_agent]
        agent:default model_response anthropic/claude-sonnet tool_calls text="" calls=[transfer_to_agent] tokens=10/5
        agent:default transfer default -> code_expert
        agent:default/agent:code_expert agent_started code_expert model=anthropic/claude-sonnet input="analyze main.rs"
        agent:default/agent:code_expert model_request anthropic/claude-sonnet messages=1 tools=[read_file,create_directory,write_file,append_to_file,list_directory,find_in_files]
        agent:default/agent:code_expert text_delta "The code is fine."
        agent:default/agent:code_expert model_response anthropic/claude-sonnet stop text="The code is fine." calls=[] tokens=10/5
        agent:default/agent:code_expert agent_finished code_expert output="The code is fine." tokens=10/5
        agent:default agent_finished default output="The code is fine." tokens=20/10
        - run_finished completed result="The code is fine." tokens=20/10
    "#]]
    .assert_eq(&run.trace());
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
    // The sub-agent's own events stream, nested under the parent, before its result.
    expect![[r#"
        - run_started hierarchical.sr entry=agent default input="document main"
        - warning "hierarchical.sr: model 'fast' is never used [SR100]"
        agent:default agent_started default model=anthropic/claude-sonnet input="document main"
        agent:default model_request anthropic/claude-sonnet messages=1 tools=[read_file,create_directory,write_file,append_to_file,list_directory,find_in_files,extractor,analyzer,documenter]
        agent:default model_response anthropic/claude-sonnet tool_calls text="" calls=[analyzer] tokens=10/5
        agent:default tool_call analyzer {"request":"analyze fn main"}
        agent:default/agent:analyzer agent_started analyzer model=anthropic/claude-sonnet input="analyze fn main"
        agent:default/agent:analyzer model_request anthropic/claude-sonnet messages=1 tools=[]
        agent:default/agent:analyzer text_delta "No issues."
        agent:default/agent:analyzer model_response anthropic/claude-sonnet stop text="No issues." calls=[] tokens=10/3
        agent:default/agent:analyzer agent_finished analyzer output="No issues." tokens=10/3
        agent:default tool_result analyzer "No issues."
        agent:default model_request anthropic/claude-sonnet messages=3 tools=[read_file,create_directory,write_file,append_to_file,list_directory,find_in_files,extractor,analyzer,documenter]
        agent:default text_delta "Documented."
        agent:default model_response anthropic/claude-sonnet stop text="Documented." calls=[] tokens=10/3
        agent:default agent_finished default output="Documented." tokens=30/11
        - run_finished completed result="Documented." tokens=30/11
    "#]]
    .assert_eq(&run.trace());
}

#[tokio::test]
async fn escalation_returns_the_value_from_before_the_escalating_reply() {
    let provider = ScriptedProvider::new()
        .on(instruction_contains("PI"), vec![Reply::Text("3.1".into()), Reply::Text("**Drifting.**".into())]);
    let run = run_file(&example("flow/pingpong.sr"), "3", Arc::new(provider), Options::default()).await;
    assert_eq!(run.outcome.status, RunStatus::Completed, "{:?}", run.outcome.error);
    assert_eq!(run.outcome.result, Some(json!(3.1)));
    expect![[r#"
        - run_started pingpong.sr entry=flow default input="3"
        - warning "pingpong.sr: model 'reviewer' is never used [SR100]"
        - warning "pingpong.sr: tool 'fs' is never used [SR100]"
        - warning "pingpong.sr: tool 'fs_readonly' is never used [SR100]"
        - warning "pingpong.sr: tool 'web' is never used [SR100]"
        - warning "pingpong.sr: tool 'cli' is never used [SR100]"
        flow:default flow_started default
        flow:default state_change current = "3"
        flow:default/agent:peer1 agent_started peer1 model=anthropic/claude-sonnet-4-5 input="3"
        flow:default/agent:peer1 model_request anthropic/claude-sonnet-4-5 messages=1 tools=[]
        flow:default/agent:peer1 text_delta "3.1"
        flow:default/agent:peer1 model_response anthropic/claude-sonnet-4-5 stop text="3.1" calls=[] tokens=10/1
        flow:default/agent:peer1 agent_finished peer1 output="3.1" tokens=10/1
        flow:default state_change current = 3.1
        flow:default/agent:peer2 agent_started peer2 model=anthropic/claude-sonnet-4-5 input="3.1"
        flow:default/agent:peer2 model_request anthropic/claude-sonnet-4-5 messages=1 tools=[]
        flow:default/agent:peer2 text_delta "**Drifting.**"
        flow:default/agent:peer2 model_response anthropic/claude-sonnet-4-5 stop text="**Drifting.**" calls=[] tokens=10/4
        flow:default/agent:peer2 agent_finished peer2 output="**Drifting.**" tokens=10/4
        flow:default escalation peer2 ~ "DRIFTING" result="**Drifting.**"
        flow:default flow_finished default result=3.1
        - flow_result 3.1
        - run_finished completed result=3.1 tokens=20/5
    "#]]
    .assert_eq(&run.trace());
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
