//! Running workloads under a scripted provider and collecting their events.
#![allow(clippy::unwrap_used)]
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use sr_hir::RootDatabase;
use sr_llm::Provider;
use sr_runtime::event::{Emitter, Event, Payload};
use sr_runtime::hook::{NoHook, StepHook};
use sr_runtime::human::{Human, Unattended};
use sr_runtime::journal::{Journal, Meta, Mode, Recorded, Workspace};
use sr_runtime::mcp::McpHub;
use sr_runtime::tools::Jail;
use sr_runtime::{Env, RunOptions, RunOutcome, Runtime};

pub fn example(path: &str) -> PathBuf {
    sr_testing::upstream_corpus().join("files/agents/examples").join(path)
}

/// A fresh work directory for file tools, unique to the call.
pub fn work_dir(name: &str) -> PathBuf {
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("sr-runtime-{name}-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

pub struct Run {
    pub outcome: RunOutcome,
    pub events: Vec<Event>,
}

impl Run {
    pub fn payloads(&self) -> Vec<&Payload> {
        self.events.iter().map(|e| &e.payload).collect()
    }

    /// The events as a text trace, for `expect!` snapshots.
    pub fn trace(&self) -> String {
        sr_runtime::trace::trace(&self.events)
    }

    /// Events whose type (upstream's spelling) is `kind`.
    pub fn of_type(&self, kind: &str) -> Vec<&Event> {
        self.events.iter().filter(|e| serde_json::to_value(e).unwrap()["type"] == kind).collect()
    }
}

pub struct Options {
    pub hook: Arc<dyn StepHook>,
    pub human: Arc<dyn Human>,
    pub work_dir: PathBuf,
    pub options: RunOptions,
    /// Paths file tools must not reach (the runtime's state).
    pub forbidden: Vec<PathBuf>,
    /// The session's conversation before this run.
    pub history: Vec<sr_llm::Message>,
    /// What the run records to or is served from (nothing, by default).
    pub journal: Arc<Journal>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            hook: Arc::new(NoHook),
            human: Arc::new(Unattended),
            work_dir: work_dir("default"),
            options: RunOptions::default(),
            forbidden: Vec::new(),
            history: Vec::new(),
            journal: Arc::new(Journal::unrecorded()),
        }
    }
}

pub async fn run_file(path: &Path, input: &str, provider: Arc<dyn Provider>, options: Options) -> Run {
    let mut db = RootDatabase::default();
    let program = match sr_runtime::compile::compile_path(&mut db, path) {
        Ok(program) => program,
        Err(e) => panic!("{} does not compile: {:#?}", path.display(), e.diagnostics),
    };
    let env = Env {
        provider,
        hook: options.hook,
        jail: options.forbidden.iter().fold(Jail::new(&options.work_dir).unwrap(), |jail, path| jail.forbid(path)),
        mcp: Arc::new(McpHub::default()),
        journal: options.journal,
        human: options.human,
        options: options.options,
    };
    let events = Arc::new(Mutex::new(Vec::new()));
    let sink = events.clone();
    let emitter =
        Emitter::new("test-invocation", vec![Arc::new(move |e: &Event| sink.lock().unwrap().push(e.clone()))]);
    let runtime = Runtime::new(program, env);
    let outcome = runtime.run(emitter, input.to_string(), options.history).await;
    let events = events.lock().unwrap().clone();
    Run { outcome, events }
}

pub async fn run_source(name: &str, source: &str, input: &str, provider: Arc<dyn Provider>, options: Options) -> Run {
    let dir = work_dir(&format!("src-{name}"));
    let path = dir.join(format!("{name}.sr"));
    std::fs::write(&path, source).unwrap();
    run_file(&path, input, provider, options).await
}

/// Whether bubblewrap can run here, for tests of `what`; required in CI, a
/// loud skip elsewhere.
#[allow(dead_code)]
pub fn bubblewrap_or_skip(what: &str) -> bool {
    sr_testing::required(sr_sandbox::Bubblewrap::available(), &format!("bubblewrap (bwrap, prlimit) for {what}"))
}

