//! What the runtime costs per agent turn and per flow step:
//! `cargo bench -p sr-runtime --bench orchestration`.
//!
//! Three workloads (`agent_turn`: one model turn; `tool_turn`: the model asks
//! for `read_file`, then answers; `flow_100_runs`: a flow of 100 sequential
//! `run agent` steps), each run end to end by `Runtime::run` with events going
//! to a sink, under four set-ups:
//! - `scripted`: the in-process `ScriptedProvider`; the time is the runtime's own;
//! - `mock_http`: the real client (router, OpenAI wire protocol, SSE parsing)
//!   against sr-llm's mock server on loopback, replying without delay;
//! - `bare_http`: the very requests `mock_http` sends, through the same client
//!   and server, without the runtime. `mock_http - bare_http` is the runtime's
//!   overhead with a real client: the model's own time is zero on both sides;
//! - `as_sr_run`: the scripted provider launched as `sr run` launches a live
//!   run (`sr_runtime::launch`): events stored in a SQLite session on disk,
//!   exchanges and tool results journaled and mirrored to a recording.
#![allow(clippy::unwrap_used)]

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use divan::Bencher;
use divan::counter::ItemsCount;
use serde_json::json;
use sr_hir::RootDatabase;
use sr_llm::mock::{MockReply, MockServer};
use sr_llm::{ChatRequest, ChatResponse, ChatStream, HttpClient, HttpOptions, Provider, Router};
use sr_runtime::compile::{Compiled, compile_path};
use sr_runtime::event::{Emitter, Event, RunStatus};
use sr_runtime::hook::NoHook;
use sr_runtime::human::Unattended;
use sr_runtime::journal::Journal;
use sr_runtime::launch::{LaunchSpec, Models, Storage, launch};
use sr_runtime::mcp::McpHub;
use sr_runtime::scripted::{Reply, ScriptedProvider, after_tool_results};
use sr_runtime::tools::Jail;
use sr_runtime::{Env, RunOptions, RunOutcome, Runtime};

fn main() {
    divan::main();
}

const CASES: [&str; 3] = ["agent_turn", "tool_turn", "flow_100_runs"];

/// A reply of typical length, streamed in deltas of four words.
const ANSWER: &str = "The file lists three open questions about the release: who signs off on the \
                      changelog, whether the migration runs before or after the deploy, and which \
                      dashboards the on-call engineer should watch during the first hour.";

/// `run agent` steps of the flow case.
const STEPS: usize = 100;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    AgentTurn,
    ToolTurn,
    Flow,
}

struct Case {
    kind: Kind,
    program: Arc<Compiled>,
    /// The work directory file tools are jailed to.
    dir: PathBuf,
    input: &'static str,
}

