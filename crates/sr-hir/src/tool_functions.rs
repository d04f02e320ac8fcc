//! The functions of builtin tools: what `TOOL.FUNCTION(args)` can call in a
//! flow and what an agent given the tool sees.
//!
//! This table is the one list of builtin tool functions and their parameters:
//! the checker reports calls it does not allow (SR117, SR118), the runtime
//! builds the tools' declarations from it, and a flow's positional arguments
//! are bound in the order of `params`.

use crate::hir::ToolData;

/// One parameter of a tool function.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Param {
    pub name: &'static str,
    pub doc: &'static str,
    pub required: bool,
}

/// One function of a builtin tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ToolFunction {
    pub name: &'static str,
    /// What the model is told the function does.
    pub doc: &'static str,
    /// Required parameters first: the order positional arguments bind in.
    pub params: &'static [Param],
    /// What a call in a flow gives.
    pub value: &'static str,
}

impl ToolFunction {
    /// `write_file(path, content?)`.
    pub fn signature(&self) -> String {
        let params: Vec<String> =
            self.params.iter().map(|p| format!("{}{}", p.name, if p.required { "" } else { "?" })).collect();
        format!("{}({})", self.name, params.join(", "))
    }

    pub fn required(&self) -> usize {
        self.params.iter().filter(|p| p.required).count()
    }

    pub fn param(&self, name: &str) -> Option<&Param> {
        self.params.iter().find(|p| p.name == name)
    }

    /// "one argument", "1 or 2 arguments".
    pub fn arity_text(&self) -> String {
        let (min, max) = (self.required(), self.params.len());
        match (min, max) {
            (0, 0) => "no arguments".to_string(),
            (1, 1) => "one argument".to_string(),
            (min, max) if min == max => format!("{max} arguments"),
            (min, max) => format!("{min} or {max} arguments"),
        }
    }
}

const PATH: Param = Param { name: "path", doc: "Path relative to the working directory.", required: true };

const fn p(name: &'static str, doc: &'static str, required: bool) -> Param {
    Param { name, doc, required }
}

/// The functions of `streetrace.fs`, in the order an agent is offered them.
#[rustfmt::skip]
pub const FS: &[ToolFunction] = &[
    ToolFunction { name: "read_file", doc: "Read the contents of a text file.", params: &[PATH], value: "the file's text (`\"<binary>\"` when it is not UTF-8)" },
    ToolFunction { name: "create_directory", doc: "Create a directory and its parents.", params: &[PATH], value: "the message `created PATH`" },
    ToolFunction { name: "write_file", doc: "Write text to a file, replacing its contents and creating missing directories.", params: &[PATH, p("content", "The text to write.", false)], value: "the message `wrote N bytes`" },
    ToolFunction { name: "append_to_file", doc: "Append text to a file.", params: &[PATH, p("content", "The text to append.", true)], value: "the message `wrote N bytes`" },
    ToolFunction { name: "list_directory", doc: "List the files and directories in a directory.", params: &[PATH], value: "a list of names, sorted, directories first and ending in `/` (`.git` left out)" },
    ToolFunction { name: "find_in_files", doc: "Search files matching a glob pattern for a string (case-insensitive).", params: &[p("pattern", "Glob pattern relative to the working directory, e.g. **/*.py.", true), p("search_string", "Text to find.", true)], value: "a list of `{filepath, line_number, snippet}` objects (at most 200)" },
];

/// The functions of `streetrace.state`: an agent reads and writes the calling
/// flow's variables and ends its loop. The runtime lists the variables a key
/// may name in the tool's declaration.
#[rustfmt::skip]
pub const STATE: &[ToolFunction] = &[
    ToolFunction { name: "set_state", doc: "Set a variable of the workflow that runs you.", params: &[p("key", "The variable's name.", true), p("value", "Its new value (any JSON value).", true)], value: "the message `set KEY`" },
    ToolFunction { name: "get_state", doc: "Read a variable of the workflow that runs you.", params: &[p("key", "The variable's name.", true)], value: "the variable's value" },
    ToolFunction { name: "exit_loop", doc: "End the workflow's loop that runs you once this turn is done.", params: &[], value: "the message `the loop ends after this step`" },
];

/// The function of `streetrace.cli` (also `.network` and `.host`).
#[rustfmt::skip]
pub const CLI: &[ToolFunction] = &[
    ToolFunction { name: "execute_cli_command", doc: "Run a program with arguments in the working directory (no shell) and return its output.", params: &[p("command", "Program and arguments.", true)], value: "`{tool_name, result, stdout, stderr, return_code}` (and `error` when it did not run to the end)" },
];

