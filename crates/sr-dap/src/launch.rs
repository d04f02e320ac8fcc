//! `launch`: from the client's configuration to a compiled program and the
//! seams of a run, assembled as `sr run` does (live providers, or everything
//! served from a recording), MCP servers included. Compile errors come back as output lines that
//! point at their source.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use sr_hir::RootDatabase;
use sr_llm::{HttpClient, HttpOptions, Provider, Replayer, Router};
use sr_runtime::RunOptions;
use sr_runtime::compile::Compiled;
use sr_runtime::mcp::{McpHub, McpOptions};
use sr_runtime::record::{LiveTools, ReplayedTools, ToolGate, recorded_invocation};
use sr_runtime::tools::Jail;
use sr_syntax::LineIndex;

use crate::protocol::{LaunchArguments, OutputEvent, SourceBody};

/// What a run needs from the outside world.
pub struct Seams {
    pub provider: Arc<dyn Provider>,
    pub tools: Arc<dyn ToolGate>,
    pub jail: Jail,
    pub options: RunOptions,
}

/// A program ready to run under the debugger.
pub struct Launch {
    pub program: Arc<Compiled>,
    pub seams: Seams,
    pub prompt: String,
    /// A replay keeps the recorded invocation id, so its events are the recorded ones.
    pub invocation: Option<String>,
    pub stop_on_entry: bool,
    pub no_debug: bool,
}

/// Why a launch failed: a message, and the diagnostics to show.
#[derive(Debug)]
pub struct LaunchError {
    pub message: String,
    pub diagnostics: Vec<OutputEvent>,
}

impl LaunchError {
    fn new(message: impl Into<String>) -> LaunchError {
        LaunchError { message: message.into(), diagnostics: Vec::new() }
    }
}

pub async fn prepare(args: &LaunchArguments) -> Result<Launch, LaunchError> {
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

    let (provider, tools, invocation): (Arc<dyn Provider>, Arc<dyn ToolGate>, _) = match &args.replay {
        Some(file) => {
            let file = cwd.join(file);
            let text = std::fs::read_to_string(&file)
                .map_err(|e| LaunchError::new(format!("cannot read the recording {}: {e}", file.display())))?;
            let bad = |e: String| LaunchError::new(format!("cannot read the recording {}: {e}", file.display()));
            let provider = Replayer::parse(&text).map_err(|e| bad(e.to_string()))?;
            let mcp = McpHub::from_recording(&text).map_err(|e| bad(e.to_string()))?;
            let tools = ReplayedTools::from_cassette(&text, Arc::new(mcp)).map_err(bad)?;
            (Arc::new(provider), Arc::new(tools), recorded_invocation(&text))
        }
        None => {
            let http = HttpClient::new(HttpOptions::default()).map_err(|e| LaunchError::new(e.to_string()))?;
            let mcp = McpHub::connect(&program.tools, &McpOptions::default()).await;
            let tools = LiveTools { cassette: None, mcp: Arc::new(mcp) };
            (Arc::new(Router::from_env(http)), Arc::new(tools), None)
        }
    };
    let work_dir = args.work_dir.as_deref().map_or(cwd.clone(), |dir| cwd.join(dir));
    let jail = Jail::new(&work_dir)
        .map_err(|e| LaunchError::new(format!("bad work directory {}: {e}", work_dir.display())))?;
    let defaults = RunOptions::default();
    let options = RunOptions {
        default_model: args.model.clone(),
        override_model: args.override_model.clone(),
        max_turns: args.max_turns.unwrap_or(defaults.max_turns),
        entry: args.entry.clone(),
        allow_host_tools: args.allow_host_tools.unwrap_or(false),
        allow_unsandboxed: args.allow_unsandboxed.unwrap_or(false),
        ..defaults
    };
    Ok(Launch {
        program,
        seams: Seams { provider, tools, jail, options },
        prompt: args.prompt.clone().unwrap_or_default(),
        invocation,
        stop_on_entry: args.stop_on_entry.unwrap_or(false),
        no_debug: args.no_debug.unwrap_or(false),
    })
}

/// Diagnostics as `file:line:col: error[CODE]: message` lines on stderr.
fn compile_error(root: &Path, diagnostics: Vec<(PathBuf, sr_syntax::Diagnostic)>) -> LaunchError {
    let lines = diagnostics
        .iter()
        .map(|(file, d)| {
            let text = std::fs::read_to_string(file).unwrap_or_default();
            let at = LineIndex::new(&text).line_col(d.range.start());
            let (line, column) = (at.line + 1, at.col + 1);
            OutputEvent {
                category: "stderr".to_string(),
                output: format!("{}:{line}:{column}: error[{}]: {}\n", file.display(), d.code, d.message),
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
        let options = prepare(&args).await.unwrap().seams.options;
        assert!(!options.allow_host_tools && !options.allow_unsandboxed);
        let mut given = base;
        given["allowHostTools"] = true.into();
        given["allowUnsandboxed"] = true.into();
        let args: LaunchArguments = serde_json::from_value(given).unwrap();
        let options = prepare(&args).await.unwrap().seams.options;
        assert!(options.allow_host_tools && options.allow_unsandboxed);
    }
}