/// Runs the agent in `source`, whose model makes `calls` (one per turn), then
/// stops; the tool results in order. `limit` bounds the whole run.
#[allow(dead_code)]
pub async fn tool_results(
    name: &str,
    source: &str,
    calls: Vec<(String, serde_json::Value)>,
    options: Options,
    limit: std::time::Duration,
) -> Vec<serde_json::Value> {
    use sr_runtime::event::RunStatus;
    use sr_runtime::scripted::{Reply, ScriptedProvider, after_tool_results};
    let mut replies: Vec<Reply> = calls.into_iter().map(|(tool, args)| Reply::Calls(vec![(tool, args)])).collect();
    replies.push(Reply::Text("done".into()));
    let first = replies.remove(0);
    let provider = Arc::new(ScriptedProvider::new().on(after_tool_results(), replies).on(|_| true, vec![first]));
    let run = tokio::time::timeout(limit, run_source(name, source, "go", provider, options))
        .await
        .expect("a tool call blocked the run");
    assert_eq!(run.outcome.status, RunStatus::Completed, "{:?}", run.outcome.error);
    run.events
        .iter()
        .filter_map(|e| match &e.payload {
            Payload::ToolResult { result, .. } => Some(result.clone()),
            _ => None,
        })
        .collect()
}

/// Runs the file at `path` in `dir` with no model, its tool calls going
/// through `journal` (recording, replaying or resuming).
pub async fn run_with_journal(path: &Path, dir: &Path, journal: Arc<Journal>) -> RunOutcome {
    let mut db = RootDatabase::default();
    let program = sr_runtime::compile::compile_path(&mut db, path).unwrap();
    let env = Env {
        provider: Arc::new(sr_runtime::scripted::ScriptedProvider::new()),
        hook: Arc::new(NoHook),
        jail: Jail::new(dir).unwrap(),
        mcp: Arc::new(McpHub::default()),
        journal,
        human: Arc::new(Unattended),
        options: RunOptions::default(),
    };
    let emitter = Emitter::new("inv", vec![Arc::new(|_: &Event| {})]);
    Runtime::new(program, env).run(emitter, "go".to_string(), Vec::new()).await
}

/// A live run's journal, recorded to a new file at `path`, its files those of `dir`.
pub fn recording(path: &Path, dir: &Path) -> Arc<Journal> {
    let cassette = Arc::new(sr_llm::Cassette::create(path).unwrap());
    let workspace = Workspace::new(Jail::new(dir).unwrap());
    Arc::new(Journal::recording(cassette, &Meta::new("test.sr", "go"), Some(workspace)).unwrap())
}

/// A provider for runs that must make no live model call.
pub struct Offline;

impl Provider for Offline {
    fn chat(&self, request: sr_llm::ChatRequest) -> sr_llm::ChatStream {
        panic!("a served run asked the model: {request:?}")
    }
}

/// A journal that serves `text` in `mode`; new entries (a resumed run's) go
/// to `to`, which starts as a copy of `text`.
pub fn serving(mode: Mode, text: &str, dir: &Path, to: Option<&Path>) -> Arc<Journal> {
    let cassette = to.map(|path| {
        std::fs::write(path, text).unwrap();
        Arc::new(sr_llm::Cassette::append_to(path).unwrap())
    });
    let workspace = Workspace::new(Jail::new(dir).unwrap());
    Arc::new(Journal::new(mode, Recorded::parse(text).unwrap(), cassette, Some(workspace)))
}

/// An agent with a 5 s timeout and one retry, run by a flow that returns
/// "gave up" when it fails.
#[allow(dead_code)]
pub const TIMED_OUT_AND_RETRIED: &str = r#"
model main = openai/gpt-4o
retry twice = 1 times, fixed backoff
timeout short = 5 seconds
prompt helper: """You help."""
agent slow:
    instruction helper
    retry twice
    timeout short

flow main:
    $answer = run agent slow with "go"
    on failure:
        return "gave up"
    return $answer
"#;

/// Two parallel branches: "slow" and "broken" (see [`FailFast`]).
#[allow(dead_code)]
pub const FAILING_BRANCH: &str = r#"
model main = openai/gpt-4o
prompt echo: """Repeat the input."""
agent echo:
    instruction echo

flow main:
    parallel do
        $a = run agent echo with "slow"
        $b = run agent echo with "broken"
    end
    return $a
"#;

/// Fails at once for "broken" (a client error: no retry); the slow script
/// answers everything else.
#[allow(dead_code)]
pub struct FailFast {
    pub slow: sr_runtime::scripted::ScriptedProvider,
}

impl Provider for FailFast {
    fn chat(&self, request: sr_llm::ChatRequest) -> sr_llm::ChatStream {
        use futures::StreamExt;
        if sr_runtime::scripted::user_says("broken")(&request) {
            let error = sr_llm::LlmError::Api {
                provider: "test".into(),
                status: Some(400),
                code: None,
                message: "broken model".into(),
                retry_after_ms: None,
            };
            return futures::stream::once(async move { Err(error) }).boxed();
        }
        self.slow.chat(request)
    }
}
