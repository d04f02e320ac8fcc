//! SR110 `invalid-executor`: an `executor` definition that is not valid.
//!
//! An unknown property, a value of the wrong kind, an invalid module pattern, a
//! container backend without an image, `examples` naming no prompt (see
//! docs/coding-agents.md). A coding agent's `delegate` is a warning of this code:
//! it does not hand over the conversation, so `delegate` is ignored.
//!
//! ```sr
//! executor sandbox:
//!     backend: docker
//! ```
//!
//! `the backend is one of bubblewrap, container, unsandboxed`. Fix: give the
//! property a value the message allows.

use sr_syntax::{Code, Describe, Severity};

/// An executor property that is not valid.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct InvalidExecutor(pub ExecutorProblem);

/// A warning: a coding agent's `delegate`, which it ignores.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct DelegateIgnored;

/// What is wrong with an executor property.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ExecutorProblem {
    Backend {
        backends: &'static [&'static str],
    },
    ImageNotString,
    SocketNotString,
    AllowNotList,
    /// An `allow` entry, as written, that is no module name or pattern.
    NotModule {
        text: String,
    },
    NotBool {
        key: String,
    },
    ExamplesNotName,
    NotPositive {
        key: String,
    },
    UnknownProperty {
        key: String,
        known: Vec<&'static str>,
    },
    ContainerWithoutImage,
    /// `examples` names a prompt that does not exist.
    NoExamplesPrompt {
        prompt: String,
    },
}

impl Describe for InvalidExecutor {
    fn code(&self) -> Code {
        Code::SR110
    }

    fn message(&self) -> String {
        match &self.0 {
            ExecutorProblem::Backend { backends } => format!("the backend is one of {}", backends.join(", ")),
            ExecutorProblem::ImageNotString => "the image is a string, e.g. \"localhost/sr-python:3.12\"".to_string(),
            ExecutorProblem::SocketNotString => {
                "the socket is a string, e.g. \"unix:///run/podman/podman.sock\"".to_string()
            }
            ExecutorProblem::AllowNotList => "`allow` takes a list of modules, e.g. [json, \"numpy.*\"]".to_string(),
            ExecutorProblem::NotModule { text } => format!("`{text}` is not a module name or a `pkg.*` pattern"),
            ExecutorProblem::NotBool { key } => format!("`{key}` is `true` or `false`"),
            ExecutorProblem::ExamplesNotName => {
                "`examples` names a prompt, e.g. `examples: worked_examples`".to_string()
            }
            ExecutorProblem::NotPositive { key } => format!("`{key}` is a positive whole number"),
            ExecutorProblem::UnknownProperty { key, known } => {
                format!("executors have no property `{key}`; they have {}", known.join(", "))
            }
            ExecutorProblem::ContainerWithoutImage => "the `container` backend needs an `image`".to_string(),
            ExecutorProblem::NoExamplesPrompt { prompt } => {
                format!("`examples` names no prompt: there is no prompt '{prompt}'")
            }
        }
    }
}

impl Describe for DelegateIgnored {
    fn code(&self) -> Code {
        Code::SR110
    }

    fn message(&self) -> String {
        "a coding agent does not hand over the conversation: its `delegate` is ignored (`use` agents become functions its code can call)".to_string()
    }

    fn severity(&self) -> Severity {
        Severity::Warning
    }
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use super::*;
    use crate::diagnostic_kinds::render;

    #[test]
    fn each_problem_says_what_is_valid() {
        let problems = [
            ExecutorProblem::Backend { backends: &["bubblewrap", "container"] },
            ExecutorProblem::NotModule { text: "\"bad-name\"".into() },
            ExecutorProblem::NotPositive { key: "timeout".into() },
            ExecutorProblem::UnknownProperty { key: "colour".into(), known: vec!["backend", "image"] },
            ExecutorProblem::NoExamplesPrompt { prompt: "missing".into() },
        ];
        let out: Vec<String> = problems.into_iter().map(|p| render(InvalidExecutor(p))).collect();
        expect![[r#"
            SR110 error: the backend is one of bubblewrap, container | help:  | fixes: []
            SR110 error: `"bad-name"` is not a module name or a `pkg.*` pattern | help:  | fixes: []
            SR110 error: `timeout` is a positive whole number | help:  | fixes: []
            SR110 error: executors have no property `colour`; they have backend, image | help:  | fixes: []
            SR110 error: `examples` names no prompt: there is no prompt 'missing' | help:  | fixes: []"#]].assert_eq(&out.join("\n"));
    }

    #[test]
    fn an_ignored_delegate_is_a_warning_of_an_error_code() {
        assert_eq!(DelegateIgnored.severity(), Severity::Warning);
        assert_eq!(DelegateIgnored.code().severity(), Severity::Error);
    }
}
