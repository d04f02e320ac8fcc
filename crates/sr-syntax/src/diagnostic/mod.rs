//! The diagnostic vocabulary shared by every layer: syntax errors are made here,
//! semantic findings by `sr-hir`, and the CLI and the language server render them.

mod code;
mod kind;
mod text;

use std::sync::Arc;

use text_size::TextRange;

pub use code::Code;
pub use kind::{ArgumentProblem, DiagnosticKind, ExecutorProblem, Extension, Found, Listing, Suggestion, SyntaxHelp};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Severity {
    Error,
    Warning,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        }
    }
}

/// Another place that explains a diagnostic (the other definition of a duplicate,
/// an edge of a cycle). `file` is `None` for the diagnostic's own file.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Related {
    pub file: Option<Arc<str>>,
    pub range: TextRange,
    pub message: String,
}

/// Which `sr check` mode reports a diagnostic. Upstream's checker and its
/// runtime disagree in places (block scopes versus one flat namespace); the
/// default mode follows the runtime, `--compat upstream` reproduces the checker.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Reported {
    Always,
    DefaultOnly,
    UpstreamOnly,
}

/// A quick fix as data, so that fixes never depend on a message's wording.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Fix {
    /// Replace the diagnostic's range (inside its quotes, if quoted) with this text.
    Replace(String),
    /// Append a definition of the undefined name.
    Define(DefinitionKind, String),
}

/// What a [`Fix::Define`] creates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DefinitionKind {
    Prompt,
    Agent,
    Tool,
}

/// A diagnostic: what was found ([`DiagnosticKind`], from which its code,
/// message, help and fixes come) and where.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Diagnostic {
    pub kind: DiagnosticKind,
    pub severity: Severity,
    /// Exact byte range in the file.
    pub range: TextRange,
    pub related: Vec<Related>,
    pub reported: Reported,
    /// Where upstream's `check` reports this (1-based line, upstream's column),
    /// when that differs from `range` (e.g. at the agent rather than the name, or
    /// at line 1 column 0). Used in `--compat upstream` output.
    pub upstream_position: Option<(i32, i32)>,
}

impl Diagnostic {
    /// A diagnostic with the kind's default severity, reported in every mode.
    pub fn new(kind: DiagnosticKind, range: TextRange) -> Diagnostic {
        Diagnostic {
            severity: kind.severity(),
            kind,
            range,
            related: Vec::new(),
            reported: Reported::Always,
            upstream_position: None,
        }
    }

    pub fn code(&self) -> Code {
        self.kind.code()
    }

    pub fn message(&self) -> String {
        self.kind.message()
    }

    pub fn help(&self) -> Option<String> {
        self.kind.help()
    }

    pub fn fixes(&self) -> Vec<Fix> {
        self.kind.fixes()
    }

    pub fn at_upstream(mut self, line: i32, column: i32) -> Diagnostic {
        self.upstream_position = Some((line, column));
        self
    }

    /// Whether the diagnostic belongs in the output of the given mode.
    pub fn in_mode(&self, upstream: bool) -> bool {
        let code = self.code();
        match self.reported {
            // Syntax errors are reported in every mode: part of the input went unread.
            Reported::Always => !upstream || code.is_upstream() || code.is_syntax(),
            Reported::DefaultOnly => !upstream,
            Reported::UpstreamOnly => upstream,
        }
    }
}
