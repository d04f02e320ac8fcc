//! The diagnostic vocabulary shared by every layer: syntax errors are made here,
//! semantic findings by `sr-hir`, and the CLI and the language server render them.

use std::fmt;
use std::sync::Arc;

use text_size::TextRange;

/// Declares the codes once: the enum, [`Code::ALL`] and [`Code::as_str`]
/// come from the one list, so they cannot disagree.
macro_rules! codes {
    ($($(#[$doc:meta])* $code:ident,)*) => {
        /// Diagnostic codes. `E`/`W` codes below 1000 are upstream's and keep upstream's
        /// meaning and message text; `SR` codes are our own checks.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Code {
            $($(#[$doc])* $code,)*
        }

        impl Code {
            /// Every code, in order: the documentation lists each one (a test checks).
            pub const ALL: &[Code] = &[$(Code::$code),*];

            pub fn as_str(self) -> &'static str {
                match self {
                    $(Code::$code => stringify!($code),)*
                }
            }
        }
    };
}

codes! {
/// Undefined reference.
E0001,
/// Variable used before definition.
E0002,
/// Duplicate definition.
E0003,
/// Syntax error: invalid character, unexpected token, unexpected end of input.
E0007,
/// Mismatched indentation.
E0008,
/// Missing required property.
E0010,
/// Circular agent reference.
E0011,
/// `on escalate continue` outside a loop.
E0012,
/// Prompt without body after merging.
E0013,
/// Conflicting prompt modifiers.
E0014,
/// Prompt references an undefined variable.
E0015,
/// Instruction references a runtime variable.
E0016,
/// Agent has both `delegate` and `use`.
W0002,
/// Unused definition.
SR100,
/// Undefined `${var}` in a flow string or log/notify expression.
SR101,
/// `instruction` names a prompt that does not exist.
SR102,
/// Unreachable statement.
SR103,
/// Property access names a field the schema lacks.
SR104,
/// Workload has no entry point.
SR105,
/// Duplicate schema field.
SR106,
/// Imported file not found.
SR107,
/// Import cycle.
SR108,
/// Unknown guardrail.
SR109,
/// Invalid executor configuration.
SR110,
/// Nesting deeper than the parser's limit.
SR111,
/// A call to a function the standard library does not have.
SR112,
/// A standard library function called with the wrong number of arguments.
SR113,
/// `break` outside a `loop` or `for`.
SR114,
/// A flow that runs itself.
SR115,
/// A stdio MCP server defined in an imported file.
SR116,
/// `TOOL.FUNCTION(…)` in a flow naming no declared tool, or no function of it.
SR117,
/// A builtin tool function called with the wrong arguments.
SR118,
}

impl Code {
    /// Upstream's own codes, reported in `--compat upstream` mode.
    pub fn is_upstream(self) -> bool {
        !self.as_str().starts_with("SR")
    }

    /// Errors that stop the tree from describing the whole input: upstream's
    /// syntax errors and our nesting limit.
    pub fn is_syntax(self) -> bool {
        matches!(self, Code::E0007 | Code::E0008 | Code::SR111)
    }
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

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

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Diagnostic {
    pub code: Code,
    pub severity: Severity,
    pub message: String,
    /// Exact byte range in the file.
    pub range: TextRange,
    pub help: Option<String>,
    pub related: Vec<Related>,
    pub reported: Reported,
    /// Where upstream's `check` reports this (1-based line, upstream's column),
    /// when that differs from `range` (e.g. at the agent rather than the name, or
    /// at line 1 column 0). Used in `--compat upstream` output.
    pub upstream_position: Option<(i32, i32)>,
    /// What quick fixes can do about it.
    pub fixes: Vec<Fix>,
}

impl Diagnostic {
    pub fn error(code: Code, message: impl Into<String>, range: TextRange) -> Diagnostic {
        Diagnostic {
            code,
            severity: Severity::Error,
            message: message.into(),
            range,
            help: None,
            related: Vec::new(),
            reported: Reported::Always,
            upstream_position: None,
            fixes: Vec::new(),
        }
    }

    pub fn warning(code: Code, message: impl Into<String>, range: TextRange) -> Diagnostic {
        Diagnostic { severity: Severity::Warning, ..Diagnostic::error(code, message, range) }
    }

    pub fn with_help(mut self, help: impl Into<String>) -> Diagnostic {
        self.help = Some(help.into());
        self
    }

    pub fn with_related(mut self, related: Related) -> Diagnostic {
        self.related.push(related);
        self
    }

    pub fn reported(mut self, reported: Reported) -> Diagnostic {
        self.reported = reported;
        self
    }

    pub fn at_upstream(mut self, line: i32, column: i32) -> Diagnostic {
        self.upstream_position = Some((line, column));
        self
    }

    /// Whether the diagnostic belongs in the output of the given mode.
    pub fn in_mode(&self, upstream: bool) -> bool {
        match self.reported {
            // Syntax errors are reported in every mode: part of the input went unread.
            Reported::Always => !upstream || self.code.is_upstream() || self.code.is_syntax(),
            Reported::DefaultOnly => !upstream,
            Reported::UpstreamOnly => upstream,
        }
    }
}
