//! `streetrace.state`: an agent reads and writes the variables of the flow
//! that runs it (`set_state`, `get_state`) and ends that flow's loop once its
//! turn is done (`exit_loop`). Functions from `sr_hir::tool_functions::STATE`.
//!
//! A key must name a variable the calling flow assigns and that is defined
//! when the agent runs; the tool's declaration lists them as an `enum`. The
//! tool touches nothing outside the run: it is not recorded, and a replay or
//! a resumed run makes the same writes from the recorded model replies.

use serde_json::{Value, json};
use sr_hir::tool_functions::STATE;
use sr_hir::{Binding, Stmt};
use sr_llm::ToolSpec;

use crate::event::Payload;
use crate::hook::FrameKind;
use crate::run::{Runtime, Thread};

impl Runtime {
    /// The variables a key may name, in the order the calling flow first assigns them.
    fn state_keys(&self, th: &Thread) -> (Option<String>, Vec<String>) {
        let Some(frame) = th.frames.iter().rev().find(|f| f.kind == FrameKind::Flow) else {
            return (None, Vec::new());
        };
        let mut keys: Vec<String> = Vec::new();
        if let Some(spec) = &frame.body {
            spec.body.walk_stmts(&mut |_, stmt| {
                let assigned = match (stmt.binds(), stmt) {
                    (Some(Binding::Assign(place) | Binding::Loop(place)), _) => Some(&place.name),
                    // `$x.f = …` names its variable too.
                    (_, Stmt::Assign { target, .. }) => Some(&target.name),
                    (Some(Binding::HumanInput) | None, _) => None,
                };
                if let Some(name) = assigned
                    && th.vars.contains_key(name.as_str())
                    && !keys.iter().any(|k| k == name.as_str())
                {
                    keys.push(name.to_string());
                }
            });
        }
        (Some(frame.name.clone()), keys)
    }

    /// What the model sees of state function `name`: its keys as an `enum`.
    pub(crate) fn state_spec(&self, th: &Thread, name: &str) -> Option<ToolSpec> {
        let function = STATE.iter().find(|f| f.name == name)?;
        let (_, keys) = self.state_keys(th);
        let properties: serde_json::Map<String, Value> = function
            .params
            .iter()
            .map(|p| {
                let schema = match p.name {
                    "key" => json!({"type": "string", "enum": keys, "description": p.doc}),
                    _ => json!({"description": p.doc}),
                };
                (p.name.to_string(), schema)
            })
            .collect();
        let required: Vec<&str> = function.params.iter().filter(|p| p.required).map(|p| p.name).collect();
        Some(ToolSpec {
            name: function.name.to_string(),
            description: function.doc.to_string(),
            parameters: json!({"type": "object", "properties": properties, "required": required}),
        })
    }

    /// Runs state function `name`; the result and whether it is an error.
    pub(crate) fn state_call(&self, th: &mut Thread, name: &str, args: &Value) -> (Value, bool) {
        if name == "exit_loop" {
            th.exit_loop = true;
            return (json!("the loop ends after this step"), false);
        }
        let (flow, keys) = self.state_keys(th);
        let Some(flow) = flow else {
            return (json!("no workflow runs you: there are no variables to read or set"), true);
        };
        let key = match args.get("key") {
            Some(Value::String(key)) if keys.contains(key) => key.clone(),
            other => {
                let given = other.map_or("no key".to_string(), |k| format!("'{}'", crate::value::display(k)));
                let known = if keys.is_empty() { "none is defined yet".to_string() } else { keys.join(", ") };
                return (
                    json!(format!("{given} is not a variable of workflow '{flow}'; the variables are: {known}")),
                    true,
                );
            }
        };
        match name {
            "set_state" => {
                let value = args.get("value").cloned().unwrap_or(Value::Null);
                th.vars.insert(key.clone(), value.clone());
                th.emitter.emit(Payload::StateChange { variable: key.clone(), value });
                (json!(format!("set {key}")), false)
            }
            _ => (th.vars.get(&key).cloned().unwrap_or(Value::Null), false),
        }
    }
}
