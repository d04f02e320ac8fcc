//! The coding loop end to end, in the default sandbox, under a scripted model.
#![allow(clippy::unwrap_used)]

mod support;

use std::sync::{Arc, Mutex};

use serde_json::json;
use sr_sandbox::{
    AgentError, Backend, BoxFuture, Bubblewrap, CodeAgent, CodeModel, Event, Message, ModelError, Role, SessionConfig,
};
use support::{require, session};

/// Replies from a script, recording each transcript it is shown.
struct Scripted {
    replies: Mutex<Vec<&'static str>>,
    seen: Mutex<Vec<Vec<Message>>>,
}

impl Scripted {
    fn new(replies: &[&'static str]) -> Scripted {
        Scripted { replies: Mutex::new(replies.iter().rev().copied().collect()), seen: Mutex::new(Vec::new()) }
    }
}

impl CodeModel for Scripted {
    fn next<'a>(&'a self, transcript: &'a [Message]) -> BoxFuture<'a, Result<String, ModelError>> {
        Box::pin(async move {
            self.seen.lock().unwrap().push(transcript.to_vec());
            self.replies.lock().unwrap().pop().map(str::to_string).ok_or_else(|| ModelError("script exhausted".into()))
        })
    }
}

fn backend() -> Option<Arc<dyn Backend>> {
    require(Bubblewrap::available(), "bubblewrap (bwrap)").then(|| Arc::new(Bubblewrap::default()) as Arc<dyn Backend>)
}

#[tokio::test]
async fn two_tools_state_recovery_and_a_multi_line_answer() {
    let Some(backend) = backend() else { return };
    let (mut session, recorder) = session(backend, SessionConfig::default()).await;
    let model = Scripted::new(&[
        "Let me look both up.\n```python\nnorway = lookup(key='capital:norway')\njapan = lookup(key='capital:japan')\n\
         print(norway['city'], japan['city'])\n```",
        "```python\ngap = japan['population'] - norway['population']\nper_unit = gap / 0\n```",
        "  \n",
        "```python\ntotal = add(a=norway['population'], b=japan['population'])\nprint(gap, int(total))\n```",
        "Done.\n```python\nfinal_answer(f\"Capitals: {norway['city']} and {japan['city']}\\n\"\n\
         f\"Combined population: {int(total)}\\nDifference: {gap}\")\n```",
    ]);
    let agent = CodeAgent { instructions: "You answer questions about countries.".into(), ..CodeAgent::default() };
    let mut events = Vec::new();
    let answer = agent
        .run(&mut session, &model, "Compare Norway's and Japan's capitals.", &mut |event| events.push(event))
        .await
        .expect("the agent answers");

    assert_eq!(answer.value, json!("Capitals: Oslo and Tokyo\nCombined population: 14669037\nDifference: 13250963"));
    assert_eq!(answer.iterations, 5);
    let calls: Vec<String> = recorder.calls.lock().unwrap().iter().map(|(name, _)| name.clone()).collect();
    assert_eq!(calls, ["lookup", "lookup", "add"], "each tool call ran once");

    let seen = model.seen.lock().unwrap().clone();
    let system = &seen[0][0];
    assert_eq!(system.role, Role::System);
    assert!(system.content.starts_with("You answer questions about countries.\n\n"));
    assert!(
        system.content.contains("def lookup(key: str) -> Any:\n    \"\"\"Looks up a fact by key"),
        "{}",
        system.content
    );
    assert!(system.content.contains("def add(a: float, b: float) -> Any:"));
    assert!(system.content.contains("You can import only: __future__, abc,"));
    assert_eq!(seen[0][1], Message { role: Role::User, content: "Compare Norway's and Japan's capitals.".into() });

    let observations: Vec<&str> =
        seen[4].iter().filter(|message| message.role == Role::User).skip(1).map(|m| m.content.as_str()).collect();
    assert_eq!(observations[0], "Output:\nOslo Tokyo\n");
    assert!(observations[1].contains("File \"<step 2>\", line 2, in <module>"), "{}", observations[1]);
    assert!(observations[1].ends_with("ZeroDivisionError: division by zero\n"), "{}", observations[1]);
    assert!(observations[2].starts_with("Your reply was empty, so nothing ran."));
    assert_eq!(observations[3], "Output:\n13250963 14669037\n");

    let replies = events.iter().filter(|event| matches!(event, Event::Reply { .. })).count();
    assert_eq!(replies, 5);
    let outcomes: Vec<&str> = events
        .iter()
        .filter_map(|event| match event {
            Event::Outcome { outcome, .. } => Some(outcome.kind()),
            _ => None,
        })
        .collect();
    assert_eq!(outcomes, ["success", "runtime_error", "success", "final_answer"]);
    session.close().await;
}

#[tokio::test]
async fn consecutive_errors_end_the_run() {
    let Some(backend) = backend() else { return };
    let (mut session, _) = session(backend, SessionConfig::default()).await;
    let model = Scripted::new(&[
        "```python\nimport os\n```",
        "```python\nx = (\n```",
        "```python\nlookup(key='nowhere')\n```",
        "```python\nfinal_answer(1)\n```",
    ]);
    let agent = CodeAgent::default();
    let error = agent.run(&mut session, &model, "task", &mut |_| {}).await.unwrap_err();
    let AgentError::TooManyErrors { errors: 3, last } = &error else { panic!("{error:?}") };
    assert_eq!(last, "ToolError from lookup: no entry for \"nowhere\"\n");
    let seen = model.seen.lock().unwrap().clone();
    assert!(seen[1][3].content.contains("1:8: import of 'os' is not allowed"), "{}", seen[1][3].content);
    assert!(seen[2][5].content.starts_with("SyntaxError at line 1, column"), "{}", seen[2][5].content);
    session.close().await;
}

#[tokio::test]
async fn iterations_and_model_failures_are_bounded() {
    let Some(backend) = backend() else { return };
    let (mut session, _) = session(backend, SessionConfig::default()).await;
    let model = Scripted::new(&["```python\nn = 1\n```", "```python\nn += 1\n```", "```python\nfinal_answer(n)\n```"]);
    let agent = CodeAgent { max_iterations: 2, ..CodeAgent::default() };
    let error = agent.run(&mut session, &model, "task", &mut |_| {}).await.unwrap_err();
    assert_eq!(error, AgentError::MaxIterations { iterations: 2 });

    let answer = agent.run(&mut session, &model, "task", &mut |_| {}).await.expect("state kept across runs");
    assert_eq!(answer.value, json!(2));
    let error = agent.run(&mut session, &model, "task", &mut |_| {}).await.unwrap_err();
    assert_eq!(error, AgentError::Model(ModelError("script exhausted".into())));
    session.close().await;
}

#[tokio::test]
async fn a_stateless_session_forgets_and_plain_text_is_the_answer() {
    let Some(backend) = backend() else { return };
    let config = SessionConfig { stateless: true, ..SessionConfig::default() };
    let (mut session, _) = session(backend, config).await;
    let model = Scripted::new(&[
        "```python\nx = 41\nprint(x)\n```",
        "```python\nprint(x + 1)\n```",
        "The state is gone after each step, so the answer is 42.",
    ]);
    let agent = CodeAgent {
        examples: "Task: add 1 and 2.\n```python\nfinal_answer(1 + 2)\n```".into(),
        ..CodeAgent::default()
    };
    let mut restarts = 0;
    let answer = agent
        .run(&mut session, &model, "task", &mut |event| {
            restarts += usize::from(matches!(event, Event::Restarted { .. }))
        })
        .await
        .expect("a plain-text reply is the answer");
    assert_eq!(answer.value, json!("The state is gone after each step, so the answer is 42."));
    assert_eq!(answer.iterations, 3);
    assert_eq!(restarts, 0, "a fresh interpreter per step is no restart");
    let seen = model.seen.lock().unwrap().clone();
    let system = &seen[0][0].content;
    assert!(system.contains("Each step runs in a fresh interpreter"), "{system}");
    assert!(system.contains("a reply without one is taken as your final answer"), "{system}");
    assert!(
        system.ends_with("Examples of the work:\n\nTask: add 1 and 2.\n```python\nfinal_answer(1 + 2)\n```\n"),
        "{system}"
    );
    assert_eq!(seen[1][3].content, "Output:\n41\n");
    assert!(seen[2][5].content.ends_with("NameError: name 'x' is not defined\n"), "{}", seen[2][5].content);
    session.close().await;
}
