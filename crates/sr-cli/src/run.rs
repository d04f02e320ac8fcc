//! `sr run`: runs a workload against real providers (or a recording), streaming
//! a live transcript or JSON lines, in a session stored in SQLite.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use sr_hir::RootDatabase;
use sr_runtime::RunOptions;
use sr_runtime::event::{Event, EventSink, RunStatus};
use sr_runtime::hook::NoHook;
use sr_runtime::human::{Human, Unattended};
use sr_runtime::ids::{self, IdKind};
use sr_runtime::in_doubt::{Always, Decision};
use sr_runtime::launch::{Finished, LaunchSpec, Models, ResumeSpec, ResumeWorkDir, Storage, launch};
use sr_runtime::workload::{discover, load};

use crate::transcript::{Terminal, TerminalHuman};

#[derive(clap::Args)]
pub struct Args {
    /// A `.sr` or YAML file (a path: with a `/` or a workload extension), or
    /// a workload name found in $STREETRACE_AGENT_PATHS, ./agents,
    /// ./.streetrace/agents or ~/.streetrace/agents.
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
    /// Continue this session (default: a new one). Ids are 1 to 128 of A-Z,
    /// a-z, 0-9, '.', '_' and '-', not starting with '.'.
    #[arg(long, value_parser = session_id)]
    session: Option<String>,
    /// Continue the last run of this session: one paused by `escalate to human`
    /// (answer it with --input) or one whose process died. What it did is
    /// served from its journal (model replies, tool results, `uuid()` and
    /// other values), never made again, and it continues at the flow or agent
    /// it started at.
    #[arg(long, value_name = "SESSION_ID", value_parser = session_id)]
    resume: Option<String>,
    /// The answer given to a run paused for a human (or killed while it
    /// waited for one).
    #[arg(long, requires = "resume")]
    input: Option<String>,
    /// With --resume: go live from this step of the run's journal on (steps
    /// are listed by `sr sessions show ID --steps`): what the run did from
    /// there is done again, for real, e.g. a tool retried after fixing its
    /// cause. Works on a run that completed or failed too.
    #[arg(long, value_name = "STEP", requires = "resume")]
    from: Option<u64>,
    /// With --resume: what to do with a tool call the interruption cut off,
    /// when its tool is not idempotent (file tools but `append_to_file`, MCP
    /// tools declared `with idempotent "true"` are simply called again, with
    /// the same idempotency key): `retry` calls it again with that key, `skip`
    /// tells the model it was cut off and not repeated, `fail` fails the run.
    /// The decision is kept in the journal.
    #[arg(long, value_enum, value_name = "DECISION", default_value_t = InDoubtArg::Skip, requires = "resume")]
    in_doubt: InDoubtArg,
    /// Also record every model exchange and tool result to this file (the run's
    /// journal is kept either way).
    #[arg(long, conflicts_with = "replay")]
    record: Option<PathBuf>,
    /// Serve model exchanges and tool results from this recording (offline).
    /// The run is given the recorded run's input, entry and answers to
    /// `escalate to human`: a --prompt that differs, or an --entry that
    /// starts another item, is refused.
    #[arg(long)]
    replay: Option<PathBuf>,
    /// Directory file tools work in (default: the current directory; with
    /// --resume, the directory the run worked in, and another one is refused
    /// while that one exists).
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
    /// Start at this flow or agent instead of the entry point (`flow:NAME` or
    /// `agent:NAME` names one kind).
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
    #[cfg(feature = "otlp")]
    #[command(flatten)]
    trace: crate::trace_args::TraceArgs,
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum EventsFormat {
    /// A readable live transcript on stderr; the result on stdout.
    Text,
    /// One JSON event per line on stdout.
    Jsonl,
}

/// A session id names the session's directory in the state directory.
fn session_id(id: &str) -> Result<String, String> {
    ids::check(IdKind::Session, id).map(|()| id.to_string()).map_err(|e| e.to_string())
}

fn fail(message: impl std::fmt::Display, code: u8) -> ExitCode {
    eprintln!("error: {message}");
    ExitCode::from(code)
}

pub fn run(args: Args) -> ExitCode {
    // Made before the async runtime so that it is dropped after it: the trace
    // is flushed when the run is over.
    #[cfg(feature = "otlp")]
    let _otlp = match args.trace.otlp.as_deref() {
        Some(endpoint) => match sr_telemetry::init_otlp(Some(endpoint).filter(|e| !e.is_empty())) {
            Ok(guard) => Some(guard),
            Err(e) => return fail(e, 2),
        },
        None => None,
    };
    let runtime = match sr_runtime::async_runtime() {
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
    // The editor's run lenses ask the same question. A resumed or replayed
    // run starts at its recorded entry; a YAML agent is not in the database.
    if args.resume.is_none()
        && args.replay.is_none()
        && let Some(root) = db.file(&program.root)
        && let Err(refusal) = sr_hir::start::run_start(&db, root, args.entry.as_deref())
    {
        return fail(format!("{}: {refusal}", args.workload), 2);
    }
    for (flag, model) in [("--model", &args.model), ("--override-model", &args.override_model)] {
        if let Some(model) = model
            && let Err(e) = crate::load::check_model(flag, model)
        {
            return fail(e, 2);
        }
    }
    let work_dir = args.work_dir.clone().unwrap_or(cwd.clone());
    let mut storage = match Storage::resolve(args.state_dir.as_deref(), args.sessions.as_deref(), &work_dir) {
        Ok(storage) => storage,
        Err(e) => return fail(e, 2),
    };
    storage.session = args.session.clone();
    // A resumed run continues in the work directory it ran in, unless one is named.
    let resumed_in = if args.work_dir.is_some() { ResumeWorkDir::Named } else { ResumeWorkDir::Recorded };
    storage.resume = args.resume.clone().map(|session| ResumeSpec {
        session,
        input: args.input.clone(),
        from: args.from,
        rebuild_files: false,
        work_dir: resumed_in,
    });
    let prices = match args.prices.as_deref().map(crate::load::prices).transpose() {
        Ok(prices) => prices,
        Err(e) => return fail(e, 2),
    };
    let human: Arc<dyn Human> = match args.events {
        EventsFormat::Text => Arc::new(TerminalHuman),
        EventsFormat::Jsonl => Arc::new(Unattended),
    };
    let spec = LaunchSpec {
        program,
        message: args.prompt.clone().unwrap_or_else(|| args.words.join(" ")),
        work_dir,
        read_only: false,
        storage: Some(storage),
        models: Models::from_flags(args.record.clone(), args.replay.clone()),
        options: RunOptions {
            default_model: args.model.clone(),
            override_model: args.override_model.clone(),
            max_turns: args.max_turns,
            prices,
            entry: args.entry.clone(),
            allow_host_tools: args.allow_host_tools,
            allow_unsandboxed: args.allow_unsandboxed,
            ..RunOptions::default()
        },
        human,
        in_doubt: Arc::new(Always(args.in_doubt.into())),
    };
    let launched = match launch(spec) {
        Ok(launched) => launched,
        Err(e) => return fail(e, 2),
    };
    for warning in launched.warnings() {
        eprintln!("warning: {warning}");
    }
    let session_id = launched.session().unwrap_or_default().to_string();
    let terminal: Arc<dyn EventSink> = match args.events {
        EventsFormat::Text => Arc::new(Terminal::new()),
        EventsFormat::Jsonl => Arc::new(|e: &Event| println!("{}", serde_json::to_string(e).unwrap_or_default())),
    };
    #[cfg_attr(not(feature = "otlp"), allow(unused_mut))]
    let mut sinks = vec![terminal];
    #[cfg(feature = "otlp")]
    if args.trace.otlp.is_some() {
        let config = args.trace.config();
        sinks.push(Arc::new(sr_telemetry::Telemetry::new(config)));
    }
    match launched.run(Arc::new(NoHook), sinks).await {
        Ok(Finished { status: Some(RunStatus::Completed), result, .. }) => {
            if args.events == EventsFormat::Text {
                match result {
                    Some(serde_json::Value::String(text)) => println!("{text}"),
                    Some(serde_json::Value::Null) | None => {}
                    Some(other) => println!("{}", serde_json::to_string_pretty(&other).unwrap_or_default()),
                }
            }
            ExitCode::SUCCESS
        }
        Ok(Finished { status: Some(RunStatus::Paused), .. }) => {
            // A resumed run continues at the entry it started at (its
            // journal says which): the hint needs no `--entry`.
            eprintln!(
                "paused: resume with `sr run {} --resume {session_id} --input \"…\"`",
                shell_quoted(&args.workload)
            );
            ExitCode::from(3)
        }
        Ok(_) => ExitCode::from(1),
        Err(e) => fail(e, 1),
    }
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum InDoubtArg {
    Retry,
    Skip,
    Fail,
}

impl From<InDoubtArg> for Decision {
    fn from(arg: InDoubtArg) -> Decision {
        match arg {
            InDoubtArg::Retry => Decision::Retry,
            InDoubtArg::Skip => Decision::Skip,
            InDoubtArg::Fail => Decision::Fail,
        }
    }
}

/// `text` as one word of a POSIX shell command.
fn shell_quoted(text: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "-_./:=@%+,".contains(c);
    if !text.is_empty() && text.chars().all(plain) {
        return text.to_string();
    }
    format!("'{}'", text.replace('\'', "'\\''"))
}
