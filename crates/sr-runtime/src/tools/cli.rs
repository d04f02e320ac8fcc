//! Upstream's `execute_cli_command`: runs a program (no shell) with the work
//! directory as its current directory, in the bubblewrap sandbox coding agents
//! use (`sr_sandbox::command`): the work directory read-write but for the
//! workload's own files, the directories `sr run NAME` searches and every
//! protected name at any depth (read-only, and not creatable: the jail's
//! protected paths, and `names`) and the runtime's state (hidden),
//! the host's programs read-only, nothing else of the host, no network unless the tool is
//! declared `streetrace.cli.network`, an environment of `PATH`, `HOME`, `LANG`
//! and `SR_IDEMPOTENCY_KEY` (the call's, from the journal) only, and caps on time and output. A tool declared `streetrace.cli.host` runs
//! on the host instead, and only when the run allows it (`--allow-host-tools`).
//! Without bubblewrap, commands fail: they never fall back to the host.

use std::time::Duration;

use futures::FutureExt;
use futures::future::BoxFuture;
use serde_json::{Value, json};
use sr_hir::tool_functions::CLI;
use sr_sandbox::Limits;
use sr_sandbox::command::{Caps, Captured, Placement, Status, run_command_with};

use super::{Jail, Tool, ToolError, ToolSpec};

/// Bytes kept of each of stdout and stderr.
const MAX_OUTPUT: usize = 64 * 1024;
/// Address space of each process, and resident memory of all the command's
/// processes together: more than the coding agents' interpreter gets, since
/// compilers and runtimes reserve large ranges.
const MEMORY_BYTES: u64 = 4 << 30;
/// Where a cli tool's commands run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    Sandbox {
        network: bool,
    },
    /// On the host: `allowed` says whether the run opted in.
    Host {
        allowed: bool,
    },
}

pub struct ExecuteCli {
    pub jail: Jail,
    pub place: Place,
    pub timeout: Duration,
}

/// A host tool called in a run that did not allow host tools.
#[derive(Debug, thiserror::Error)]
#[error(
    "this tool is declared to run commands on the host (streetrace.cli.host), which needs \
     `sr run --allow-host-tools`; nothing was run"
)]
struct HostRefused;

impl ExecuteCli {
    fn placement(&self) -> Result<Placement, HostRefused> {
        let work_dir = self.jail.root().to_path_buf();
        match self.place {
            Place::Sandbox { network } => Ok(Placement::Sandbox {
                // The workload and its imports, git's directory (its hooks run
                // at the user's next commit) and StreetRace's own.
                read_only: self.jail.protected(),
                work_dir,
                hidden: self.jail.forbidden().to_vec(),
                network,
                limits: Limits { memory_bytes: MEMORY_BYTES, ..Limits::default() },
            }),
            Place::Host { allowed: true } => Ok(Placement::Host { work_dir }),
            Place::Host { allowed: false } => Err(HostRefused),
        }
    }
}

impl Tool for ExecuteCli {
    fn spec(&self) -> ToolSpec {
        let function = &CLI[0];
        ToolSpec {
            name: function.name.to_string(),
            description: function.doc.to_string(),
            parameters: json!({
                "type": "object",
                "properties": {"command": {"type": "array", "items": {"type": "string"}, "description": function.params[0].doc}},
                "required": ["command"],
            }),
        }
    }

    fn call(&self, args: Value) -> BoxFuture<'_, Result<Value, ToolError>> {
        self.run(args, None)
    }

    fn call_keyed(&self, args: Value, key: &str) -> BoxFuture<'_, Result<Value, ToolError>> {
        let key = key.to_string();
        async move { self.run(args, Some(&key)).await }.boxed()
    }
}

/// The variable a command finds its call's idempotency key in.
const IDEMPOTENCY_KEY_VAR: &str = "SR_IDEMPOTENCY_KEY";

impl ExecuteCli {
    fn run<'a>(&'a self, args: Value, key: Option<&'a str>) -> BoxFuture<'a, Result<Value, ToolError>> {
        async move {
            let command: Vec<String> = match args.get("command") {
                Some(Value::Array(items)) => items.iter().map(|i| i.as_str().unwrap_or_default().to_string()).collect(),
                Some(Value::String(line)) => line.split_whitespace().map(str::to_string).collect(),
                _ => return Err(ToolError("missing argument 'command' (a list of strings)".into())),
            };
            let Some((program, rest)) = command.split_first() else {
                return Err(ToolError("the command is empty".into()));
            };
            let mut placement = match self.placement() {
                Ok(placement) => placement,
                Err(error) => return Ok(failure(&error.to_string())),
            };
            let names = match super::names::before(&mut placement).await {
                Ok(names) => names,
                Err(error) => return Ok(failure(&format!("cannot look for protected paths: {error}"))),
            };
            let caps = Caps { timeout: self.timeout, output_bytes: MAX_OUTPUT };
            let env: Vec<(&str, &str)> = key.map(|key| (IDEMPOTENCY_KEY_VAR, key)).into_iter().collect();
            let output = match run_command_with(&placement, program, rest, caps, &env).await {
                Ok(output) => output,
                Err(error) => return Ok(failure(&format!("cannot run '{program}': {error}"))),
            };
            let made = super::names::after(names).await;
            let (stdout, stderr) = (shown(&output.stdout), shown(&output.stderr));
            match made {
                Ok(made) if made.is_empty() => {}
                Ok(made) => {
                    let mut value = result("failure", &stdout, &stderr, None);
                    let made: Vec<String> = made.iter().map(|path| format!("'{}'", path.display())).collect();
                    value["error"] = json!(format!(
                        "the command made {}, where git, sr or an editor reads code (a protected path): undone",
                        made.join(", ")
                    ));
                    return Ok(value);
                }
                Err(error) => return Ok(failure(&error.to_string())),
            }
            Ok(match output.status {
                Status::Exited(0) => result("success", &stdout, &stderr, Some(0)),
                Status::Exited(code) => result("failure", &stdout, &stderr, Some(code)),
                Status::Signalled(signal) => {
                    let mut value = result("failure", &stdout, &stderr, None);
                    value["error"] = json!(format!("killed by signal {signal}"));
                    value
                }
                Status::MemoryExceeded { .. } => {
                    let mut value = result("failure", &stdout, &stderr, None);
                    value["error"] = json!(output.status.to_string());
                    value
                }
                Status::TimedOut => {
                    let mut value = result("failure", &stdout, &stderr, None);
                    value["error"] = json!(format!(
                        "timed out: the command ran longer than {}s and was killed with everything it started",
                        self.timeout.as_secs_f64()
                    ));
                    value
                }
            })
        }
        .boxed()
    }
}

fn result(status: &str, stdout: &str, stderr: &str, code: Option<i32>) -> Value {
    json!({"tool_name": "execute_cli_command", "result": status, "stdout": stdout, "stderr": stderr, "return_code": code})
}

fn failure(error: &str) -> Value {
    json!({"tool_name": "execute_cli_command", "result": "failure", "error": error})
}

fn shown(captured: &Captured) -> String {
    if captured.dropped == 0 {
        return captured.text.clone();
    }
    format!("{}\n… ({} more bytes not shown: output is capped at {MAX_OUTPUT} bytes)", captured.text, captured.dropped)
}
