//! Tool calls through the journal. A live call is journaled twice: a
//! `tool_start` line before it runs (so a call cut off by a crash is known)
//! and a `tool` line with its result and the files it changed after. A served
//! call runs nothing; in a replay or a run going back in time its file
//! changes are made again.

use serde_json::{Value, json};

use super::entry::{TOOL_KIND, TOOL_START_KIND};
use super::workspace::Before;
use super::{Decision, Divergence, Effect, EffectAt, Journal, Mode};
use crate::tools::{Tool, ToolError};

impl Journal {
    /// The result of calling `tool` with `args` at `at`: from the journal, or
    /// from the tool.
    pub async fn tool(
        &self,
        at: &EffectAt,
        tool: &dyn Tool,
        args: Value,
    ) -> Result<Result<Value, ToolError>, Divergence> {
        let name = tool.name();
        let recorded = match self.decide(at) {
            Decision::Live => return Ok(self.live_tool(at, tool, &name, args).await),
            Decision::Missing => return Err(self.missing(at, &format!("a call of tool '{name}'"))),
            Decision::Serve(Effect::Tool { name: recorded, args: recorded_args, outcome, changes, .. }) => {
                if *recorded != name || *recorded_args != args {
                    return Err(tool_divergence(recorded, recorded_args, &name, &args));
                }
                (outcome, changes)
            }
            Decision::Serve(other) => {
                return Err(Divergence(format!(
                    "the run calls tool '{name}' with {} where the journal recorded {}",
                    super::entry::shown(&args),
                    other.describe()
                )));
            }
        };
        let (outcome, changes) = recorded;
        if let Some(workspace) = &self.workspace
            && matches!(self.mode, Mode::Replay | Mode::Travel)
            && let Err(e) = workspace.redo(&self.recorded, changes)
        {
            return Ok(Err(ToolError(e)));
        }
        Ok(match outcome {
            Some(Ok(value)) => Ok(value.clone()),
            Some(Err(error)) => Err(ToolError(error.clone())),
            // The live run was cancelled during the call (a timeout, a failed
            // sibling branch): a replay waits to be cancelled at the same point.
            None if self.mode == Mode::Replay && self.recorded.ended() => std::future::pending().await,
            None => {
                // It may have taken effect: never run it twice. The answer is
                // journaled, so a later resume serves it as well.
                let error = format!(
                    "the call of '{name}' with {args} was cut off when the run was interrupted; it is not repeated \
                     because it may already have taken effect: check its effect before calling it again"
                );
                let step = self.take_step();
                let head = json!({"at": &*at.thread, "n": at.n, "step": step, "name": name, "args": args});
                let mut entry = head.clone();
                entry["kind"] = json!(TOOL_KIND);
                entry["error"] = json!(error);
                if let Err(e) = self.write(&entry) {
                    return Ok(Err(ToolError(e)));
                }
                Err(ToolError(error))
            }
        })
    }

    async fn live_tool(&self, at: &EffectAt, tool: &dyn Tool, name: &str, args: Value) -> Result<Value, ToolError> {
        if !self.writes() {
            return tool.call(args).await;
        }
        let step = self.take_step();
        let mut entry = json!({"at": &*at.thread, "n": at.n, "step": step, "name": name, "args": args});
        entry["kind"] = json!(TOOL_START_KIND);
        self.write(&entry).map_err(|e| ToolError(format!("cannot record the tool call: {e}")))?;
        let before = match &self.workspace {
            Some(workspace) => workspace.before(name, &args),
            None => Before::Nothing,
        };
        let result = tool.call(args).await;
        entry["kind"] = json!(TOOL_KIND);
        match &result {
            Ok(value) => entry["result"] = value.clone(),
            Err(e) => entry["error"] = json!(e.0),
        }
        if let Some(workspace) = &self.workspace {
            let (changes, blobs) = workspace.after(before);
            if !changes.is_empty() {
                self.write_blobs(&blobs).map_err(|e| ToolError(format!("cannot record the tool's files: {e}")))?;
                entry["files"] = serde_json::to_value(&changes).expect("changes always serialize");
            }
        }
        self.write(&entry).map_err(|e| ToolError(format!("cannot record the tool result: {e}")))?;
        result
    }
}

/// What differs between the recorded call and the run's.
fn tool_divergence(recorded: &str, recorded_args: &Value, name: &str, args: &Value) -> Divergence {
    if recorded != name {
        return Divergence(format!(
            "the run calls tool '{name}' where the journal recorded a call of tool '{recorded}' with {}",
            super::entry::shown(recorded_args)
        ));
    }
    let differences = sr_llm::differences(recorded_args, args);
    let mut message = format!("the arguments of tool '{name}' differ from the journal's at:");
    for difference in differences.iter().take(4) {
        message.push_str(&format!("\n  {difference}"));
    }
    if differences.len() > 4 {
        message.push_str(&format!("\n  … and {} more", differences.len() - 4));
    }
    Divergence(message)
}
