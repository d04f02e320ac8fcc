//! SR117 `unknown-tool-function`: `TOOL.FUNCTION(…)` in a flow where TOOL is no
//! declared tool or executor, or the tool has no such function.
//!
//! Builtin file, cli and state tools and executors are checked (`fs.read_files(x)`,
//! `fs_readonly`'s `write_file`, `box.execute(code)`), with the nearest function
//! or the list. MCP servers' functions are not checked (they are known only at
//! run time). See docs/runtime.md, "Tool functions in flows".
//!
//! ```sr
//! tool fs = builtin streetrace.fs
//! flow main:
//!     $t = fs.read_files("a.txt")
//!     return $t
//! ```
//!
//! `tool 'fs' has no function 'read_files'`, help ``did you mean
//! `fs.read_file(path)`?``. Fix: call a function the tool has, or declare the
//! tool.

use sr_syntax::{Code, Describe};

use super::Listing;

/// `TOOL.f(…)` where TOOL is no tool or executor; `declared` lists them.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct UnknownTool {
    pub tool: String,
    pub function: String,
    pub declared: Listing,
}

/// A function the tool lacks; `closest` is the nearest signature, else `known`
/// lists the tool's signatures.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct UnknownToolFunction {
    pub tool: String,
    pub function: String,
    pub closest: Option<String>,
    pub known: Vec<String>,
}

impl Describe for UnknownTool {
    fn code(&self) -> Code {
        Code::SR117
    }

    fn message(&self) -> String {
        format!("unknown tool '{}' in `{}.{}(…)`", self.tool, self.tool, self.function)
    }

    fn help(&self) -> Option<String> {
        Some(match self.declared.is_empty() {
            true => format!("declare it, e.g. `tool {} = builtin streetrace.fs`", self.tool),
            false => format!("the declared tools and executors are: {}", self.declared),
        })
    }
}

impl Describe for UnknownToolFunction {
    fn code(&self) -> Code {
        Code::SR117
    }

    fn message(&self) -> String {
        format!("tool '{}' has no function '{}'", self.tool, self.function)
    }

    fn help(&self) -> Option<String> {
        let tool = &self.tool;
        Some(match &self.closest {
            Some(signature) => format!("did you mean `{tool}.{signature}`?"),
            None if self.known.is_empty() => format!("tool '{tool}' gives no functions"),
            None => format!("the functions of '{tool}' are: {}", self.known.join(", ")),
        })
    }
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use super::*;
    use crate::diagnostic_kinds::render;

    #[test]
    fn help_suggests_or_lists() {
        let out = [
            render(UnknownTool { tool: "files".into(), function: "read".into(), declared: Listing::default() }),
            render(UnknownTool { tool: "files".into(), function: "read".into(), declared: Listing::new(["fs"], 1) }),
            render(UnknownToolFunction {
                tool: "fs".into(),
                function: "read_files".into(),
                closest: Some("read_file(path)".into()),
                known: Vec::new(),
            }),
            render(UnknownToolFunction { tool: "t".into(), function: "f".into(), closest: None, known: Vec::new() }),
            render(UnknownToolFunction {
                tool: "t".into(),
                function: "f".into(),
                closest: None,
                known: vec!["a()".into(), "b(x)".into()],
            }),
        ];
        expect![[r#"
            SR117 error: unknown tool 'files' in `files.read(…)` | help: declare it, e.g. `tool files = builtin streetrace.fs` | fixes: []
            SR117 error: unknown tool 'files' in `files.read(…)` | help: the declared tools and executors are: fs | fixes: []
            SR117 error: tool 'fs' has no function 'read_files' | help: did you mean `fs.read_file(path)`? | fixes: []
            SR117 error: tool 't' has no function 'f' | help: tool 't' gives no functions | fixes: []
            SR117 error: tool 't' has no function 'f' | help: the functions of 't' are: a(), b(x) | fixes: []"#]].assert_eq(&out.join("\n"));
    }
}
