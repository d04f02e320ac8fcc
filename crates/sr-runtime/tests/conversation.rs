//! The builtin `conversation` and model inheritance: a flow sees the session's
//! conversation and each agent's reply as the run goes, `history $conversation`
//! gives it to an agent, and used or delegated agents inherit their caller's model.

mod common;

use std::sync::Arc;

use common::{Options, run_source};
use serde_json::json;
use sr_llm::{ChatRequest, Message, Role};
use sr_runtime::event::RunStatus;
use sr_runtime::scripted::{Reply, ScriptedProvider, instruction_contains};

fn transcript(request: &ChatRequest) -> Vec<(Role, String)> {
    request.messages.iter().map(|m| (m.role, m.text())).collect()
}

#[tokio::test]
async fn flows_see_the_sessions_conversation_and_hand_it_to_agents() {
    let source = r#"
model main = openai/main

prompt drafting: """You draft."""
prompt reviewing: """You review."""

agent drafter:
    instruction drafting

agent reviewer:
    instruction reviewing

flow main:
    $draft = run agent drafter with "Draft it"
    $review = run agent reviewer with "Review the draft" history $conversation
    return $conversation
"#;
    let model = Arc::new(
        ScriptedProvider::new()
            .on(instruction_contains("You draft."), vec![Reply::Text("draft one".into())])
            .on(instruction_contains("You review."), vec![Reply::Text("looks good".into())]),
    );
    let history = vec![Message::user("earlier question"), Message::assistant("earlier answer")];
    let options = Options { history, ..Options::default() };
    let run = run_source("conversation", source, "write a poem", model.clone(), options).await;
    assert_eq!(run.outcome.status, RunStatus::Completed, "{:?}", run.outcome.error);
    assert_eq!(
        run.outcome.result,
        Some(json!([
            {"role": "user", "content": "earlier question"},
            {"role": "assistant", "content": "earlier answer"},
            {"role": "user", "content": "write a poem"},
            {"role": "assistant", "author": "drafter", "content": "draft one"},
            {"role": "assistant", "author": "reviewer", "content": "looks good"},
        ]))
    );
    let requests = model.requests();
    // Without `history` an agent starts fresh; with it, it sees the
    // conversation, another agent's reply as context from the user.
    assert_eq!(transcript(&requests[0]), [(Role::User, "Draft it".to_string())]);
    assert_eq!(
        transcript(&requests[1]),
        [
            (Role::User, "earlier question".to_string()),
            (Role::Assistant, "earlier answer".to_string()),
            (Role::User, "write a poem".to_string()),
            (Role::User, "For context: [drafter] said: draft one".to_string()),
            (Role::User, "Review the draft".to_string()),
        ]
    );
}

#[tokio::test]
async fn parallel_branches_add_their_replies_in_branch_order() {
    let source = r#"
model main = openai/main

prompt a_prompt: """You are A."""
prompt b_prompt: """You are B."""

agent a:
    instruction a_prompt

agent b:
    instruction b_prompt

flow main:
    parallel do
        $x = run agent a with "go"
        $y = run agent b with "go"
    end
    return $conversation
"#;
    let model = Arc::new(
        ScriptedProvider::new()
            .on(instruction_contains("You are A."), vec![Reply::Text("from a".into())])
            .on(instruction_contains("You are B."), vec![Reply::Text("from b".into())]),
    );
    let run = run_source("conversation-parallel", source, "start", model, Options::default()).await;
    assert_eq!(run.outcome.status, RunStatus::Completed, "{:?}", run.outcome.error);
    let authors: Vec<String> =
        run.outcome.result.unwrap().as_array().unwrap().iter().map(|t| t["content"].to_string()).collect();
    assert_eq!(authors, ["\"start\"", "\"from a\"", "\"from b\""]);
}

#[tokio::test]
async fn used_and_delegated_agents_inherit_their_callers_model() {
    let source = r#"
model main = openai/main
model fast = openai/fast

prompt leading using model "fast": """You lead."""
prompt helping: """You help."""
prompt closing: """You close."""

agent lead:
    instruction leading
    use helper
    delegate closer

agent helper:
    instruction helping

agent closer:
    instruction closing

agent alone:
    instruction helping

flow main:
    $a = run agent lead with "start"
    $b = run agent alone with "on its own"
    return [$a, $b]
"#;
    let model = Arc::new(
        ScriptedProvider::new()
            .on(
                instruction_contains("You lead."),
                vec![
                    Reply::Calls(vec![("helper".into(), json!({"request": "help"}))]),
                    Reply::Calls(vec![("transfer_to_agent".into(), json!({"agent_name": "closer"}))]),
                ],
            )
            .on(instruction_contains("You help."), vec![Reply::Text("helped".into()), Reply::Text("alone".into())])
            .on(instruction_contains("You close."), vec![Reply::Text("closed".into())]),
    );
    let run = run_source("inherit-model", source, "go", model.clone(), Options::default()).await;
    assert_eq!(run.outcome.status, RunStatus::Completed, "{:?}", run.outcome.error);
    assert_eq!(run.outcome.result, Some(json!(["closed", "alone"])));
    let models: Vec<(String, String)> = model
        .requests()
        .iter()
        .map(|r| (r.system.clone().unwrap_or_default().chars().take(10).collect(), r.model.clone()))
        .collect();
    let of = |prefix: &str| {
        models.iter().filter(|(s, _)| s.starts_with(prefix)).map(|(_, m)| m.as_str()).collect::<Vec<_>>()
    };
    assert_eq!(of("You lead."), ["openai/fast", "openai/fast"]);
    assert_eq!(of("You help."), ["openai/fast", "openai/main"], "a used agent inherits; the same agent alone does not");
    assert_eq!(of("You close."), ["openai/fast"]);
}
