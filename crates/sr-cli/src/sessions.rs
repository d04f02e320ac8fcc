//! `sr sessions list|show`: what runs left in the session store.

use std::path::PathBuf;
use std::process::ExitCode;

use sr_runtime::event::EventSink;
use sr_runtime::launch::Storage;
use sr_runtime::session::SessionStore;

use crate::transcript::Terminal;

#[derive(clap::Subcommand)]
pub enum Command {
    /// Sessions, most recent first.
    List {
        #[command(flatten)]
        store: Store,
    },
    /// The transcript of a session's runs (`--jsonl` for the raw events).
    Show {
        id: String,
        #[arg(long)]
        jsonl: bool,
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
    let path = match Storage::resolve(store.state_dir.as_deref(), store.sessions.as_deref(), &work_dir) {
        Ok(storage) => storage.sessions,
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
            let terminal = Terminal::stored();
            for (run, event) in events {
                if jsonl {
                    println!("{}", serde_json::json!({"run": run, "event": event}));
                } else {
                    terminal.record(&event);
                }
            }
            ExitCode::SUCCESS
        }
    }
}