impl Case {
    fn new(name: &str) -> Case {
        let dir = std::env::temp_dir().join(format!("sr-bench-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("notes.txt"), "Open questions: changelog sign-off, migration order, dashboards.\n")
            .unwrap();
        let (kind, source) = match name {
            "agent_turn" => (Kind::AgentTurn, AGENT.to_string()),
            "tool_turn" => (Kind::ToolTurn, TOOL_AGENT.to_string()),
            _ => (Kind::Flow, flow_source(STEPS)),
        };
        let path = dir.join(format!("{name}.sr"));
        std::fs::write(&path, source).unwrap();
        let program = compile_path(&mut RootDatabase::default(), &path).unwrap_or_else(|e| panic!("{e:?}"));
        Case { kind, program, dir, input: "What does notes.txt say is still open?" }
    }

    /// Model calls one run makes.
    fn calls(&self) -> usize {
        match self.kind {
            Kind::AgentTurn => 1,
            Kind::ToolTurn => 2,
            Kind::Flow => STEPS,
        }
    }

    /// Turns or flow steps per run, so that divan also shows their rate.
    fn counter(&self) -> ItemsCount {
        ItemsCount::new(if self.kind == Kind::Flow { STEPS } else { 1 })
    }

    /// Answers every request of the workload, forever.
    fn script(&self) -> ScriptedProvider {
        let answer = Reply::Text(ANSWER.into());
        match self.kind {
            Kind::ToolTurn => ScriptedProvider::new()
                .always(after_tool_results(), answer)
                .always(|_| true, Reply::Calls(vec![("read_file".into(), json!({"path": "notes.txt"}))])),
            _ => ScriptedProvider::new().always(|_| true, answer),
        }
    }

    /// The mock server's replies for one run, in order.
    fn replies(&self) -> Vec<MockReply> {
        let answer = MockReply::chunks(deltas(ANSWER)).usage(120, 40);
        match self.kind {
            Kind::ToolTurn => {
                vec![MockReply::tool_call("call_1", "read_file", json!({"path": "notes.txt"})).usage(100, 12), answer]
            }
            _ => vec![answer; self.calls()],
        }
    }

    fn push_replies(&self, server: &MockServer) {
        self.replies().into_iter().for_each(|reply| server.push(reply));
    }

    fn env(&self, provider: Arc<dyn Provider>, journal: Arc<Journal>) -> Env {
        Env {
            provider,
            hook: Arc::new(NoHook),
            jail: Jail::new(&self.dir).unwrap(),
            mcp: Arc::new(McpHub::default()),
            journal,
            human: Arc::new(Unattended),
            options: RunOptions::default(),
        }
    }

    fn runtime(&self, provider: Arc<dyn Provider>) -> Runtime {
        Runtime::new(self.program.clone(), self.env(provider, Arc::new(Journal::unrecorded())))
    }
}

const AGENT: &str = r#"model main = openai/gpt-4o-mini
prompt assistant: """You are a helpful assistant. Answer briefly."""
agent:
    instruction assistant
"#;

const TOOL_AGENT: &str = r#"model main = openai/gpt-4o-mini
tool fs = builtin streetrace.fs
prompt assistant: """You answer questions about the files in the work directory."""
agent:
    instruction assistant
    tools fs
"#;

/// A flow that passes a draft through `steps` agent runs.
fn flow_source(steps: usize) -> String {
    let mut source = String::from(
        "model main = openai/gpt-4o-mini\n\
         prompt improve: \"\"\"You improve the draft you are given.\"\"\"\n\
         agent improver:\n    instruction improve\n\
         flow main:\n    $draft = $input_prompt\n",
    );
    source.push_str(&"    $draft = run agent improver with $draft\n".repeat(steps));
    source.push_str("    return $draft\n");
    source
}

fn deltas(text: &str) -> Vec<String> {
    let words: Vec<&str> = text.split_inclusive(' ').collect();
    words.chunks(4).map(|chunk| chunk.concat()).collect()
}

/// A single-threaded scheduler: the runtime does the same work on either, and
/// on a two-core machine the multi-threaded one (`sr run`'s) adds cross-thread
/// wake-ups worth ±100 µs to every loopback round trip, more than the
/// overhead measured here.
fn tokio() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap()
}

/// One run with events to a sink that drops them; fails loudly unless it completed.
async fn run(runtime: &Runtime, input: &str) -> RunOutcome {
    let emitter = Emitter::new("bench", vec![Arc::new(|_: &Event| {})]);
    let outcome = runtime.run(emitter, input.to_string(), Vec::new()).await;
    assert_eq!(outcome.status, RunStatus::Completed, "{:?}", outcome.error);
    outcome
}

/// The real client, pointed at a mock server.
fn router(server: &MockServer) -> Arc<dyn Provider> {
    Arc::new(Router::from_vars(HttpClient::new(HttpOptions::default()).unwrap(), server.vars()))
}

#[divan::bench(args = CASES)]
fn scripted(bencher: Bencher, name: &str) {
    let case = Case::new(name);
    let script = Arc::new(case.script());
    let runtime = case.runtime(script.clone());
    let rt = tokio();
    rt.block_on(run(&runtime, case.input));
    assert_eq!(script.calls(), case.calls() as u64);
    bencher.counter(case.counter()).bench_local(|| rt.block_on(run(&runtime, case.input)));
}

#[divan::bench(args = CASES)]
fn mock_http(bencher: Bencher, name: &str) {
    let case = Case::new(name);
    let rt = tokio();
    let server = rt.block_on(MockServer::start());
    let runtime = case.runtime(router(&server));
    rt.block_on(async {
        case.push_replies(&server);
        run(&runtime, case.input).await;
    });
    assert_eq!((server.requests().len(), server.remaining()), (case.calls(), 0));
    bencher
        .counter(case.counter())
        .with_inputs(|| case.push_replies(&server))
        .bench_local_values(|()| rt.block_on(run(&runtime, case.input)));
}

/// Keeps the requests a provider is sent, to send them again without the runtime.
struct Capture {
    inner: Arc<dyn Provider>,
    requests: Mutex<Vec<ChatRequest>>,
}

impl Provider for Capture {
    fn chat(&self, request: ChatRequest) -> ChatStream {
        self.requests.lock().unwrap().push(request.clone());
        self.inner.chat(request)
    }
}

#[divan::bench(args = CASES)]
fn bare_http(bencher: Bencher, name: &str) {
    let case = Case::new(name);
    let rt = tokio();
    let server = rt.block_on(MockServer::start());
    let client = router(&server);
    let capture = Arc::new(Capture { inner: client.clone(), requests: Mutex::new(Vec::new()) });
    let runtime = case.runtime(capture.clone());
    rt.block_on(async {
        case.push_replies(&server);
        run(&runtime, case.input).await;
    });
    let requests = capture.requests.lock().unwrap().clone();
    assert_eq!(requests.len(), case.calls());
    bencher.counter(case.counter()).with_inputs(|| case.push_replies(&server)).bench_local_values(|()| {
        rt.block_on(async {
            for request in &requests {
                ChatResponse::collect(client.chat(request.clone())).await.unwrap();
            }
        })
    });
}

#[divan::bench(args = CASES)]
fn as_sr_run(bencher: Bencher, name: &str) {
    let case = Case::new(name);
    let provider: Arc<dyn Provider> = Arc::new(case.script());
    let rt = tokio();
    // A new session per run, as `sr run` without `--session`, launched as
    // `sr run` launches: its journal in the state directory, mirrored to a
    // recording.
    let spec = || LaunchSpec {
        program: case.program.clone(),
        message: case.input.to_string(),
        work_dir: case.dir.clone(),
        read_only: false,
        storage: Some(Storage::resolve(Some(&case.dir.join("state")), None, &case.dir).unwrap()),
        models: Models::Provider { provider: provider.clone(), record: Some(case.dir.join("journal.jsonl")) },
        options: RunOptions::default(),
        human: Arc::new(Unattended),
        in_doubt: sr_runtime::in_doubt::skip_all(),
    };
    let run = |spec: LaunchSpec| {
        rt.block_on(async {
            let finished = launch(spec).unwrap().run(Arc::new(NoHook), Vec::new()).await.unwrap();
            assert_eq!(finished.status, Some(RunStatus::Completed), "{:?}", finished.error);
        })
    };
    run(spec());
    bencher.counter(case.counter()).with_inputs(spec).bench_local_values(run);
}
