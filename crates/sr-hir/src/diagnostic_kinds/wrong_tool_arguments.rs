//! SR118 `wrong-tool-arguments`: a builtin file, cli or state tool function or an
//! executor's `run` called with the wrong arguments, with its signature.
//!
//! The wrong number of arguments (`fs.read_file()`), or an object literal naming
//! a parameter the function lacks or missing a required one
//! (`fs.write_file({path: $p, text: $t})`).
//!
//! ```sr
//! tool fs = builtin streetrace.fs
//! flow main:
//!     $t = fs.read_file()
//!     return $t
//! ```
//!
//! `fs.read_file(): takes one argument, 0 given`, help: the signature. Fix: pass
//! what the signature takes.

use sr_syntax::{Code, Describe};

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ToolArguments {
    pub tool: String,
    pub function: String,
    pub signature: String,
    pub problem: ArgumentProblem,
}

/// What is wrong with a tool function call's arguments.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ArgumentProblem {
    UnknownParameter(String),
    Missing(Vec<String>),
    /// `takes` describes the arity, e.g. "1 or 2 arguments".
    Count { takes: String, given: usize },
}

impl Describe for ToolArguments {
    fn code(&self) -> Code {
        Code::SR118
    }

    fn message(&self) -> String {
        let problem = match &self.problem {
            ArgumentProblem::UnknownParameter(key) => format!("no parameter named '{key}'"),
            ArgumentProblem::Missing(names) => format!("missing {}", names.join(", ")),
            ArgumentProblem::Count { takes, given } => format!("takes {takes}, {given} given"),
        };
        format!("{}.{}(): {problem}", self.tool, self.function)
    }

    fn help(&self) -> Option<String> {
        Some(format!("`{}.{}`", self.tool, self.signature))
    }
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use super::*;
    use crate::diagnostic_kinds::render;

    #[test]
    fn each_problem() {
        let problems = [
            ArgumentProblem::UnknownParameter("text".into()),
            ArgumentProblem::Missing(vec!["content".into()]),
            ArgumentProblem::Count { takes: "1 argument".into(), given: 0 },
        ];
        let out: Vec<String> = problems
            .into_iter()
            .map(|problem| {
                render(ToolArguments {
                    tool: "fs".into(),
                    function: "write_file".into(),
                    signature: "write_file(path, content)".into(),
                    problem,
                })
            })
            .collect();
        expect![[r#"
            SR118 error: fs.write_file(): no parameter named 'text' | help: `fs.write_file(path, content)` | fixes: []
            SR118 error: fs.write_file(): missing content | help: `fs.write_file(path, content)` | fixes: []
            SR118 error: fs.write_file(): takes 1 argument, 0 given | help: `fs.write_file(path, content)` | fixes: []"#]].assert_eq(&out.join("\n"));
    }
}
