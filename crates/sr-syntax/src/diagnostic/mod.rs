//! What every layer's diagnostics share: the code table, severities, related
//! locations, quick fixes as data and the [`Diagnostic`] itself, generic over
//! what it found. The syntax errors' vocabulary is here ([`SyntaxError`]); the
//! semantic diagnostics' is `sr-hir`'s (`sr_hir::DiagnosticKind`), so a wording
//! change there does not rebuild this crate.

mod code;
mod mismatched_indentation;
mod nesting_too_deep;
mod syntax_error;

use std::sync::Arc;

use text_size::TextRange;

pub use code::Code;
pub use syntax_error::{Found, SyntaxError, SyntaxHelp};

/// What a diagnostic found, as data from which its code, message, help, quick
/// fixes and severity are built, so consumers match on data, never on wording.
pub trait Describe {
    fn code(&self) -> Code;
    fn message(&self) -> String;
    /// What to do about it, or what was expected instead.
    fn help(&self) -> Option<String> {
        None
    }
    fn fixes(&self) -> Vec<Fix> {
        Vec::new()
    }
    /// The code's severity, unless this finding says otherwise.
    fn severity(&self) -> Severity {
        self.code().severity()
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

/// A diagnostic: what was found (`K`, from which its code, message, help and
/// fixes come) and where. Syntax errors are `Diagnostic<SyntaxError>`; the
/// analysis reports `sr_hir::Diagnostic`, whose kind holds syntax errors and
/// semantic findings.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Diagnostic<K = SyntaxError> {
    pub kind: K,
    pub severity: Severity,
    /// Exact byte range in the file.
    pub range: TextRange,
    pub related: Vec<Related>,
    pub reported: Reported,
    /// Where upstream's `check` reports this (1-based line, upstream's column),
    /// when that differs from `range` (e.g. at the agent rather than the name, or
    /// at line 1 column 0). Used in `--compat upstream` output.
    pub upstream_position: Option<(i32, i32)>,
    /// The program (its root file's name) this finding belongs to, when the
    /// file is part of several programs that judge it differently.
    pub program: Option<Arc<str>>,
}

impl<K: Describe> Diagnostic<K> {
    /// A diagnostic with the kind's default severity, reported in every mode.
    pub fn new(kind: K, range: TextRange) -> Diagnostic<K> {
        Diagnostic {
            severity: kind.severity(),
            kind,
            range,
            related: Vec::new(),
            reported: Reported::Always,
            upstream_position: None,
            program: None,
        }
    }

    pub fn code(&self) -> Code {
        self.kind.code()
    }

    pub fn message(&self) -> String {
        match &self.program {
            Some(program) => format!("{} (in program {program})", self.kind.message()),
            None => self.kind.message(),
        }
    }

    pub fn help(&self) -> Option<String> {
        self.kind.help()
    }

    pub fn fixes(&self) -> Vec<Fix> {
        self.kind.fixes()
    }

    pub fn at_upstream(mut self, line: i32, column: i32) -> Diagnostic<K> {
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

    /// The same diagnostic with its kind wrapped, e.g. a syntax error as one of
    /// the analysis' diagnostics.
    pub fn map_kind<L>(self, wrap: impl FnOnce(K) -> L) -> Diagnostic<L> {
        Diagnostic {
            kind: wrap(self.kind),
            severity: self.severity,
            range: self.range,
            related: self.related,
            reported: self.reported,
            upstream_position: self.upstream_position,
            program: self.program,
        }
    }
}