/// The function of an `executor` in a flow: `EXECUTOR.run(code, options?)`
/// runs Python in the executor's sandbox, without a model.
#[rustfmt::skip]
pub const EXECUTOR: &[ToolFunction] = &[
    ToolFunction { name: "run", doc: "Run Python code in the executor's sandbox.", params: &[p("code", "The Python code.", true), p("options", "`{input, timeout}`: a value the code reads as `input`, and the step's time limit in seconds.", false)], value: "`{outcome, stdout, stderr, result, error}`: `outcome` is `\"ok\"`, `\"error\"` or `\"timeout\"`" },
];

/// The functions `fs_readonly` keeps.
pub const FS_READONLY: [&str; 3] = ["read_file", "list_directory", "find_in_files"];

/// What a `tool` definition (or a bare name in an agent's `tools`) gives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolKind {
    /// An MCP server: its functions are known only once it is connected.
    Mcp,
    /// A remote A2A agent: agents call it with a request; flows cannot call it.
    A2a,
    Fs,
    FsReadonly,
    /// `execute_cli_command`.
    Cli,
    /// `streetrace.state` (our extension).
    State,
    /// A builtin reference that gives no tools.
    None,
}

impl ToolKind {
    /// Upstream's rule for builtins: the reference (or the name) is matched by
    /// substring, in order: `fs_readonly`, `fs`, `cli`; then ours, `state`.
    pub fn of(name: &str, data: Option<&ToolData>) -> ToolKind {
        if data.is_some_and(ToolData::is_mcp) {
            return ToolKind::Mcp;
        }
        if let Some(ToolData::A2a { .. }) = data {
            return ToolKind::A2a;
        }
        let key = data.and_then(ToolData::builtin_key).unwrap_or(name).to_lowercase();
        if key.contains("fs_readonly") {
            ToolKind::FsReadonly
        } else if key.contains("fs") {
            ToolKind::Fs
        } else if key.contains("cli") {
            ToolKind::Cli
        } else if key.contains("state") {
            ToolKind::State
        } else {
            ToolKind::None
        }
    }

    /// The functions of the tool, when this table knows them (not for MCP
    /// servers).
    pub fn functions(self) -> Option<Vec<&'static ToolFunction>> {
        match self {
            ToolKind::Fs => Some(FS.iter().collect()),
            ToolKind::FsReadonly => Some(FS.iter().filter(|f| FS_READONLY.contains(&f.name)).collect()),
            ToolKind::State => Some(STATE.iter().collect()),
            ToolKind::Cli => Some(CLI.iter().collect()),
            ToolKind::None | ToolKind::A2a => Some(Vec::new()),
            ToolKind::Mcp => None,
        }
    }
}

/// The function `name` of `streetrace.fs`.
pub fn fs_function(name: &str) -> Option<&'static ToolFunction> {
    FS.iter().find(|f| f.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn required_parameters_come_first_and_names_are_unique() {
        let all: Vec<&ToolFunction> = FS.iter().chain(STATE).chain(CLI).chain(EXECUTOR).collect();
        for (i, f) in all.iter().enumerate() {
            assert!(all[..i].iter().all(|g| g.name != f.name), "{} twice", f.name);
            assert!(f.params.windows(2).all(|w| w[0].required || !w[1].required), "{}", f.name);
        }
        assert!(FS_READONLY.iter().all(|n| fs_function(n).is_some()));
        assert_eq!(fs_function("write_file").unwrap().signature(), "write_file(path, content?)");
        assert_eq!(fs_function("write_file").unwrap().arity_text(), "1 or 2 arguments");
        assert_eq!(fs_function("find_in_files").unwrap().arity_text(), "2 arguments");
        assert_eq!(STATE[2].arity_text(), "no arguments");
    }

    #[test]
    fn kinds_follow_upstreams_substring_rule() {
        let builtin = |r: &str| ToolKind::of("t", Some(&ToolData::Builtin(r.into())));
        assert_eq!(builtin("streetrace.fs"), ToolKind::Fs);
        assert_eq!(builtin("streetrace.fs_readonly"), ToolKind::FsReadonly);
        assert_eq!(builtin("streetrace.cli"), ToolKind::Cli);
        assert_eq!(builtin("streetrace.web"), ToolKind::None);
        assert_eq!(builtin("streetrace.state"), ToolKind::State);
        assert_eq!(ToolKind::of("my_fs", None), ToolKind::Fs);
        let readonly: Vec<&str> = ToolKind::FsReadonly.functions().unwrap().iter().map(|f| f.name).collect();
        assert_eq!(readonly, ["read_file", "list_directory", "find_in_files"]);
        assert_eq!(ToolKind::Mcp.functions(), None);
    }

    /// docs/runtime.md lists every function with its signature and value.
    #[test]
    fn the_documentation_lists_every_function() {
        let docs = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/runtime.md")).unwrap();
        for f in FS.iter().chain(STATE).chain(CLI).chain(EXECUTOR) {
            let row = format!("| `{}` | {} |", f.signature(), f.value);
            assert!(docs.contains(&row), "docs/runtime.md lacks the row {row}");
        }
    }
}
