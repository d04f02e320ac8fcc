//! `sr try`: runs one prompt (one model call, rendered with the inputs) or one
//! agent (with its tools) of a workload, without its flows, and shows the
//! rendered prompt, the reply, the tokens and the cost. The editors' "Try"
//! lens runs it with `--format json`.

mod case;
mod inputs;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::{Arc, Mutex};

use serde::Serialize;
use serde_json::Value;
use sr_hir::RootDatabase;
use sr_hir::playground::{Tried, tried};
use sr_hir::start::EntryName;
use sr_runtime::RunOptions;
use sr_runtime::event::{Event, EventSink, Payload, RunStatus, Usage};
use sr_runtime::hook::NoHook;
use sr_runtime::human::Unattended;
use sr_runtime::in_doubt::{Always, Decision};
use sr_runtime::launch::{Finished, LaunchSpec, Models, launch};
use sr_runtime::workload::load;

#[derive(clap::Args)]
pub struct Args {
    /// The `.sr` file whose program holds the item (for an imported file's
    /// item, the file importing it).
    file: PathBuf,
    /// The agent or prompt to run: NAME as `sr run --entry` resolves it (a
    /// flow, then an agent, then a prompt), or `agent:NAME` / `prompt:NAME`
    /// (a prompt that shares an agent's or a flow's name).
    item: String,
    /// A YAML map of the variables the item's prompts read (default:
    /// ITEM.inputs.yaml beside FILE, when it exists). An agent's message is
    /// `input_prompt`, or --prompt.
    #[arg(long, value_name = "FILE.yaml")]
    inputs: Option<PathBuf>,
    /// The message an agent is given (default: the inputs' `input_prompt`).
    #[arg(long, short)]
    prompt: Option<String>,
    /// Model for prompts that name none when there is no model `main`.
    #[arg(long)]
    model: Option<String>,
    /// Use this model for every call.
    #[arg(long)]
    override_model: Option<String>,
    /// Also record the run's model exchanges and tool results to this file.
    #[arg(long, conflicts_with = "replay")]
    record: Option<PathBuf>,
    /// Serve model exchanges and tool results from this recording (offline).
    #[arg(long)]
    replay: Option<PathBuf>,
    /// Directory an agent's file tools work in (default: the current directory).
    #[arg(long)]
    work_dir: Option<PathBuf>,
    /// A JSON price table (as `sr run --prices`) for the cost.
    #[arg(long)]
    prices: Option<PathBuf>,
    /// Model turns an agent may take.
    #[arg(long, default_value_t = 25)]
    max_turns: u32,
    /// How to print the outcome.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// Append the run to this `sr eval` dataset (.jsonl or .yaml) as a case
    /// whose expectation is the reply.
    #[arg(long, value_name = "EVAL_FILE")]
    save_case: Option<PathBuf>,
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Text,
    Json,
}

/// What a try did, as `--format json` prints it.
#[derive(Debug, Serialize)]
pub struct Outcome {
    pub file: String,
    /// The agent's or prompt's name.
    pub item: String,
    /// The item as given (`sr eval --entry` takes it).
    pub entry: String,
    /// `prompt` or `agent`.
    pub kind: &'static str,
    /// The model of the last model call.
    pub model: Option<String>,
    pub inputs: sr_runtime::eval::Vars,
    /// The message an agent was given (empty for a prompt).
    pub message: String,
    /// What was sent: a prompt's rendered text (with what `expecting` adds),
    /// an agent's rendered instruction.
    pub rendered: Option<String>,
    pub reply: Option<Value>,
    /// The tools an agent called, in order.
    pub tool_calls: Vec<String>,
    pub usage: Usage,
    /// `completed`, `failed` or `paused`.
    pub status: String,
    pub error: Option<String>,
    /// The case `--save-case` appended.
    pub saved_case: Option<String>,
}

fn fail(message: impl std::fmt::Display) -> ExitCode {
    eprintln!("error: {message}");
    ExitCode::from(2)
}

