//! A workload's agent card, generated from its program: one skill per flow
//! and agent, the result schemas the program declares (in our
//! `skill-schemas` extension, as A2A's skills have no schema field), the
//! capabilities this server has, the bearer scheme when it checks keys, and
//! its JSON-RPC endpoint for A2A 1.0 and 0.3. The card carries both
//! versions' fields, as the official SDKs' servers do, so 0.3 clients read it
//! too.

use serde_json::{Map, Value, json};
use sr_runtime::compile::{Compiled, Entry};
use sr_runtime::structured::json_schema;

use crate::workloads::Workload;

/// The extension that carries each skill's input and output schema.
pub const SCHEMA_EXTENSION: &str = "https://streetrace.dev/a2a/extensions/skill-schemas/v1";

/// The protocol versions the endpoint answers, newest first.
pub const VERSIONS: [&str; 2] = ["1.0", "0.3"];

/// What the server offers that a card declares.
pub struct Options {
    /// The server asks for a bearer key.
    pub keyed: bool,
    /// Push notifications are on (`--push-host`).
    pub push: bool,
}

/// The card of `workload`, whose JSON-RPC endpoint is `endpoint`.
pub fn card(workload: &Workload, endpoint: &str, options: &Options) -> Value {
    let program = &workload.program;
    let default = default_entry(program);
    let mut skills = Vec::new();
    let mut schemas = Map::new();
    let entries =
        program.flows.keys().map(|f| (f.as_str(), "flow", None)).chain(
            program.agents.iter().map(|(name, agent)| (name.as_str(), "agent", agent.data.description.as_deref())),
        );
    for (name, kind, description) in entries {
        let output = output_schema(program, name);
        let mut text = description.map_or_else(|| format!("The {kind} '{name}'."), str::to_string);
        if default.as_deref() == Some(name) {
            text.push_str(" The default skill.");
        }
        let output_modes = if output.is_some() { "application/json" } else { "text/plain" };
        skills.push(json!({
            "id": name,
            "name": name,
            "description": text,
            "tags": [kind],
            "inputModes": ["text/plain", "application/json"],
            "outputModes": [output_modes],
        }));
        let mut schema = json!({"input": {"type": "string", "description": "the run's message ($input_prompt): its text parts, a data part as its JSON text; files land in inbox/"}});
        if let Some(output) = output {
            schema["output"] = output;
        }
        schemas.insert(name.to_string(), schema);
    }
    let description = default
        .as_deref()
        .and_then(|name| program.agents.get(name))
        .and_then(|agent| agent.data.description.clone())
        .unwrap_or_else(|| format!("The StreetRace workload '{}', served by sr serve.", workload.name));
    let interfaces: Vec<Value> = VERSIONS
        .iter()
        .map(|version| json!({"url": endpoint, "protocolBinding": "JSONRPC", "protocolVersion": version}))
        .collect();
    let mut card = json!({
        "name": workload.name,
        "description": description,
        "version": env!("CARGO_PKG_VERSION"),
        "supportedInterfaces": interfaces,
        "capabilities": {
            "streaming": true,
            "pushNotifications": options.push,
            "extensions": [{
                "uri": SCHEMA_EXTENSION,
                "description": "Each skill's input and (where the program declares one) output JSON schema, by skill id; \
                                a request picks a skill with metadata.skill",
                "required": false,
                "params": {"skills": schemas},
            }],
        },
        "defaultInputModes": ["text/plain", "application/json"],
        "defaultOutputModes": ["text/plain", "application/json"],
        "skills": skills,
        // A2A 0.3's names for the endpoint.
        "url": endpoint,
        "preferredTransport": "JSONRPC",
        "protocolVersion": "0.3.0",
    });
    if options.keyed {
        // 1.0's scheme and requirement beside 0.3's, as the SDKs serve them.
        card["securitySchemes"] = json!({"bearer": {
            "httpAuthSecurityScheme": {"scheme": "Bearer", "description": "a key of the server's --api-key-file"},
            "type": "http",
            "scheme": "Bearer",
            "description": "a key of the server's --api-key-file",
        }});
        card["securityRequirements"] = json!([{"schemes": {"bearer": {"list": []}}}]);
        card["security"] = json!([{"bearer": []}]);
    }
    card
}

/// The entry a run starts at when no skill is named.
pub fn default_entry(program: &Compiled) -> Option<String> {
    match &program.entry {
        Some(Entry::Flow(name) | Entry::Agent(name)) => Some(name.to_string()),
        None => None,
    }
}

/// The JSON schema of what `entry` returns, when the program declares one:
/// an agent whose instruction is a prompt `expecting` a schema.
pub fn output_schema(program: &Compiled, entry: &str) -> Option<Value> {
    let agent = program.agents.get(entry)?;
    let instruction = agent.data.instruction.as_ref()?;
    let expecting = program.prompts.get(&instruction.name)?.expecting.as_ref()?;
    Some(json_schema(program, expecting))
}
