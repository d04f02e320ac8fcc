//! Upstream's YAML agents as a second kind of workload. A YAML agent (with its
//! sub-agents, `$ref`s to other YAML files and inline agents) becomes the same
//! program a `.sr` file compiles to: `sub_agents` are `delegate`s, agents among
//! `tools` are `use`s, `streetrace` tools are builtin tools, `mcp` tools are
//! MCP servers.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use indexmap::IndexMap;
use serde::Deserialize;
use sr_hir::Diagnostic;
use sr_hir::template::parse_template;
use sr_hir::{AgentData, Named, PartId, PromptBody, PromptData, SourceMap, ToolData};
use sr_syntax::{LineIndex, SyntaxError, TextRange, TextSize};

use crate::compile::{AgentSpec, CompileError, Compiled, Entry, ModelSpec, Source, SourceRef, display_path};

#[derive(Debug, Deserialize)]
struct Spec {
    name: String,
    #[serde(default)]
    description: String,
    model: Option<String>,
    instruction: Option<String>,
    global_instruction: Option<String>,
    prompt: Option<String>,
    #[serde(default)]
    tools: Vec<ToolEntry>,
    #[serde(default)]
    sub_agents: Vec<AgentEntry>,
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum ToolEntry {
    Streetrace { streetrace: StreetraceTool },
    Mcp { mcp: McpTool },
    Agent(AgentEntry),
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum AgentEntry {
    Ref {
        #[serde(rename = "$ref")]
        reference: String,
    },
    Inline {
        agent: Box<Spec>,
    },
}

#[derive(Debug, Deserialize)]
struct StreetraceTool {
    module: String,
    function: String,
}

#[derive(Debug, Deserialize)]
struct McpTool {
    name: String,
    server: McpServer,
}

#[derive(Debug, Deserialize)]
struct McpServer {
    #[serde(rename = "type", default)]
    transport: Option<String>,
    url: Option<String>,
    command: Option<String>,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    headers: IndexMap<String, String>,
}

/// The YAML document: the agent itself, or under a top-level `agent:` key.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum Document {
    Wrapped { agent: Spec },
    Bare(Spec),
}

fn error(path: &Path, message: String) -> CompileError {
    CompileError {
        diagnostics: vec![(
            path.to_path_buf(),
            Diagnostic::new(SyntaxError::InvalidYamlAgent { problem: message }.into(), TextRange::default()),
        )],
    }
}

fn named(name: impl Into<String>) -> Named {
    Named { name: sr_hir::Name::from(name.into()), part: PartId(0) }
}

pub fn load(path: &Path) -> Result<Arc<Compiled>, CompileError> {
    let text = sr_files::read_source(path).map_err(|e| error(path, format!("cannot read {}: {e}", path.display())))?;
    let mut builder = Builder {
        program: Compiled {
            root: path.to_path_buf(),
            sources: vec![Source {
                path: path.to_path_buf(),
                display: display_path(path).into(),
                index: LineIndex::new(&text),
            }],
            models: IndexMap::new(),
            schemas: IndexMap::new(),
            tools: IndexMap::new(),
            prompts: IndexMap::new(),
            agents: IndexMap::new(),
            flows: IndexMap::new(),
            handlers: Vec::new(),
            retry_policies: IndexMap::new(),
            timeout_policies: IndexMap::new(),
            policies: IndexMap::new(),
            executors: IndexMap::new(),
            entry: None,
            warnings: Vec::new(),
        },
        loading: Vec::new(),
    };
    let root = builder.file(path, &text)?;
    builder.program.entry = Some(Entry::Agent(root.into()));
    Ok(Arc::new(builder.program))
}

struct Builder {
    program: Compiled,
    /// Files being loaded, to refuse `$ref` cycles.
    loading: Vec<PathBuf>,
}

impl Builder {
    fn file(&mut self, path: &Path, text: &str) -> Result<String, CompileError> {
        let document: Document = serde_norway::from_str(text)
            .map_err(|e| error(path, format!("{}: not a valid YAML agent: {e}", path.display())))?;
        let spec = match document {
            Document::Wrapped { agent } | Document::Bare(agent) => agent,
        };
        self.loading.push(path.to_path_buf());
        let name = self.agent(path, spec, true)?;
        self.loading.pop();
        Ok(name)
    }

    fn reference(&mut self, from: &Path, entry: AgentEntry) -> Result<String, CompileError> {
        match entry {
            AgentEntry::Inline { agent } => self.agent(from, *agent, false),
            AgentEntry::Ref { reference } => {
                let target = from.parent().unwrap_or(Path::new(".")).join(&reference);
                if self.loading.contains(&target) {
                    return Err(error(from, format!("`$ref: {reference}` refers back to a file being loaded")));
                }
                let text = sr_files::read_source(&target)
                    .map_err(|e| error(from, format!("`$ref: {reference}`: cannot read {}: {e}", target.display())))?;
                self.file(&target, &text)
            }
        }
    }