pub fn run(args: Args) -> ExitCode {
    let runtime = match sr_runtime::async_runtime() {
        Ok(runtime) => runtime,
        Err(e) => return fail(format!("cannot start the async runtime: {e}")),
    };
    runtime.block_on(run_async(args))
}

async fn run_async(args: Args) -> ExitCode {
    let mut db = RootDatabase::default();
    let program = match load(&mut db, &args.file) {
        Ok(program) => program,
        Err(e) => {
            for line in crate::load::errors(&e) {
                eprintln!("{line}");
            }
            let file = args.file.display();
            return fail(format!("{file} has errors; run `sr check {file}`"));
        }
    };
    let root = db.file(&program.root).expect("a program that compiled was loaded into the database");
    let what = match tried(&db, root, &args.item) {
        Ok(what) => what,
        Err(refusal) => return fail(format!("{}: {refusal}", args.file.display())),
    };
    let name = EntryName::parse(&args.item).name.to_string();
    let inputs_path = args.inputs.clone().unwrap_or_else(|| default_inputs(&args.file, &name));
    let vars: sr_runtime::eval::Vars = match sr_ide::read_inputs(&inputs_path, args.inputs.is_some()) {
        Ok(vars) => vars,
        Err(e) => return fail(e),
    };
    let prompt = match &what {
        Tried::Prompt => Some(name.clone()),
        Tried::Agent { instruction } => instruction.as_ref().map(|i| i.to_string()),
    };
    let missing = prompt.as_deref().map_or_else(Vec::new, |p| inputs::missing(&db, root, p, &vars));
    if !missing.is_empty() {
        for line in &missing {
            eprintln!("{line}");
        }
        return fail(format!("{name} needs inputs: add them to {}", inputs_path.display()));
    }
    let message = match (&args.prompt, vars.get("input_prompt")) {
        (Some(message), _) => message.clone(),
        (None, Some(Value::String(message))) => message.clone(),
        (None, Some(other)) => other.to_string(),
        (None, None) => String::new(),
    };
    if matches!(what, Tried::Agent { .. }) && message.is_empty() && args.replay.is_none() {
        return fail(format!(
            "agent {name} needs a message: give --prompt TEXT or `input_prompt:` in {}",
            inputs_path.display()
        ));
    }
    for (flag, model) in [("--model", &args.model), ("--override-model", &args.override_model)] {
        if let Some(model) = model
            && let Err(e) = crate::load::check_model(flag, model)
        {
            return fail(e);
        }
    }
    let prices = match args.prices.as_deref().map(crate::load::prices).transpose() {
        Ok(prices) => prices,
        Err(e) => return fail(e),
    };
    // An agent's instruction as the run renders it (shown; the run renders its own).
    let instruction = match (&what, &prompt) {
        (Tried::Agent { .. }, Some(name)) => {
            let mut with_message = vars.clone();
            with_message.insert("input_prompt".into(), Value::String(message.clone()));
            sr_runtime::eval::render_prompt(name, &program.prompts, &with_message, 0).ok()
        }
        _ => None,
    };
    let spec = LaunchSpec {
        program: program.clone(),
        message: message.clone(),
        work_dir: args.work_dir.clone().unwrap_or_else(|| std::env::current_dir().unwrap_or_default()),
        read_only: false,
        storage: None,
        models: Models::from_flags(args.record.clone(), args.replay.clone()),
        options: RunOptions {
            default_model: args.model.clone(),
            override_model: args.override_model.clone(),
            max_turns: args.max_turns,
            prices,
            entry: Some(args.item.clone()),
            vars: vars.clone(),
            ..RunOptions::default()
        },
        human: Arc::new(Unattended),
        in_doubt: Arc::new(Always(Decision::Skip)),
    };
    let launched = match launch(spec) {
        Ok(launched) => launched,
        Err(e) => return fail(e),
    };
    for warning in launched.warnings() {
        eprintln!("warning: {warning}");
    }
    let seen = Arc::new(Seen::default());
    let finished = launched.run(Arc::new(NoHook), vec![seen.clone() as Arc<dyn EventSink>]).await;
    let seen = seen.0.lock().unwrap_or_else(|e| e.into_inner());
    let (status, reply, error) = match finished {
        Ok(Finished { status, result, error, .. }) => {
            (status.map_or("failed".to_string(), |s| status_name(s).to_string()), result, error)
        }
        Err(e) => ("failed".to_string(), None, Some(e.to_string())),
    };
    let mut outcome = Outcome {
        file: args.file.display().to_string(),
        item: name,
        entry: args.item.clone(),
        kind: match what {
            Tried::Prompt => "prompt",
            Tried::Agent { .. } => "agent",
        },
        model: seen.model.clone(),
        inputs: vars,
        message,
        rendered: seen.prompt_text.clone().or(instruction),
        reply,
        tool_calls: seen.tool_calls.clone(),
        usage: seen.usage.clone(),
        status,
        error,
        saved_case: None,
    };
    if let Some(dataset) = &args.save_case
        && outcome.status == "completed"
    {
        match case::append(dataset, &outcome) {
            Ok(id) => outcome.saved_case = Some(id),
            Err(e) => return fail(e),
        }
    }
    print(&outcome, args.format, args.save_case.as_deref());
    if outcome.status == "completed" { ExitCode::SUCCESS } else { ExitCode::from(1) }
}

