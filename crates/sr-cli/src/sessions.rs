//! `sr sessions list|show`: what runs left in the session store.

use std::path::PathBuf;
use std::process::ExitCode;

use sr_runtime::event::EventSink;
use sr_runtime::session::SessionStore;

use crate::transcript::Terminal;

#[derive(clap::Subcommand)]
pub enum Command {
    /// Sessions, most recent first.
    List {
        #[arg(long, default_value = ".streetrace/sessions.db")]
        sessions: PathBuf,
    },
    /// The transcript of a session's runs (`--jsonl` for the raw events).
    Show {
        id: String,
        #[arg(long)]
        jsonl: bool,
        #[arg(long, default_value = ".streetrace/sessions.db")]
        sessions: PathBuf,
    },
}

pub fn run(command: Command) -> ExitCode {
    let path = match &command {
        Command::List { sessions } | Command::Show { sessions, .. } => sessions.clone(),
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
                _ => {
                    eprintln!("error: no session {id}");
                    return ExitCode::from(2);
                }
            };
            let terminal = Terminal::new();
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
