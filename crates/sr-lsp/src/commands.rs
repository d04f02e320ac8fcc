//! `workspace/executeCommand`: the commands the code lenses and editors use,
//! answered by the server so that they work in any client.
//!
//! - `streetrace.showGraph [uri]`: the program's graph as Mermaid text.
//! - `streetrace.previewPrompt [uri, name]`: the prompt's body with what is
//!   statically known of its `${…}` resolved.
//! - `streetrace.run [runnable]` / `streetrace.debug [runnable]`: what the
//!   client must launch for a lens's `{file, target, entry}`: a command line
//!   for `sr run`, a launch configuration for the `sr dap` debug adapter.

use serde_json::{Value, json};
use tower_lsp_server::ls_types::{ExecuteCommandParams, Uri};

use crate::convert::path_of;
use crate::handlers::{Failure, Result};
use crate::owner::Snapshot;

pub(crate) const COMMANDS: [&str; 4] =
    ["streetrace.showGraph", "streetrace.previewPrompt", "streetrace.run", "streetrace.debug"];

pub(crate) fn execute(s: &Snapshot, params: ExecuteCommandParams) -> Result<Option<Value>> {
    let args = &params.arguments;
    match params.command.as_str() {
        "streetrace.showGraph" => {
            let path = path_of(&uri(args, 0)?);
            let graph = s.analysis.graph_mermaid(&path)?.ok_or_else(|| unknown_file(&path))?;
            Ok(Some(Value::String(graph)))
        }
        "streetrace.previewPrompt" => {
            let path = path_of(&uri(args, 0)?);
            let name = args.get(1).and_then(Value::as_str).ok_or_else(|| refused("expects [uri, prompt name]"))?;
            let text = s.analysis.preview_prompt(&path, name)?;
            let text = text.ok_or_else(|| refused(&format!("no prompt '{name}' with a body in {}", path.display())))?;
            Ok(Some(Value::String(text)))
        }
        command @ ("streetrace.run" | "streetrace.debug") => {
            let runnable = args.first().ok_or_else(|| refused("expects [{file, target, entry}]"))?;
            let file = runnable["file"].as_str().ok_or_else(|| refused("the runnable has no 'file'"))?;
            // The entry point runs by default; another target is named.
            let entry = match (runnable["entry"].as_bool(), runnable["target"].as_str()) {
                (Some(false), Some(target)) => Some(target),
                _ => None,
            };
            let dir = std::path::Path::new(file).parent().map(|d| d.display().to_string());
            Ok(Some(if command == "streetrace.run" {
                let mut args = vec!["run".to_string(), file.to_string()];
                args.extend(entry.map(|e| format!("--entry={e}")));
                json!({"command": "sr", "args": args, "cwd": dir})
            } else {
                let mut launch = json!({
                    "type": "streetrace", "request": "launch", "name": format!("Debug {file}"),
                    "program": file, "workDir": dir,
                });
                if let Some(entry) = entry {
                    launch["entry"] = json!(entry);
                }
                json!({"adapter": {"command": "sr", "args": ["dap"]}, "configuration": launch})
            }))
        }
        other => Err(refused(&format!("unknown command '{other}'; this server runs {}", COMMANDS.join(", ")))),
    }
}

fn uri(args: &[Value], index: usize) -> Result<Uri> {
    let text = args.get(index).and_then(Value::as_str).ok_or_else(|| refused("expects a document URI"))?;
    text.parse().map_err(|_| refused(&format!("'{text}' is not a URI")))
}

fn refused(why: &str) -> Failure {
    Failure::Refused(why.to_string())
}

fn unknown_file(path: &std::path::Path) -> Failure {
    refused(&format!("{} is not a file the server knows", path.display()))
}
