//! `launch`: from the client's configuration to a compiled program and its
//! run, assembled by the runtime's one composition root as `sr run` does
//! (live providers, optionally recorded to a cassette, or everything served
//! from a recording; MCP servers connect on first use, so launching never
//! waits for one). Compile errors come back as output lines that point at
//! their source.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use sr_hir::RootDatabase;
use sr_runtime::RunOptions;
use sr_runtime::human::Unattended;
use sr_runtime::launch::{LaunchSpec, Launched, Models, Recording, launch, launch_continuing};
use sr_syntax::LineIndex;

use crate::forks::Piece;
use crate::protocol::{LaunchArguments, OutputEvent, SourceBody};
use crate::travel::Travel;

/// A program ready to run under the debugger.
pub struct Launch {
    /// A replay keeps the recorded invocation id, so its events are the recorded ones.
    pub launched: Launched,
    pub stop_on_entry: bool,
    pub no_debug: bool,
    /// The run's recording, to go back in time in: the `record` or `replay`
    /// file, else a temporary file (`temporary`) removed with the session.
    pub timeline: Option<PathBuf>,
    pub temporary: bool,
    /// Going back in time: where this run (a replay of the timeline) stops.
    pub travel: Option<Travel>,
    /// The run's journal as a branch's (see `forks`): the file it records
    /// to, from where the branch's own part starts.
    pub piece: Option<Piece>,
}

/// Why a launch failed: a message, and the diagnostics to show.
#[derive(Debug)]
pub struct LaunchError {
    pub message: String,
    pub diagnostics: Vec<OutputEvent>,
}

impl LaunchError {
    pub fn new(message: impl Into<String>) -> LaunchError {
        LaunchError { message: message.into(), diagnostics: Vec::new() }
    }
}

/// Compiles the program and assembles its run the way `sr run` does
/// (`sr_runtime::launch`), without a session: its journal is its recording.
pub fn prepare(args: &LaunchArguments) -> Result<Launch, LaunchError> {
    prepare_with(args, None)
}

/// Like [`prepare`], for a run that continues `recording` (going back in
/// time): what it recorded is served, and the run goes live only where a
/// thread's recording ends or it forks, recorded to a new temporary file
/// that starts with `recording`.
pub fn prepare_continuing(args: &LaunchArguments, recording: String) -> Result<Launch, LaunchError> {
    prepare_with(args, Some(recording))
}

fn prepare_with(args: &LaunchArguments, continuing: Option<String>) -> Result<Launch, LaunchError> {
    let cwd = std::env::current_dir().unwrap_or_default();
    let program = args
        .program
        .as_deref()
        .filter(|p| !p.is_empty())
        .ok_or_else(|| LaunchError::new("the launch configuration needs `program`, the .sr file to debug"))?;
    let path = cwd.join(program);
    if !path.is_file() {
        return Err(LaunchError::new(format!("{} is not a file", path.display())));
    }
    let mut db = RootDatabase::default();
    let program = sr_runtime::workload::load(&mut db, &path).map_err(|e| compile_error(&path, e.diagnostics))?;
    let defaults = RunOptions::default();
    let no_debug = args.no_debug.unwrap_or(false);
    // Every debugged run is recorded, so that it can go back in time.
    let temporary = continuing.is_some() || args.record.is_none() && args.replay.is_none() && !no_debug;
    let record = match &args.record {
        Some(file) if continuing.is_none() => Some(cwd.join(file)),
        _ if temporary => Some(crate::timeline::temporary("timeline")),
        _ => None,
    };
    let timeline = record.clone().or_else(|| args.replay.as_deref().map(|file| cwd.join(file)));
    let models = match (&args.replay, record.clone()) {
        (Some(_), Some(_)) => {
            return Err(LaunchError::new("a replay records nothing: give `record` or `replay`, not both"));
        }
        (Some(file), None) => Models::Replay(Recording::File(cwd.join(file))),
        (None, Some(file)) => Models::Record(file),
        (None, None) => Models::Live,
    };
    let spec = LaunchSpec {
        program,
        message: args.prompt.clone().unwrap_or_default(),
        work_dir: args.work_dir.as_deref().map_or(cwd.clone(), |dir| cwd.join(dir)),
        read_only: false,
        storage: None,
        models,
        options: RunOptions {
            default_model: args.model.clone(),
            override_model: args.override_model.clone(),
            max_turns: args.max_turns.unwrap_or(defaults.max_turns),
            entry: args.entry.clone(),
            allow_host_tools: args.allow_host_tools.unwrap_or(false),
            allow_unsandboxed: args.allow_unsandboxed.unwrap_or(false),
            ..defaults
        },
        human: Arc::new(Unattended),
        in_doubt: sr_runtime::in_doubt::skip_all(),
    };
    let launched = match continuing {
        Some(recording) => launch_continuing(spec, recording),
        None => launch(spec),
    }
    .map_err(|e| LaunchError::new(e.to_string()))?;
    Ok(Launch {
        launched,
        stop_on_entry: args.stop_on_entry.unwrap_or(false),
        no_debug,
        timeline,
        temporary,
        travel: None,
        piece: record.map(|file| Piece { file, skip: 0 }),
    })
}

/// Diagnostics as `file:line:col: error[CODE]: message` lines on stderr.
fn compile_error(root: &Path, diagnostics: Vec<(PathBuf, sr_hir::Diagnostic)>) -> LaunchError {
    let lines = diagnostics
        .iter()
        .map(|(file, d)| {
            let text = std::fs::read_to_string(file).unwrap_or_default();
            let at = LineIndex::new(&text).line_col(d.range.start());
            let (line, column) = (at.line + 1, at.col + 1);
            OutputEvent {
                category: "stderr".to_string(),
                output: format!("{}:{line}:{column}: error[{}]: {}\n", file.display(), d.code(), d.message()),
                source: Some(SourceBody {
                    name: file.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
                    path: file.display().to_string(),
                }),
                line: Some(line as i64),
                column: Some(column as i64),
            }
        })
        .collect::<Vec<_>>();
    let count = lines.len();
    LaunchError {
        message: format!(
            "{} has {count} error{}; see the debug console",
            root.display(),
            if count == 1 { "" } else { "s" }
        ),
        diagnostics: lines,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The launch configuration's opt-ins reach the run, and are off unless given.
    #[tokio::test]
    async fn opt_in_flags_reach_the_run_options() {
        let dir = std::env::temp_dir().join(format!("sr-dap-launch-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let program = dir.join("a.sr");
        std::fs::write(&program, "model main = openai/gpt-4o\nprompt p: \"\"\"x\"\"\"\nagent:\n    instruction p\n")
            .unwrap();
        let base = serde_json::json!({"program": program, "workDir": dir});
        let args: LaunchArguments = serde_json::from_value(base.clone()).unwrap();
        let launch = prepare(&args).unwrap();
        let timeline = launch.timeline.clone().unwrap();
        assert!(launch.temporary && timeline.starts_with(std::env::temp_dir()), "recorded, to go back in time");
        std::fs::remove_file(timeline).unwrap();
        let options = launch.launched.options().clone();
        assert!(!options.allow_host_tools && !options.allow_unsandboxed);
        let mut given = base;
        given["allowHostTools"] = true.into();
        given["allowUnsandboxed"] = true.into();
        let args: LaunchArguments = serde_json::from_value(given).unwrap();
        let launch = prepare(&args).unwrap();
        std::fs::remove_file(launch.timeline.unwrap()).unwrap();
        let options = launch.launched.options().clone();
        assert!(options.allow_host_tools && options.allow_unsandboxed);
    }
}
