//! Upstream's `execute_cli_command`: runs a program (no shell) in the work
//! directory with a time limit.

use std::time::Duration;

use futures::FutureExt;
use futures::future::BoxFuture;
use serde_json::{Value, json};

use super::{Jail, Tool, ToolError, ToolSpec};

const TIMEOUT: Duration = Duration::from_secs(120);
const MAX_OUTPUT: usize = 64 * 1024;

pub struct ExecuteCli {
    pub jail: Jail,
}

impl Tool for ExecuteCli {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "execute_cli_command".to_string(),
            description: "Run a program with arguments in the working directory (no shell) and return its output."
                .to_string(),
            parameters: json!({
                "type": "object",
                "properties": {"command": {"type": "array", "items": {"type": "string"}, "description": "Program and arguments."}},
                "required": ["command"],
            }),
        }
    }

    fn call(&self, args: Value) -> BoxFuture<'_, Result<Value, ToolError>> {
        async move {
            let command: Vec<String> = match args.get("command") {
                Some(Value::Array(items)) => items.iter().map(|i| i.as_str().unwrap_or_default().to_string()).collect(),
                Some(Value::String(line)) => line.split_whitespace().map(str::to_string).collect(),
                _ => return Err(ToolError("missing argument 'command' (a list of strings)".into())),
            };
            let Some((program, rest)) = command.split_first() else {
                return Err(ToolError("the command is empty".into()));
            };
            let run = tokio::process::Command::new(program)
                .args(rest)
                .current_dir(self.jail.root())
                .stdin(std::process::Stdio::null())
                .kill_on_drop(true)
                .output();
            let output = match tokio::time::timeout(TIMEOUT, run).await {
                Err(_) => return Ok(result("failure", "", &format!("timed out after {}s", TIMEOUT.as_secs()), None)),
                Ok(Err(e)) => return Ok(result("failure", "", &format!("cannot run '{program}': {e}"), None)),
                Ok(Ok(output)) => output,
            };
            let status = if output.status.success() { "success" } else { "failure" };
            Ok(result(status, &truncate(&output.stdout), &truncate(&output.stderr), output.status.code()))
        }
        .boxed()
    }
}

fn result(status: &str, stdout: &str, stderr: &str, code: Option<i32>) -> Value {
    json!({"tool_name": "execute_cli_command", "result": status, "stdout": stdout, "stderr": stderr, "return_code": code})
}

fn truncate(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    if text.len() <= MAX_OUTPUT {
        return text.into_owned();
    }
    let mut end = MAX_OUTPUT;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}\n… ({} more bytes)", &text[..end], text.len() - end)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn runs_in_the_work_directory() {
        let dir = std::env::temp_dir().join(format!("sr-cli-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("marker.txt"), "x").unwrap();
        let tool = ExecuteCli { jail: Jail::new(&dir).unwrap() };
        let out = tool.call(json!({"command": ["ls"]})).await.unwrap();
        assert_eq!(out["result"], "success");
        assert!(out["stdout"].as_str().unwrap().contains("marker.txt"));
        let out = tool.call(json!({"command": ["definitely-not-a-program"]})).await.unwrap();
        assert_eq!(out["result"], "failure");
    }
}
