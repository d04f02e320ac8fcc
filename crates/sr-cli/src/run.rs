//! `sr run`: runs a workload against real providers (or a recording), streaming
//! a live transcript or JSON lines, in a session stored in SQLite.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use futures::StreamExt;
use sr_hir::RootDatabase;
use sr_llm::{Cassette, HttpClient, HttpOptions, Provider, Recorder, Redactor, Replayer, Router};
use sr_runtime::event::{Event, EventSink, Payload, RunStatus};
use sr_runtime::hook::NoHook;
use sr_runtime::human::{Answers, Human};
use sr_runtime::lease::Lease;
use sr_runtime::mcp::{McpHub, McpOptions};
use sr_runtime::record::{LiveTools, ReplayedTools, Resumed, ResumedTools, ToolGate, meta_entry, recorded_invocation};
use sr_runtime::session::SessionStore;
use sr_runtime::state::StateDir;
use sr_runtime::tools::Jail;
use sr_runtime::workload::{ProgramWorkload, SessionRef, Workload, discover, load};
use sr_runtime::{Env, RunOptions};

use crate::transcript::{Terminal, TerminalHuman};

#[derive(clap::Args)]
pub struct Args {
    /// A `.sr` or YAML file, or a workload name found in ./agents,
    /// ./.streetrace/agents, ~/.streetrace/agents or $STREETRACE_AGENT_PATHS.
    workload: String,
    /// The message (also: words after the workload).
    #[arg(long, short)]
    prompt: Option<String>,
    /// More words of the message.
    words: Vec<String>,
    /// Model for agents whose prompts name none and when there is no model `main`.
    #[arg(long)]
    model: Option<String>,
    /// Use this model for every call (local models, tests).
    #[arg(long)]
    override_model: Option<String>,
    /// How to show events.
    #[arg(long, value_enum, default_value_t = EventsFormat::Text)]
    events: EventsFormat,
    /// Continue this session (default: a new one).
    #[arg(long)]
    session: Option<String>,
    /// Continue the last run of this session: one paused by `escalate to human`
    /// (answer it with --input) or one whose process died. Model calls and tool
    /// calls it completed are served from its journal, never made again.
    #[arg(long, value_name = "SESSION_ID")]
    resume: Option<String>,
    /// The answer given to a run paused for a human.
    #[arg(long, requires = "resume")]
    input: Option<String>,
    /// Also record every model exchange and tool result to this file (the run's
    /// journal is kept either way).
    #[arg(long, conflicts_with = "replay")]
    record: Option<PathBuf>,
    /// Serve model exchanges and tool results from this recording (offline).
    #[arg(long)]
    replay: Option<PathBuf>,
    /// Directory file tools work in (default: the current directory).
    #[arg(long)]
    work_dir: Option<PathBuf>,
    /// Where the runtime keeps sessions, journals and run locks (default:
    /// $STREETRACE_STATE_DIR, else $XDG_STATE_HOME/streetrace/PROJECT, else
    /// ~/.local/state/streetrace/PROJECT, where PROJECT names the work directory).
    /// File tools never reach it.
    #[arg(long, value_name = "DIR")]
    state_dir: Option<PathBuf>,
    /// The sessions database (default: STATE_DIR/sessions.db); journals and
    /// locks go next to it.
    #[arg(long, value_name = "FILE")]
    sessions: Option<PathBuf>,
    /// Start at this flow or agent instead of the entry point.
    #[arg(long, value_name = "NAME")]
    entry: Option<String>,
    /// Print the workload's entry point, flows and agents, and run nothing.
    #[arg(long)]
    list_agents: bool,
    /// Let cli tools declared `streetrace.cli.host` run commands on the host, with
    /// your rights (other cli tools run in a bubblewrap sandbox). See docs/security.md.
    #[arg(long)]
    allow_host_tools: bool,
    /// Let coding agents whose executor says `backend: unsandboxed` run their code
    /// as you, outside any sandbox. See docs/security.md.
    #[arg(long)]
    allow_unsandboxed: bool,
    /// Model turns an agent may take.
    #[arg(long, default_value_t = 25)]
    max_turns: u32,
    /// A JSON price table (USD per million tokens by model, e.g.
    /// `{"openai/gpt-4o": {"input": 2.5, "output": 10}}`) for the cost of the run.
    #[arg(long)]
    prices: Option<PathBuf>,
    /// Send a trace of the run (OpenTelemetry GenAI spans) over OTLP/HTTP: to ENDPOINT
    /// (`--otlp=http://host:4318`), else $OTEL_EXPORTER_OTLP_ENDPOINT, else http://127.0.0.1:4318.
    #[cfg(feature = "otlp")]
    #[arg(long, value_name = "ENDPOINT", num_args = 0..=1, require_equals = true, default_missing_value = "")]
    otlp: Option<String>,
    /// Put prompts, replies, tool arguments and results in the trace.
    #[cfg(feature = "otlp")]
    #[arg(long, requires = "otlp")]
    capture_content: bool,
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum EventsFormat {
    /// A readable live transcript on stderr; the result on stdout.
    Text,
    /// One JSON event per line on stdout.
    Jsonl,
}

fn fail(message: impl std::fmt::Display, code: u8) -> ExitCode {
    eprintln!("error: {message}");
    ExitCode::from(code)
}

pub fn run(args: Args) -> ExitCode {
    // Made before the async runtime so that it is dropped after it: the trace
    // is flushed when the run is over.
    #[cfg(feature = "otlp")]
    let _otlp = match args.otlp.as_deref() {
        Some(endpoint) => match sr_telemetry::init_otlp(Some(endpoint).filter(|e| !e.is_empty())) {
            Ok(guard) => Some(guard),
            Err(e) => return fail(e, 2),
        },
        None => None,
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(e) => return fail(format!("cannot start the async runtime: {e}"), 2),
    };
    runtime.block_on(run_async(args))
}

async fn run_async(args: Args) -> ExitCode {
    let cwd = std::env::current_dir().unwrap_or_default();
    let path = match discover(&args.workload, &cwd) {
        Ok(path) => path,
        Err(e) => return fail(e, 2),
    };
    let mut db = RootDatabase::default();
    let program = match load(&mut db, &path) {
        Ok(program) => program,
        Err(e) => {
            for line in crate::load::errors(&e) {
                eprintln!("{line}");
            }
            return fail(format!("{} has errors; run `sr check {}`", path.display(), path.display()), 2);
        }
    };
    if args.list_agents {
        print!("{}", crate::load::agents(&program));
        return ExitCode::SUCCESS;
    }
    for (flag, model) in [("--model", &args.model), ("--override-model", &args.override_model)] {
        if let Some(model) = model
            && let Err(e) = crate::load::check_model(flag, model)
        {
            return fail(e, 2);
        }
    }
    let work_dir = args.work_dir.clone().unwrap_or(cwd.clone());
    let (state, sessions) = match state_paths(args.state_dir.as_deref(), args.sessions.as_deref(), &work_dir) {
        Ok(paths) => paths,
        Err(e) => return fail(e, 2),
    };
    let store = match SessionStore::open(&sessions) {
        Ok(store) => store,
        Err(e) => return fail(format!("cannot open {}: {e}", sessions.display()), 2),
    };

    // Runs whose process died are marked interrupted, by their leases.
    if let Err(e) = store.recover() {
        return fail(format!("cannot read {}: {e}", sessions.display()), 2);
    }
    let session_id = args.resume.clone().or(args.session.clone()).unwrap_or_else(new_id);
    // A resumed run serves its predecessor's journal, then goes on live.
    let resume = match &args.resume {
        Some(id) => match crate::resume::find(&store, &state, id, args.input.as_deref()) {
            Ok(resume) => Some(resume),
            Err(e) => return fail(e, 2),
        },
        None => None,
    };
    let (message, answers) = match &resume {
        Some(resume) => (resume.message.clone(), resume.answers.clone()),
        None => (args.prompt.clone().unwrap_or_else(|| args.words.join(" ")), Vec::new()),
    };
    if let Err(e) = store.ensure(&session_id, &path.display().to_string()) {
        return fail(format!("cannot create session {session_id}: {e}"), 2);
    }
    let replay_text = match &args.replay {
        Some(file) => match std::fs::read_to_string(file) {
            Ok(text) => Some(text),
            Err(e) => return fail(format!("cannot read {}: {e}", file.display()), 2),
        },
        None => None,
    };
    let journal_text = resume.as_ref().map(|r| r.journal.clone());
    let invocation_id =
        replay_text.as_deref().or(journal_text.as_deref()).and_then(recorded_invocation).unwrap_or_else(new_id);
    let mcp = Arc::new(match &replay_text {
        Some(text) => match McpHub::from_recording(text) {
            Ok(hub) => hub,
            Err(e) => return fail(format!("cannot read the recording: {e}"), 2),
        },
        // Servers connect when an agent first uses them.
        None => McpHub::new(&program.tools, &McpOptions::default(), &|name| std::env::var(name).ok()),
    });
    let jail = match Jail::new(&work_dir) {
        Ok(jail) => [Some(&state.dir), Some(&sessions), args.record.as_ref()]
            .into_iter()
            .flatten()
            .fold(jail, |jail, path| jail.forbid(&cwd.join(path))),
        Err(e) => return fail(format!("bad work directory: {e}"), 2),
    };
    let human: Arc<dyn Human> = if answers.is_empty() && args.events == EventsFormat::Text {
        Arc::new(TerminalHuman)
    } else {
        Arc::new(Answers(std::sync::Mutex::new(answers.clone().into())))
    };
    let prices = match &args.prices {
        Some(file) => match std::fs::read_to_string(file).map_err(|e| e.to_string()).and_then(|text| {
            serde_json::from_str::<sr_llm::PriceTable>(&text).map_err(|e| format!("not a price table: {e}"))
        }) {
            Ok(table) => Some(Arc::new(table)),
            Err(e) => return fail(format!("cannot read {}: {e}", file.display()), 2),
        },
        None => None,
    };
    // Held until the run ends or its process dies: while it is held, the run is alive.
    let lease = match Lease::take(&state.leases(), &new_id()) {
        Ok(lease) => lease,
        Err(e) => return fail(format!("cannot take the run's lease: {e}"), 2),
    };
    let run_number = match store.reserve_run(&session_id, Some(lease.path())) {
        Ok(run) => run,
        Err(e) => return fail(format!("cannot start a run of session {session_id}: {e}"), 2),
    };
    let journal = state.journal(&session_id, run_number);
    let redactor = secrets(&mcp);
    let setup = match (&replay_text, &journal_text) {
        (Some(text), _) => replayed(text, mcp.clone()),
        (None, journal_text) => live(
            &args,
            &journal,
            journal_text.as_deref(),
            (&invocation_id, &path, &message, &answers),
            mcp.clone(),
            redactor.clone(),
        ),
    };
    let (provider, tools) = match setup {
        Ok(parts) => parts,
        Err(e) => {
            let _ = store.set_run_status(&session_id, run_number, "failed");
            lease.release();
            return fail(e, 2);
        }
    };
    let options = RunOptions {
        default_model: args.model.clone(),
        override_model: args.override_model.clone(),
        max_turns: args.max_turns,
        prices,
        entry: args.entry.clone(),
        allow_host_tools: args.allow_host_tools,
        allow_unsandboxed: args.allow_unsandboxed,
        ..RunOptions::default()
    };
    let terminal: Arc<dyn EventSink> = match args.events {
        EventsFormat::Text => Arc::new(Terminal::new()),
        EventsFormat::Jsonl => Arc::new(|e: &Event| println!("{}", serde_json::to_string(e).unwrap_or_default())),
    };
    #[cfg_attr(not(feature = "otlp"), allow(unused_mut))]
    let mut sinks = vec![terminal];
    #[cfg(feature = "otlp")]
    if args.otlp.is_some() {
        let config = sr_telemetry::TelemetryConfig { capture_content: args.capture_content };
        sinks.push(Arc::new(sr_telemetry::Telemetry::new(config)));
    }
    let env_parts = (provider, tools, human, jail, options);
    let workload = ProgramWorkload {
        name: path.display().to_string(),
        program,
        env: Arc::new(move || Env {
            provider: env_parts.0.clone(),
            hook: Arc::new(NoHook),
            jail: env_parts.3.clone(),
            tools: env_parts.1.clone(),
            human: env_parts.2.clone(),
            options: env_parts.4.clone(),
        }),
        sinks,
        invocation_id: Arc::new(move || invocation_id.clone()),
        redactor,
    };
    let session = SessionRef { store: store.clone(), id: session_id.clone(), run: Some(run_number) };
    let mut events = workload.run(session, message.clone());
    let mut finished = None;
    while let Some(event) = events.next().await {
        if let Payload::RunFinished { status, result, .. } = &event.payload {
            finished = Some((*status, result.clone()));
        }
    }
    mcp.close().await;
    let code = match finished {
        Some((RunStatus::Completed, result)) => {
            let _ = store.set_pause(&session_id, None);
            if args.events == EventsFormat::Text {
                match result {
                    Some(serde_json::Value::String(text)) => println!("{text}"),
                    Some(serde_json::Value::Null) | None => {}
                    Some(other) => println!("{}", serde_json::to_string_pretty(&other).unwrap_or_default()),
                }
            }
            ExitCode::SUCCESS
        }
        Some((RunStatus::Paused, _)) => {
            let pause = serde_json::json!({"input": message, "answers": answers});
            if let Err(e) = store.set_pause(&session_id, Some(&pause)) {
                return fail(format!("cannot save the paused run: {e}"), 1);
            }
            eprintln!("paused: resume with `sr run {} --resume {session_id} --input \"…\"`", args.workload);
            ExitCode::from(3)
        }
        _ => ExitCode::from(1),
    };
    lease.release();
    code
}

type Seams = (Arc<dyn Provider>, Arc<dyn ToolGate>);

/// Everything served from a recording.
fn replayed(text: &str, mcp: Arc<McpHub>) -> Result<Seams, String> {
    let provider = Replayer::parse(text).map_err(|e| format!("cannot read the recording: {e}"))?;
    let tools = ReplayedTools::from_cassette(text, mcp).map_err(|e| format!("cannot read the recording: {e}"))?;
    Ok((Arc::new(provider), Arc::new(tools)))
}

/// Real providers and tools, recorded to the run's journal (and mirrored to
/// `--record`); a resumed run's journal starts as a copy of its
/// predecessor's, whose model exchanges and tool results are served first.
fn live(
    args: &Args,
    journal: &std::path::Path,
    journal_text: Option<&str>,
    (invocation_id, workload, message, answers): (&str, &std::path::Path, &str, &[String]),
    mcp: Arc<McpHub>,
    redactor: Arc<Redactor>,
) -> Result<Seams, String> {
    let http = HttpClient::new(HttpOptions::default()).map_err(|e| e.to_string())?;
    let router: Arc<dyn Provider> = Arc::new(Router::from_env(http));
    let inherited = journal_text.unwrap_or_default();
    let mut cassette = open_cassette(journal, inherited, redactor.clone())?;
    if let Some(record) = &args.record {
        cassette = cassette.mirrored_to(Arc::new(open_cassette(record, inherited, redactor)?));
    }
    let cassette = Arc::new(cassette);
    let workload = sr_runtime::compile::display_path(workload);
    let mut meta = meta_entry(invocation_id, &workload, message);
    meta["answers"] = serde_json::json!(answers);
    cassette.append(&meta).map_err(|e| e.to_string())?;
    mcp.record(cassette.clone()).map_err(|e| format!("cannot record the MCP tools: {e}"))?;
    let recorder: Arc<dyn Provider> = Arc::new(Recorder::new(router, cassette.clone()));
    let live_tools = LiveTools { cassette: Some(cassette), mcp: mcp.clone() };
    match journal_text {
        Some(text) => {
            let journal = Replayer::parse(text).map_err(|e| format!("cannot read the journal: {e}"))?;
            let replayed = ReplayedTools::from_cassette(text, mcp)?;
            Ok((
                Arc::new(Resumed { journal, live: recorder }),
                Arc::new(ResumedTools { journal: replayed, live: live_tools }),
            ))
        }
        None => Ok((recorder, Arc::new(live_tools))),
    }
}

fn new_id() -> String {
    uuid::Uuid::new_v4().to_string()
}

/// The state directory and the sessions database: `--sessions` alone puts the
/// state (journals, locks) next to the database.
pub fn state_paths(
    state_dir: Option<&std::path::Path>,
    sessions: Option<&std::path::Path>,
    work_dir: &std::path::Path,
) -> Result<(StateDir, PathBuf), String> {
    let beside =
        sessions.map(|db| db.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(std::path::Path::new(".")));
    let state = StateDir::resolve(state_dir.or(beside), work_dir)?;
    let db = sessions.map(PathBuf::from).unwrap_or_else(|| state.sessions_db());
    Ok((state, db))
}

/// A new cassette at `path` holding `inherited` (already redacted lines).
fn open_cassette(path: &std::path::Path, inherited: &str, redactor: Arc<Redactor>) -> Result<Cassette, String> {
    let cannot = |e: &dyn std::fmt::Display| format!("cannot write {}: {e}", path.display());
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| cannot(&e))?;
    }
    std::fs::write(path, inherited).map_err(|e| cannot(&e))?;
    let cassette = Cassette::append_to(path).map_err(|e| cannot(&e))?;
    Ok(cassette.redacting(redactor))
}

/// The run's secrets: the API keys in the environment and the values of the
/// variables MCP servers use. Values too short to redact are refused with a
/// warning (the hub's own warnings become events).
fn secrets(mcp: &McpHub) -> Arc<Redactor> {
    let redactor = Redactor::new();
    for name in Router::key_variables() {
        if let Ok(value) = std::env::var(name)
            && redactor.add(value.trim()).is_err()
        {
            eprintln!(
                "warning: {name} is shorter than {} characters: it is not treated as a secret",
                Redactor::MIN_LEN
            );
        }
    }
    mcp.add_secrets(&redactor);
    Arc::new(redactor)
}