    fn agent(&mut self, path: &Path, spec: Spec, root: bool) -> Result<String, CompileError> {
        if !spec.name.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            || !spec.name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        {
            return Err(error(path, format!("agent name '{}' must be an identifier", spec.name)));
        }
        if self.program.agents.contains_key(spec.name.as_str()) {
            return Ok(spec.name);
        }
        let mut data = AgentData {
            named: true,
            tools: Vec::new(),
            instruction: None,
            prompt: None,
            produces: None,
            retry: None,
            timeout: None,
            description: Some(spec.description.clone()).filter(|d| !d.is_empty()),
            delegate: Vec::new(),
            use_: Vec::new(),
            history: None,
            executor: None,
            property_parts: Vec::new(),
        };
        let model = spec.model.as_ref().map(|id| {
            let name = format!("{}__model", spec.name);
            self.program.models.insert(name.as_str().into(), ModelSpec::of(id));
            named(name)
        });
        let instruction = [spec.global_instruction.as_deref().filter(|_| root), spec.instruction.as_deref()]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join("\n\n");
        if !instruction.is_empty() || model.is_some() {
            let name = format!("{}__instruction", spec.name);
            self.prompt(&name, &instruction, model);
            data.instruction = Some(named(name));
        }
        if let Some(prompt) = &spec.prompt {
            let name = format!("{}__prompt", spec.name);
            self.prompt(&name, prompt, None);
            data.prompt = Some(named(name));
        }
        for tool in spec.tools {
            match tool {
                ToolEntry::Streetrace { streetrace } => {
                    // Named by the function, so the agent gets that function of the module.
                    self.program.tools.insert(
                        streetrace.function.as_str().into(),
                        ToolData::Builtin(format!("streetrace.{}", streetrace.module)),
                    );
                    data.tools.push(named(streetrace.function));
                }
                ToolEntry::Mcp { mcp } => {
                    let url = match (mcp.server.transport.as_deref(), &mcp.server.url, &mcp.server.command) {
                        (Some("stdio") | None, _, Some(command)) => {
                            let words =
                                std::iter::once(command.as_str()).chain(mcp.server.args.iter().map(String::as_str));
                            match shlex::try_join(words) {
                                Ok(line) => format!("stdio:{line}"),
                                Err(e) => return Err(error(path, format!("MCP tool '{}': {e}", mcp.name))),
                            }
                        }
                        (_, Some(url), _) => url.clone(),
                        _ => return Err(error(path, format!("MCP tool '{}' needs a `url` or a `command`", mcp.name))),
                    };
                    let options = mcp.server.headers.into_iter().map(|(k, v)| (k.as_str().into(), v)).collect();
                    self.program.tools.insert(mcp.name.as_str().into(), ToolData::Mcp { url, auth: None, options });
                    data.tools.push(named(mcp.name));
                }
                ToolEntry::Agent(entry) => {
                    let used = self.reference(path, entry)?;
                    data.use_.push(named(used));
                }
            }
        }
        for entry in spec.sub_agents {
            let delegate = self.reference(path, entry)?;
            data.delegate.push(named(delegate));
        }
        let source = SourceRef { file: 0, offset: TextSize::from(0), map: Arc::new(SourceMap::default()) };
        self.program.agents.insert(
            spec.name.as_str().into(),
            AgentSpec { name: spec.name.as_str().into(), data, handlers: Vec::new(), source },
        );
        Ok(spec.name)
    }

    fn prompt(&mut self, name: &str, text: &str, model: Option<Named>) {
        let text = expand_env(text);
        let text = text.as_str();
        let template = parse_template(text, TextSize::from(0), &mut Vec::new());
        let body = PromptBody { text: text.into(), template };
        let data = PromptData { body: Some(body), model, expecting: None, inherit: None, escalation: None };
        self.program.prompts.insert(name.into(), data);
    }
}

/// Upstream expands `${VAR}` and `${VAR:-default}` from the environment when it
/// loads a YAML agent.
fn expand_env(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        let Some(end) = rest[start..].find('}') else { break };
        out.push_str(&rest[..start]);
        let expression = &rest[start + 2..start + end];
        let (var, default) = expression.split_once(":-").unwrap_or((expression, ""));
        out.push_str(&std::env::var(var).unwrap_or_else(|_| default.to_string()));
        rest = &rest[start + end + 1..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yaml_agents_become_programs() {
        let dir = std::env::temp_dir().join(format!("sr-yaml-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("helper.yaml"), "name: helper\ndescription: Helps\ninstruction: Help.\n").unwrap();
        std::fs::write(
            dir.join("main.yml"),
            "version: 1\nkind: agent\nname: main_agent\ndescription: Main\nmodel: openai/gpt-4o\n\
             instruction: Be ${SR_YAML_TEST_MOOD:-kind}.\n\
             tools:\n  - streetrace: {module: fs_tool, function: read_file}\n  - $ref: helper.yaml\n\
             sub_agents:\n  - agent: {name: inline_one, description: Inline, instruction: Inline.}\n",
        )
        .unwrap();
        let program = load(&dir.join("main.yml")).unwrap();
        assert_eq!(program.entry, Some(Entry::Agent("main_agent".into())));
        let main = &program.agents["main_agent"];
        assert_eq!(main.data.use_[0].name, "helper");
        assert_eq!(main.data.delegate[0].name, "inline_one");
        assert_eq!(main.data.tools[0].name, "read_file");
        assert_eq!(program.models["main_agent__model"].id, "openai/gpt-4o");
        let instruction = &program.prompts["main_agent__instruction"];
        assert_eq!(&*instruction.body.as_ref().unwrap().text, "Be kind.");
        assert!(load(&dir.join("helper.yaml")).is_ok());
    }
}
