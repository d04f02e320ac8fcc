//! `sr sessions list|show`: what runs left in the session store.

use std::path::PathBuf;
use std::process::ExitCode;

use sr_runtime::event::EventSink;
use sr_runtime::launch::Storage;
use sr_runtime::session::{RunLineage, SessionStore};
use sr_runtime::state::StateDir;

use crate::transcript::Terminal;

#[derive(clap::Subcommand)]
pub enum Command {
    /// Sessions, most recent first.
    List {
        #[command(flatten)]
        store: Store,
    },
    /// The transcript of a session's runs (`--jsonl` for the raw events), each
    /// run headed by its status and the run it resumed.
    Show {
        id: String,
        #[arg(long, conflicts_with = "steps")]
        jsonl: bool,
        /// The steps of each run's journal instead: what `sr run --resume ID
        /// --from STEP` can go live from.
        #[arg(long)]
        steps: bool,
        #[command(flatten)]
        store: Store,
    },
}

/// Which session store: the one `sr run` uses for the current directory by default.
#[derive(clap::Args)]
pub struct Store {
    /// The runtime's state directory (as `sr run --state-dir`).
    #[arg(long, value_name = "DIR")]
    state_dir: Option<PathBuf>,
    /// The sessions database (default: STATE_DIR/sessions.db).
    #[arg(long, value_name = "FILE")]
    sessions: Option<PathBuf>,
    /// The work directory the sessions belong to (default: the current directory).
    #[arg(long, value_name = "DIR")]
    work_dir: Option<PathBuf>,
}

pub fn run(command: Command) -> ExitCode {
    let (Command::List { store } | Command::Show { store, .. }) = &command;
    let work_dir = store.work_dir.clone().unwrap_or_else(|| std::env::current_dir().unwrap_or_default());
    let (path, state) = match Storage::resolve(store.state_dir.as_deref(), store.sessions.as_deref(), &work_dir) {
        Ok(storage) => (storage.sessions, storage.state),
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    if !path.exists() {
        eprintln!("error: no session store at {}", path.display());
        return ExitCode::from(2);
    }
    let store = match SessionStore::open(&path) {
        Ok(store) => store,
        Err(e) => {
            eprintln!("error: cannot open {}: {e}", path.display());
            return ExitCode::from(2);
        }
    };
    // Runs whose process died show as interrupted.
    let _ = store.recover();
    match command {
        Command::List { .. } => {
            let Ok(sessions) = store.list() else { return ExitCode::from(2) };
            for s in sessions {
                println!("{}  {:>3} run(s)  {:<7} {}", s.id, s.runs, s.status, s.workload);
            }
            ExitCode::SUCCESS
        }
        Command::Show { id, steps: true, .. } => show_steps(&store, &state, &id),
        Command::Show { id, jsonl, .. } => {
            let events = match store.events(&id) {
                Ok(events) if !events.is_empty() => events,
                Ok(_) => {
                    eprintln!("error: no session {id}");
                    return ExitCode::from(2);
                }
                Err(e) => {
                    eprintln!("error: cannot read session {id}: {e}");
                    return ExitCode::from(2);
                }
            };
            let lineage = store.run_lineage(&id).unwrap_or_default();
            let terminal = Terminal::stored();
            let mut shown_run = None;
            for (run, event) in events {
                if jsonl {
                    println!("{}", serde_json::json!({"run": run, "event": event}));
                    continue;
                }
                if shown_run != Some(run) {
                    shown_run = Some(run);
                    eprintln!("{}", header(run, lineage.iter().find(|l| l.run == run)));
                }
                terminal.record(&event);
            }
            ExitCode::SUCCESS
        }
    }
}

/// `── run 2 · completed · resumes run 1 from step 4`.
fn header(run: i64, lineage: Option<&RunLineage>) -> String {
    let mut text = format!("── run {run}");
    if let Some(lineage) = lineage {
        text.push_str(&format!(" · {}", lineage.status));
        match (lineage.parent, lineage.from_step) {
            (Some(parent), Some(step)) => text.push_str(&format!(" · resumes run {parent}, live from step {step}")),
            (Some(parent), None) => text.push_str(&format!(" · resumes run {parent}")),
            _ => {}
        }
    }
    text
}

/// Each run's journal, step by step.
fn show_steps(store: &SessionStore, state: &StateDir, id: &str) -> ExitCode {
    let lineage = match store.run_lineage(id) {
        Ok(lineage) if !lineage.is_empty() => lineage,
        Ok(_) => {
            eprintln!("error: no session {id}");
            return ExitCode::from(2);
        }
        Err(e) => {
            eprintln!("error: cannot read session {id}: {e}");
            return ExitCode::from(2);
        }
    };
    for run in &lineage {
        println!("{}", header(run.run, Some(run)));
        let steps = state.journal(id, run.run).map_err(|e| e.to_string()).and_then(|path| {
            std::fs::read_to_string(&path)
                .map_err(|e| format!("cannot read {}: {e}", path.display()))
                .and_then(|text| sr_runtime::journal::steps(&text).map_err(|e| e.to_string()))
        });
        match steps {
            Ok(steps) => steps.iter().for_each(|line| println!("{line}")),
            Err(e) => println!("      ({e})"),
        }
    }
    ExitCode::SUCCESS
}