/// `ITEM.inputs.yaml` beside the workload.
fn default_inputs(file: &Path, item: &str) -> PathBuf {
    file.parent().unwrap_or(Path::new("")).join(format!("{item}.inputs.yaml"))
}

fn status_name(status: RunStatus) -> &'static str {
    match status {
        RunStatus::Completed => "completed",
        RunStatus::Paused => "paused",
        _ => "failed",
    }
}

/// What the run's events tell: the model, the rendered prompt, tool calls, usage.
#[derive(Default)]
struct Seen(Mutex<Observed>);

#[derive(Default)]
struct Observed {
    model: Option<String>,
    prompt_text: Option<String>,
    tool_calls: Vec<String>,
    usage: Usage,
}

impl EventSink for Seen {
    fn record(&self, event: &Event) {
        let mut seen = self.0.lock().unwrap_or_else(|e| e.into_inner());
        match &event.payload {
            Payload::LlmCall { prompt_text, .. } => seen.prompt_text = Some(prompt_text.clone()),
            Payload::ModelResponse { model, .. } => seen.model = Some(model.clone()),
            Payload::ToolCall { tool, .. } => seen.tool_calls.push(tool.clone()),
            Payload::RunFinished { usage, .. } => seen.usage = usage.clone(),
            _ => {}
        }
    }
}

fn print(outcome: &Outcome, format: Format, dataset: Option<&Path>) {
    if format == Format::Json {
        println!("{}", serde_json::to_string_pretty(outcome).expect("an outcome is plain JSON data"));
        return;
    }
    let model = outcome.model.as_deref().map(|m| format!(" ({m})")).unwrap_or_default();
    println!("── {} {}{model} ──", outcome.kind, outcome.item);
    if !outcome.message.is_empty() && outcome.kind == "agent" {
        println!("message: {}", outcome.message);
    }
    if let Some(rendered) = &outcome.rendered {
        println!("{rendered}");
    }
    if !outcome.tool_calls.is_empty() {
        println!("── tool calls: {} ──", outcome.tool_calls.join(", "));
    }
    println!("── reply ──");
    match &outcome.reply {
        Some(Value::String(text)) => println!("{text}"),
        Some(other) => println!("{}", serde_json::to_string_pretty(other).expect("a reply is plain JSON data")),
        None => println!("(none: {})", outcome.error.as_deref().unwrap_or(&outcome.status)),
    }
    let Usage { input_tokens, output_tokens, cost_usd } = &outcome.usage;
    let cost = cost_usd.map(|c| format!(", ${c:.6}")).unwrap_or_default();
    println!("── {input_tokens} input + {output_tokens} output tokens{cost} ──");
    if let (Some(id), Some(dataset)) = (&outcome.saved_case, dataset) {
        eprintln!(
            "saved as case {id} in {}: `sr eval {} --workload {} --entry {}` runs it",
            dataset.display(),
            dataset.display(),
            outcome.file,
            outcome.entry
        );
    }
}
