//! End-to-end runs of single constructs under a scripted provider (or the
//! mock HTTP server where the wire matters): concurrency, guardrails,
//! structured output, policies, compaction, usage.

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::{Options, run_source};
use expect_test::expect;
use serde_json::json;
use sr_llm::Role;
use sr_runtime::RunOptions;
use sr_runtime::event::{Payload, RunStatus};
use sr_runtime::scripted::{Reply, ScriptedProvider, after_tool_results, instruction_contains};

#[tokio::test(start_paused = true)]
async fn parallel_branches_run_concurrently_each_with_its_own_input() {
    let source = r#"
model main = openai/gpt-4o
prompt echo: """Repeat the input."""
agent echo:
    instruction echo

flow main:
    parallel do
        $a = run agent echo with "one"
        $b = run agent echo with "two"
        $c = run agent echo with "three"
    end
    return [$a, $b, $c]
"#;
    let provider = ScriptedProvider::new()
        .on(common_user_says("one"), vec![Reply::Text("1".into())])
        .on(common_user_says("two"), vec![Reply::Text("2".into())])
        .on(common_user_says("three"), vec![Reply::Text("3".into())])
        .with_delay(Duration::from_millis(300));
    let started = tokio::time::Instant::now();
    let run = run_source("parallel", source, "go", Arc::new(provider), Options::default()).await;
    assert_eq!(run.outcome.status, RunStatus::Completed, "{:?}", run.outcome.error);
    assert_eq!(run.outcome.result, Some(json!([1, 2, 3])));
    // Three 300 ms model calls on tokio's paused clock: 300 ms together, 900 ms one after another.
    assert_eq!(started.elapsed(), Duration::from_millis(300));
    // All three branches start before any model answers; each branch's events carry its branch.
    expect![[r#"
        - run_started parallel.sr entry=flow main input="go"
        flow:main flow_started main
        flow:main/branch:1/agent:echo agent_started echo model=openai/gpt-4o input="one"
        flow:main/branch:1/agent:echo model_request openai/gpt-4o messages=1 tools=[]
        flow:main/branch:2/agent:echo agent_started echo model=openai/gpt-4o input="two"
        flow:main/branch:2/agent:echo model_request openai/gpt-4o messages=1 tools=[]
        flow:main/branch:3/agent:echo agent_started echo model=openai/gpt-4o input="three"
        flow:main/branch:3/agent:echo model_request openai/gpt-4o messages=1 tools=[]
        flow:main/branch:1/agent:echo text_delta "1"
        flow:main/branch:1/agent:echo model_response openai/gpt-4o stop text="1" calls=[] tokens=10/1
        flow:main/branch:1/agent:echo agent_finished echo output="1" tokens=10/1
        flow:main/branch:1 state_change a = 1
        flow:main/branch:2/agent:echo text_delta "2"
        flow:main/branch:2/agent:echo model_response openai/gpt-4o stop text="2" calls=[] tokens=10/1
        flow:main/branch:2/agent:echo agent_finished echo output="2" tokens=10/1
        flow:main/branch:2 state_change b = 2
        flow:main/branch:3/agent:echo text_delta "3"
        flow:main/branch:3/agent:echo model_response openai/gpt-4o stop text="3" calls=[] tokens=10/1
        flow:main/branch:3/agent:echo agent_finished echo output="3" tokens=10/1
        flow:main/branch:3 state_change c = 3
        flow:main flow_finished main result=[1,2,3]
        - flow_result [1,2,3]
        - run_finished completed result=[1,2,3] tokens=30/3
    "#]]
    .assert_eq(&run.trace());
}

fn common_user_says(text: &str) -> impl Fn(&sr_llm::ChatRequest) -> bool + Send + Sync + 'static {
    sr_runtime::scripted::user_says(text)
}

#[tokio::test]
async fn a_pii_guardrail_masks_an_email_before_the_model_sees_it() {
    let source = r#"
model main = openai/gpt-4o
prompt helper: """You help."""
agent:
    instruction helper

on input do
    mask pii
end
"#;
    let provider = Arc::new(ScriptedProvider::new().always(|_| true, Reply::Text("Noted.".into())));
    let run = run_source(
        "mask",
        source,
        "Write to jane.doe@example.com about the invoice",
        provider.clone(),
        Options::default(),
    )
    .await;
    assert_eq!(run.outcome.status, RunStatus::Completed, "{:?}", run.outcome.error);
    let requests = provider.requests();
    assert_eq!(requests.len(), 1);
    let seen = requests[0].messages.iter().filter(|m| m.role == Role::User).map(|m| m.text()).collect::<Vec<_>>();
    assert_eq!(seen, ["Write to [MASKED_EMAIL_ADDRESS] about the invoice"]);
    // Nor do the events give the address away after the guard.
    let model_inputs = serde_json::to_string(&run.of_type("model_request")).unwrap();
    assert!(!model_inputs.contains("jane.doe"), "{model_inputs}");
}

#[tokio::test]
async fn structured_output_is_asked_natively_and_repaired_until_it_fits() {
    let source = r#"
model main = openai/gpt-4o
schema Finding:
    file: string
    line: int
prompt review expecting Finding: """Find the worst bug."""
agent reviewer:
    instruction review

flow main:
    $finding = run agent reviewer with "src/calc.py"
    return $finding.line
"#;
    let provider = Arc::new(ScriptedProvider::new().on(
        instruction_contains("Find the worst bug"),
        vec![
            Reply::Text("The worst bug is in calc.py".into()),
            Reply::Text("```json\n{\"file\": \"src/calc.py\", \"line\": \"five\"}\n```".into()),
            Reply::Text("{\"file\": \"src/calc.py\", \"line\": 5}".into()),
        ],
    ));
    let run = run_source("structured", source, "go", provider.clone(), Options::default()).await;
    assert_eq!(run.outcome.status, RunStatus::Completed, "{:?}", run.outcome.error);
    assert_eq!(run.outcome.result, Some(json!(5)));
    let requests = provider.requests();
    assert_eq!(requests.len(), 3);
    // The provider's own structured-output mode was asked for the schema.
    let schema = requests[0].response_schema.as_ref().expect("a native schema");
    assert_eq!(schema["required"], json!(["file", "line"]));
    // Each repair told the model what was wrong.
    let repairs: Vec<String> = requests[1..].iter().map(|r| r.messages.last().unwrap().text()).collect();
    assert!(repairs[1].contains("line"), "{repairs:?}");
    // Each reply that does not fit is a warning, then asked again.
    expect![[r#"
        - run_started structured.sr entry=flow main input="go"
        flow:main flow_started main
        flow:main/agent:reviewer agent_started reviewer model=openai/gpt-4o input="src/calc.py"
        flow:main/agent:reviewer model_request openai/gpt-4o messages=1 tools=[]
        flow:main/agent:reviewer text_delta "The worst bug is "
        flow:main/agent:reviewer text_delta "in calc.py"
        flow:main/agent:reviewer model_response openai/gpt-4o stop text="The worst bug is in calc.py" calls=[] tokens=10/7
        flow:main/agent:reviewer agent_finished reviewer output="The worst bug is in calc.py" tokens=10/7
        flow:main warning "agent 'reviewer': the reply does not fit schema 'Finding': the reply contains no JSON value"
        flow:main/agent:reviewer agent_started reviewer model=openai/gpt-4o input="Error: Your response could not be parsed. the reply contains no JSON value\n\nPlease respond with v…
        flow:main/agent:reviewer model_request openai/gpt-4o messages=3 tools=[]
        flow:main/agent:reviewer text_delta "```json\n{\"file\": \"src/calc.py\", \"line\": \"five\"}\n```"
        flow:main/agent:reviewer model_response openai/gpt-4o stop text="```json\n{\"file\": \"src/calc.py\", \"line\": \"five\"}\n```" calls=[] tokens=10/13
        flow:main/agent:reviewer agent_finished reviewer output="```json\n{\"file\": \"src/calc.py\", \"line\": \"five\"}\n```" tokens=10/13
        flow:main warning "agent 'reviewer': the reply does not fit schema 'Finding': at /line: \"five\" is not of type \"inte…
        flow:main/agent:reviewer agent_started reviewer model=openai/gpt-4o input="Error: Your response could not be parsed. at /line: \"five\" is not of type \"integer\"\n\nPlease r…
        flow:main/agent:reviewer model_request openai/gpt-4o messages=5 tools=[]
        flow:main/agent:reviewer text_delta "{\"file\": \"src/calc.py\", \"line\": 5}"
        flow:main/agent:reviewer model_response openai/gpt-4o stop text="{\"file\": \"src/calc.py\", \"line\": 5}" calls=[] tokens=10/9
        flow:main/agent:reviewer agent_finished reviewer output="{\"file\": \"src/calc.py\", \"line\": 5}" tokens=10/9
        flow:main state_change finding = {"file":"src/calc.py","line":5}
        flow:main flow_finished main result=5
        - flow_result 5
        - run_finished completed result=5 tokens=30/29
    "#]]
    .assert_eq(&run.trace());
}

#[tokio::test]
async fn a_structured_output_repair_keeps_the_task_and_the_tool_exchange() {
    let source = r#"
model main = openai/gpt-4o
tool fs = builtin streetrace.fs
schema Finding:
    file: string
    line: int
prompt review expecting Finding: """Find the worst bug."""
agent reviewer:
    instruction review
    tools fs

flow main:
    $finding = run agent reviewer with "look at calc.py"
    return $finding.line
"#;
    let dir = common::work_dir("repair");
    std::fs::write(dir.join("calc.py"), "x = 1 / 0").unwrap();
    let provider = Arc::new(ScriptedProvider::new().on(
        |_| true,
        vec![
            Reply::Calls(vec![("read_file".into(), json!({"path": "calc.py"}))]),
            Reply::Text("Division by zero on line 1".into()),
            Reply::Text("{\"file\": \"calc.py\", \"line\": 1}".into()),
        ],
    ));
    let options = Options { work_dir: dir, ..Options::default() };
    let run = run_source("repair", source, "go", provider.clone(), options).await;
    assert_eq!(run.outcome.status, RunStatus::Completed, "{:?}", run.outcome.error);
    let repair = &provider.requests()[2];
    let roles: Vec<Role> = repair.messages.iter().map(|m| m.role).collect();
    assert_eq!(roles, [Role::User, Role::Assistant, Role::Tool, Role::Assistant, Role::User]);
    let text = serde_json::to_string(&repair.messages).unwrap();
    for part in ["look at calc.py", "read_file", "x = 1 / 0", "Division by zero on line 1"] {
        assert!(text.contains(part), "{part} is missing from the repair: {text}");
    }
    assert!(repair.messages[4].text().contains("Finding") || repair.messages[4].text().contains("schema"), "{text}");
}

#[tokio::test]
async fn structured_output_that_never_fits_fails_clearly() {
    let source = r#"
model main = openai/gpt-4o
schema Finding:
    line: int
prompt review expecting Finding: """Find the worst bug."""
agent reviewer:
    instruction review
"#;
    let provider = Arc::new(ScriptedProvider::new().always(|_| true, Reply::Text("no JSON here".into())));
    let run = run_source("never-fits", source, "go", provider.clone(), Options::default()).await;
    assert_eq!(run.outcome.status, RunStatus::Failed);
    let error = run.outcome.error.unwrap().message;
    assert!(error.contains("did not produce a valid 'Finding' after 2 repairs"), "{error}");
    assert_eq!(provider.calls(), 3);
}

#[tokio::test(start_paused = true)]
async fn a_retry_policy_retries_failed_model_calls_with_its_backoff() {
    let source = r#"
model main = openai/gpt-4o
retry patient = 3 times, exponential backoff
prompt helper: """You help."""
agent:
    instruction helper
    retry patient
"#;
    let provider = Arc::new(ScriptedProvider::new().on(
        |_| true,
        vec![Reply::Error("overloaded".into()), Reply::Error("overloaded".into()), Reply::Text("Done.".into())],
    ));
    let started = tokio::time::Instant::now();
    let run = run_source("retry", source, "go", provider.clone(), Options::default()).await;
    assert_eq!(run.outcome.status, RunStatus::Completed, "{:?}", run.outcome.error);
    assert_eq!(run.outcome.result, Some(json!("Done.")));
    assert_eq!(provider.calls(), 3);
    expect![[r#"
        - run_started retry.sr entry=agent default input="go"
        agent:default agent_started default model=openai/gpt-4o input="go"
        agent:default model_request openai/gpt-4o messages=1 tools=[]
        agent:default warning "model openai/gpt-4o failed (scripted: HTTP 500: overloaded); retry 1 of 3 in 1.0s"
        agent:default warning "model openai/gpt-4o failed (scripted: HTTP 500: overloaded); retry 2 of 3 in 2.0s"
        agent:default text_delta "Done."
        agent:default model_response openai/gpt-4o stop text="Done." calls=[] tokens=10/2
        agent:default agent_finished default output="Done." tokens=10/2
        - run_finished completed result="Done." tokens=10/2
    "#]]
    .assert_eq(&run.trace());
    // Exponential: 1 s, then 2 s (the clock is tokio's paused one).
    assert_eq!(started.elapsed().as_secs(), 3);
}

#[tokio::test(start_paused = true)]
async fn without_a_retry_policy_a_failed_model_call_fails_the_run() {
    let source = r#"
model main = openai/gpt-4o
prompt helper: """You help."""
agent:
    instruction helper
"#;
    let provider = Arc::new(ScriptedProvider::new().always(|_| true, Reply::Error("overloaded".into())));
    let run = run_source("no-retry", source, "go", provider.clone(), Options::default()).await;
    assert_eq!(run.outcome.status, RunStatus::Failed);
    assert_eq!(provider.calls(), 1);
}

#[tokio::test(start_paused = true)]
async fn a_timeout_policy_bounds_each_agent_run_and_the_retry_policy_restarts_it() {
    let source = common::TIMED_OUT_AND_RETRIED;
    let provider = Arc::new(
        ScriptedProvider::new().always(|_| true, Reply::Text("late".into())).with_delay(Duration::from_secs(60)),
    );
    let run = run_source("timeout", source, "go", provider.clone(), Options::default()).await;
    assert_eq!(run.outcome.status, RunStatus::Completed, "{:?}", run.outcome.error);
    assert_eq!(run.outcome.result, Some(json!("gave up")));
    assert_eq!(provider.calls(), 2);
    // The timed-out run still ends (every agent start has its finish), then is retried.
    expect![[r#"
        - run_started timeout.sr entry=flow main input="go"
        flow:main flow_started main
        flow:main/agent:slow agent_started slow model=openai/gpt-4o input="go"
        flow:main/agent:slow model_request openai/gpt-4o messages=1 tools=[]
        flow:main/agent:slow warning "agent 'slow' failed (timed out); retry 1 of 1 in 1.0s"
        flow:main/agent:slow model_request openai/gpt-4o messages=1 tools=[]
        flow:main/agent:slow agent_finished slow output=null error="agent 'slow' did not finish within 5s, its timeout"
        flow:main flow_finished main result="gave up"
        - flow_result "gave up"
        - run_finished completed result="gave up"
    "#]]
    .assert_eq(&run.trace());
}

#[tokio::test]
async fn a_compaction_policy_summarizes_a_long_conversation() {
    let source = r#"
model main = openai/gpt-4o
policy compaction:
    trigger: tokens > 150.0
    strategy: summarize
    preserve: [last 2 messages]
tool fs = builtin streetrace.fs
prompt helper: """You read files."""
agent:
    instruction helper
    tools fs
"#;
    let dir = common::work_dir("compaction");
    std::fs::write(dir.join("notes.txt"), "x".repeat(400)).unwrap();
    let read = || Reply::Calls(vec![("read_file".into(), json!({"path": "notes.txt"}))]);
    let provider = Arc::new(
        ScriptedProvider::new()
            .on(
                |r| r.system.as_deref().is_some_and(|s| s.starts_with("Summarize")),
                vec![Reply::Text("SUMMARY: read notes.txt twice".into())],
            )
            .on(after_tool_results(), vec![read(), Reply::Text("All read.".into())])
            .on(|_| true, vec![read()]),
    );
    let run = run_source(
        "compaction",
        source,
        "read the notes",
        provider.clone(),
        Options { work_dir: dir, ..Default::default() },
    )
    .await;
    assert_eq!(run.outcome.status, RunStatus::Completed, "{:?}", run.outcome.error);
    // One compaction, before the third model request: two messages summarized, fewer tokens.
    expect![[r#"
        - run_started compaction.sr entry=agent default input="read the notes"
        agent:default agent_started default model=openai/gpt-4o input="read the notes"
        agent:default model_request openai/gpt-4o messages=1 tools=[read_file,create_directory,write_file,append_to_file,list_directory,find_in_files]
        agent:default model_response openai/gpt-4o tool_calls text="" calls=[read_file] tokens=10/5
        agent:default tool_call read_file {"path":"notes.txt"}
        agent:default tool_result read_file {"tool_name":"read_file","result":"success","output":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx…
        agent:default model_request openai/gpt-4o messages=3 tools=[read_file,create_directory,write_file,append_to_file,list_directory,find_in_files]
        agent:default model_response openai/gpt-4o tool_calls text="" calls=[read_file] tokens=10/5
        agent:default tool_call read_file {"path":"notes.txt"}
        agent:default tool_result read_file {"tool_name":"read_file","result":"success","output":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx…
        agent:default model_request openai/gpt-4o messages=1 tools=[]
        agent:default text_delta "SUMMARY: read notes.txt twice"
        agent:default model_response openai/gpt-4o stop text="SUMMARY: read notes.txt twice" calls=[] tokens=10/8
        agent:default history_compaction summarize tokens=266->153 removed=2
        agent:default model_request openai/gpt-4o messages=4 tools=[read_file,create_directory,write_file,append_to_file,list_directory,find_in_files]
        agent:default text_delta "All read."
        agent:default model_response openai/gpt-4o stop text="All read." calls=[] tokens=10/3
        agent:default agent_finished default output="All read." tokens=40/21
        - run_finished completed result="All read." tokens=40/21
    "#]]
    .assert_eq(&run.trace());
    // The last request: the task, the summary, then the last two messages.
    let last = provider.requests().pop().unwrap();
    let texts: Vec<String> = last.messages.iter().map(|m| m.text()).collect();
    assert_eq!(texts[0], "read the notes");
    assert!(texts[1].contains("SUMMARY: read notes.txt twice"), "{texts:?}");
    assert_eq!(last.messages.len(), 4);
}

#[tokio::test]
async fn compaction_keeps_the_variables_it_is_told_to_preserve() {
    let source = r#"
model main = openai/gpt-4o
policy compaction:
    trigger: messages > 3.0
    strategy: truncate
    preserve: [last 2 messages, $goal, "plan", "missing"]
tool fs = builtin streetrace.fs
prompt helper: """You read files."""
agent reader:
    instruction helper
    tools fs

flow main:
    $goal = "ship it"
    $plan = ["step one", "step two"]
    $answer = run agent reader with $input_prompt
    return $answer
"#;
    let dir = common::work_dir("preserve");
    std::fs::write(dir.join("notes.txt"), "notes").unwrap();
    let read = || Reply::Calls(vec![("read_file".into(), json!({"path": "notes.txt"}))]);
    let provider = Arc::new(
        ScriptedProvider::new()
            .on(after_tool_results(), vec![read(), read(), Reply::Text("All read.".into())])
            .on(|_| true, vec![read()]),
    );
    let options = Options { work_dir: dir, ..Default::default() };
    let run = run_source("preserve", source, "read the notes", provider.clone(), options).await;
    assert_eq!(run.outcome.status, RunStatus::Completed, "{:?}", run.outcome.error);
    assert!(!run.of_type("history_compaction").is_empty());
    // The last request: the task, the note with the preserved variables, the last two messages.
    let last = provider.requests().pop().unwrap();
    let texts: Vec<String> = last.messages.iter().map(|m| m.text()).collect();
    assert_eq!(last.messages.len(), 4, "{texts:?}");
    let note = &texts[1];
    assert!(note.contains("earlier messages were removed"), "{note}");
    assert!(note.contains("$goal = ship it") && note.contains("$plan = "), "{note}");
    assert!(note.contains("step two") && !note.contains("$missing"), "{note}");
}

#[tokio::test]
async fn usage_is_totalled_per_agent_and_per_run_with_costs_from_a_price_table() {
    let source = r#"
model main = openai/gpt-4o
prompt helper: """You help."""
agent helper:
    instruction helper

flow main:
    $a = run agent helper with "one"
    $b = run agent helper with "two"
    return $b
"#;
    let prices: sr_llm::PriceTable =
        serde_json::from_value(json!({"openai/gpt-4o": {"input": 2.5, "output": 10.0}})).unwrap();
    let provider = Arc::new(ScriptedProvider::new().always(|_| true, Reply::Text("ok ok ok ok".into())));
    let options = RunOptions { prices: Some(Arc::new(prices)), ..RunOptions::default() };
    let run = run_source("usage", source, "go", provider, Options { options, ..Default::default() }).await;
    assert_eq!(run.outcome.status, RunStatus::Completed, "{:?}", run.outcome.error);
    // The scripted model reports 10 tokens in and 3 out per call: each agent's total, then
    // the run's, priced at $2.5 and $10 per million tokens in and out.
    expect![[r#"
        - run_started usage.sr entry=flow main input="go"
        flow:main flow_started main
        flow:main/agent:helper agent_started helper model=openai/gpt-4o input="one"
        flow:main/agent:helper model_request openai/gpt-4o messages=1 tools=[]
        flow:main/agent:helper text_delta "ok ok ok ok"
        flow:main/agent:helper model_response openai/gpt-4o stop text="ok ok ok ok" calls=[] tokens=10/3 cost=0.000055
        flow:main/agent:helper agent_finished helper output="ok ok ok ok" tokens=10/3 cost=0.000055
        flow:main state_change a = "ok ok ok ok"
        flow:main/agent:helper agent_started helper model=openai/gpt-4o input="two"
        flow:main/agent:helper model_request openai/gpt-4o messages=1 tools=[]
        flow:main/agent:helper text_delta "ok ok ok ok"
        flow:main/agent:helper model_response openai/gpt-4o stop text="ok ok ok ok" calls=[] tokens=10/3 cost=0.000055
        flow:main/agent:helper agent_finished helper output="ok ok ok ok" tokens=10/3 cost=0.000055
        flow:main state_change b = "ok ok ok ok"
        flow:main flow_finished main result="ok ok ok ok"
        - flow_result "ok ok ok ok"
        - run_finished completed result="ok ok ok ok" tokens=20/6 cost=0.000110
    "#]]
    .assert_eq(&run.trace());
    let Some(Payload::RunFinished { usage, .. }) = run.payloads().last().copied() else { panic!() };
    let cost = usage.cost_usd.unwrap();
    assert!((cost - (20.0 * 2.5 + 6.0 * 10.0) / 1e6).abs() < 1e-12, "{cost}");
}

#[tokio::test]
async fn a_run_can_start_at_another_flow_than_the_entry_point() {
    let source = r#"
flow main:
    return "main"

flow other:
    return "other"
"#;
    let provider = Arc::new(ScriptedProvider::new());
    let start = |entry: &str| Options {
        options: RunOptions { entry: Some(entry.to_string()), ..RunOptions::default() },
        ..Default::default()
    };
    let run = run_source("entry", source, "go", provider.clone(), start("other")).await;
    assert_eq!(run.outcome.result, Some(json!("other")));
    let run = run_source("entry", source, "go", provider, start("missing")).await;
    assert_eq!(run.outcome.status, RunStatus::Failed);
    assert_eq!(run.outcome.error.unwrap().message, "there is no flow, agent or prompt named 'missing' to start");
}

/// `sr try`: a prompt as the entry is one `call llm` of it, rendered with
/// the variables the run starts with, composed prompts included; no flow runs.
#[tokio::test]
async fn a_run_can_start_at_a_prompt_with_variables_given() {
    let source = r#"
model main = openai/gpt-4o
prompt tone: """Be ${mood}."""
prompt ask: """${tone} Explain ${topic.name}."""
flow main:
    $topic = {name: "never used"}
    $mood = "never used"
    $r = call llm ask
    return $r
"#;
    let provider = Arc::new(ScriptedProvider::new().always(|_| true, Reply::Text("Rust is safe.".into())));
    let vars = [("topic".to_string(), json!({"name": "rust"})), ("mood".to_string(), json!("brief"))];
    let options = Options {
        options: RunOptions { entry: Some("ask".into()), vars: vars.into_iter().collect(), ..RunOptions::default() },
        ..Default::default()
    };
    let run = run_source("try", source, "", provider.clone(), options).await;
    assert_eq!(run.outcome.result, Some(json!("Rust is safe.")));
    let requests = provider.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(format!("{:?}", requests[0].messages[0].text()), r#""Be brief. Explain rust.""#);
    expect![[r#"
        - run_started try.sr entry=prompt ask input=""
        - llm_call ask model=openai/gpt-4o
        - model_request openai/gpt-4o messages=1 tools=[]
        - text_delta "Rust is safe."
        - model_response openai/gpt-4o stop text="Rust is safe." calls=[] tokens=10/4
        - llm_response ask final "Rust is safe."
        - run_finished completed result="Rust is safe." tokens=10/4
    "#]]
    .assert_eq(&run.trace());
}

#[tokio::test(start_paused = true)]
async fn a_failing_branch_fails_the_parallel_block_and_cancels_the_others() {
    let source = common::FAILING_BRANCH;
    let slow = ScriptedProvider::new().always(common_user_says("slow"), Reply::Text("late".into()));
    let provider = Arc::new(common::FailFast { slow: slow.with_delay(Duration::from_secs(3600)) });
    let started = tokio::time::Instant::now();
    let run = run_source("parallel-fail", source, "go", provider, Options::default()).await;
    assert_eq!(run.outcome.status, RunStatus::Failed);
    let error = run.outcome.error.clone().unwrap().message;
    assert!(error.contains("model openai/gpt-4o") && error.contains("broken model"), "{error}");
    // The slow branch was cancelled at once (the clock is tokio's paused one), not waited for.
    assert_eq!(started.elapsed(), Duration::ZERO);
    // Every agent that started finished, the cancelled one as such.
    expect![[r#"
        - run_started parallel-fail.sr entry=flow main input="go"
        flow:main flow_started main
        flow:main/branch:1/agent:echo agent_started echo model=openai/gpt-4o input="slow"
        flow:main/branch:1/agent:echo model_request openai/gpt-4o messages=1 tools=[]
        flow:main/branch:2/agent:echo agent_started echo model=openai/gpt-4o input="broken"
        flow:main/branch:2/agent:echo model_request openai/gpt-4o messages=1 tools=[]
        flow:main/branch:2/agent:echo agent_finished echo output=null error="model openai/gpt-4o: test: HTTP 400: broken model"
        flow:main/branch:1/agent:echo agent_finished echo output=null error="cancelled"
        flow:main flow_finished main result=null error="model openai/gpt-4o: test: HTTP 400: broken model (parallel-fail.sr:10:9)"
        - error "model openai/gpt-4o: test: HTTP 400: broken model" at parallel-fail.sr:10:9
        - run_finished failed error="model openai/gpt-4o: test: HTTP 400: broken model (parallel-fail.sr:10:9)"
    "#]]
    .assert_eq(&run.trace());
}
