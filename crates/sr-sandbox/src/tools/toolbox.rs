//! The tools of one session: their generated functions and compiled argument schemas.

use std::collections::HashMap;

use serde_json::Value;

use super::ToolSpec;
use super::stubs::{self, Stub};
use crate::SandboxError;

/// Names the driver puts beside the tools in the agent's namespace.
const RESERVED: &[&str] = &["final_answer", "ToolError"];

/// At most this many schema errors are reported for one call.
const MAX_REPORTED_ERRORS: usize = 5;

pub(crate) struct Toolbox {
    tools: Vec<Tool>,
    by_name: HashMap<String, usize>,
}

struct Tool {
    spec: ToolSpec,
    function: String,
    stub: Stub,
    validator: jsonschema::Validator,
}

impl Toolbox {
    pub(crate) fn new(specs: Vec<ToolSpec>) -> Result<Toolbox, SandboxError> {
        let mut tools: Vec<Tool> = Vec::with_capacity(specs.len());
        let mut by_name = HashMap::new();
        for spec in specs {
            let function = stubs::identifier(&spec.name);
            if RESERVED.contains(&function.as_str()) {
                return Err(SandboxError::Tools(format!(
                    "tool '{}' clashes with the sandbox's `{function}`",
                    spec.name
                )));
            }
            if let Some(other) = tools.iter().find(|tool| tool.function == function) {
                return Err(SandboxError::Tools(format!(
                    "tools '{}' and '{}' both become the Python function `{function}`",
                    other.spec.name, spec.name
                )));
            }
            let validator = jsonschema::validator_for(&spec.parameters)
                .map_err(|error| SandboxError::Tools(format!("tool '{}' has an invalid schema: {error}", spec.name)))?;
            let stub = stubs::stub(&spec.name, &function, &spec.description, &spec.parameters);
            by_name.insert(spec.name.clone(), tools.len());
            tools.push(Tool { spec, function, stub, validator });
        }
        Ok(Toolbox { tools, by_name })
    }

    /// The module the driver executes to define the tool functions.
    pub(crate) fn module(&self) -> String {
        let mut source = stubs::PRELUDE.to_string();
        for tool in &self.tools {
            source.push_str("\n\n");
            source.push_str(&tool.stub.header);
            source.push_str(&tool.stub.body);
        }
        source
    }

    /// Signatures and docstrings, for the system prompt.
    pub(crate) fn signatures(&self) -> String {
        self.tools.iter().map(|tool| format!("{}    ...\n", tool.stub.header)).collect::<Vec<_>>().join("\n")
    }

    pub(crate) fn functions(&self) -> Vec<String> {
        self.tools.iter().map(|tool| tool.function.clone()).collect()
    }

    /// Checks that `name` is one of this session's tools and `args` fit its schema.
    pub(crate) fn validate(&self, name: &str, args: &Value) -> Result<(), Invalid> {
        let Some(&index) = self.by_name.get(name) else {
            return Err(Invalid::NoTool);
        };
        let errors: Vec<String> = self.tools[index]
            .validator
            .iter_errors(args)
            .take(MAX_REPORTED_ERRORS)
            .map(|error| {
                let path = error.instance_path().to_string();
                if path.is_empty() { error.to_string() } else { format!("{path}: {error}") }
            })
            .collect();
        if errors.is_empty() { Ok(()) } else { Err(Invalid::Arguments(errors)) }
    }
}

/// Why a call does not fit the session's tools.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Invalid {
    /// No tool has the name.
    NoTool,
    /// The schema's complaints (at most `MAX_REPORTED_ERRORS`), each at its
    /// place in the arguments.
    Arguments(Vec<String>),
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn spec(name: &str, parameters: Value) -> ToolSpec {
        ToolSpec { name: name.to_string(), description: String::new(), parameters }
    }

    #[test]
    fn validates_names_and_arguments() {
        let schema = json!({
            "type": "object",
            "properties": {"city": {"type": "string"}, "days": {"type": "integer", "minimum": 1}},
            "required": ["city"],
            "additionalProperties": false
        });
        let toolbox = Toolbox::new(vec![spec("weather", schema)]).unwrap();
        assert_eq!(toolbox.validate("weather", &json!({"city": "Oslo", "days": 2})), Ok(()));
        assert_eq!(toolbox.validate("nope", &json!({})), Err(Invalid::NoTool));
        let Err(Invalid::Arguments(problems)) = toolbox.validate("weather", &json!({"days": 0, "extra": 1})) else {
            panic!("the arguments passed")
        };
        let error = problems.join("; ");
        assert!(error.contains("\"city\" is a required property"), "{error}");
        assert!(error.contains("/days: 0 is less than the minimum of 1"), "{error}");
        assert!(error.contains("extra"), "{error}");
    }

    #[test]
    fn rejects_clashing_names_and_bad_schemas() {
        let clash = Toolbox::new(vec![spec("a-b", json!({})), spec("a.b", json!({}))]).err().unwrap();
        assert_eq!(clash.to_string(), "tools 'a-b' and 'a.b' both become the Python function `a_b`");
        let reserved = Toolbox::new(vec![spec("final_answer", json!({}))]).err().unwrap();
        assert!(reserved.to_string().contains("clashes"), "{reserved}");
        let invalid = Toolbox::new(vec![spec("t", json!({"type": 12}))]).err().unwrap();
        assert!(invalid.to_string().contains("invalid schema"), "{invalid}");
    }
}
