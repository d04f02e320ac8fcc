//! The launch configuration of the `sr dap` debug adapter: what the adapter
//! reads from a `launch` request and what the language server writes for a
//! Debug lens, one type so that the two cannot name a field differently.
//! Every field is optional and unknown fields are ignored, so that any
//! client's dialect deserializes.

use serde::{Deserialize, Serialize};

/// `launch`: what to run and with which seams.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase", default)]
pub struct LaunchArguments {
    /// The `.sr` file (or upstream YAML agent) to run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub program: Option<String>,
    /// The user's message (`$input_prompt`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prompt: Option<String>,
    /// Model for agents and prompts that name none (`sr run --model`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Every call goes to this model (`sr run --override-model`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub override_model: Option<String>,
    /// Serve model exchanges and tool results from this recording (offline).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replay: Option<String>,
    /// Write every model exchange and tool result to this file (a cassette
    /// for `replay` later).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub record: Option<String>,
    /// Directory file tools work in (default: the adapter's current directory).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub work_dir: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stop_on_entry: Option<bool>,
    /// Run without the debugger (no breakpoints, logpoints or steps); the output still shows.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub no_debug: Option<bool>,
    /// Model turns an agent may take.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_turns: Option<u32>,
    /// Start at this flow or agent instead of the entry point (`sr run --entry`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub entry: Option<String>,
    /// Let `streetrace.cli.host` tools run commands on the host (`sr run --allow-host-tools`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub allow_host_tools: Option<bool>,
    /// Let coding agents use `backend: unsandboxed` (`sr run --allow-unsandboxed`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub allow_unsandboxed: Option<bool>,
}

/// A client's debug configuration: the editor's own fields, then the
/// adapter's launch arguments.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
pub struct DebugConfiguration {
    /// `streetrace`: the debugger type the editor extensions register.
    #[serde(rename = "type")]
    pub kind: String,
    /// `launch`.
    pub request: String,
    /// What the editor shows for the session.
    pub name: String,
    #[serde(flatten)]
    pub arguments: LaunchArguments,
}

impl DebugConfiguration {
    /// A `streetrace` launch configuration named `name`.
    pub fn launch(name: String, arguments: LaunchArguments) -> DebugConfiguration {
        DebugConfiguration { kind: "streetrace".to_string(), request: "launch".to_string(), name, arguments }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn unset_fields_are_left_out_and_names_are_the_adapters() {
        let arguments = LaunchArguments {
            program: Some("/w/main.sr".to_string()),
            work_dir: Some("/w".to_string()),
            stop_on_entry: Some(true),
            ..LaunchArguments::default()
        };
        let written = serde_json::to_value(DebugConfiguration::launch("Debug".to_string(), arguments.clone())).unwrap();
        assert_eq!(
            written,
            json!({"type": "streetrace", "request": "launch", "name": "Debug",
                   "program": "/w/main.sr", "workDir": "/w", "stopOnEntry": true})
        );
        let read: DebugConfiguration = serde_json::from_value(written).unwrap();
        assert_eq!(read.arguments, arguments);
    }

    #[test]
    fn unknown_fields_and_missing_ones_deserialize() {
        let read: LaunchArguments = serde_json::from_value(json!({"program": "a.sr", "colour": 1})).unwrap();
        assert_eq!(read.program.as_deref(), Some("a.sr"));
        assert_eq!(read.entry, None);
    }
}
