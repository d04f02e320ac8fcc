//! The static import policy: a check of the model's Python on its AST before it runs.
//!
//! It is a lint that tells the model at once what the sandbox will not let it do,
//! not a boundary: Python offers more ways to reach an object than a check on
//! names can follow. The driver enforces the same allowlist again at run time
//! and refuses processes, sockets and ctypes by audit events; the sandbox is the
//! boundary, and under the unsandboxed backend there is none.

mod allowlist;
mod names;
mod tables;
mod walk;

use std::fmt;

use ruff_source_file::LineIndex;
use ruff_text_size::TextSize;
use serde::{Deserialize, Serialize};

pub(crate) use allowlist::is_identifier;
pub use allowlist::{DEFAULT_MODULES, ModulePattern, PatternError};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportPolicy {
    patterns: Vec<ModulePattern>,
    allow_open: bool,
}

impl Default for ImportPolicy {
    /// [`DEFAULT_MODULES`], no `open`.
    fn default() -> ImportPolicy {
        let patterns = DEFAULT_MODULES.iter().map(|name| name.parse().expect("default patterns are valid")).collect();
        ImportPolicy { patterns, allow_open: false }
    }
}

impl ImportPolicy {
    /// Nothing importable.
    pub fn empty() -> ImportPolicy {
        ImportPolicy { patterns: Vec::new(), allow_open: false }
    }

    /// Adds `name`, `package.*` or `*`.
    pub fn allow(mut self, pattern: &str) -> Result<ImportPolicy, PatternError> {
        let pattern = pattern.parse()?;
        if !self.patterns.contains(&pattern) {
            self.patterns.push(pattern);
        }
        Ok(self)
    }

    /// Whether the builtin `open` is available. Off by default: in the unsandboxed
    /// backend it would read the host's files.
    pub fn with_open(mut self, allow: bool) -> ImportPolicy {
        self.allow_open = allow;
        self
    }

    pub fn allows(&self, module: &str) -> bool {
        self.patterns.iter().any(|pattern| pattern.matches(module))
    }

    pub fn allows_open(&self) -> bool {
        self.allow_open
    }

    pub fn patterns(&self) -> &[ModulePattern] {
        &self.patterns
    }

    /// Parses `source` and reports every violation, or the first syntax error.
    pub fn check(&self, source: &str) -> Result<(), Rejection> {
        let index = LineIndex::from_source_text(source);
        let position = |offset: TextSize| {
            let location = index.line_column(offset, source);
            (location.line.get() as u32, location.column.get() as u32)
        };
        let parsed = ruff_python_parser::parse_module(source).map_err(|error| {
            let (line, column) = position(error.location.start());
            Rejection::Syntax(SyntaxError { message: error.error.to_string(), line, column })
        })?;
        let found = walk::violations(self, parsed.suite());
        if found.is_empty() {
            return Ok(());
        }
        let violations = found
            .into_iter()
            .map(|(offset, kind)| {
                let (line, column) = position(offset);
                Violation { line, column, kind }
            })
            .collect();
        Err(Rejection::Policy(violations))
    }
}

/// Why code was not run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rejection {
    Syntax(SyntaxError),
    Policy(Vec<Violation>),
}

/// Positions are 1-based; columns count characters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyntaxError {
    pub message: String,
    pub line: u32,
    pub column: u32,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Violation {
    pub line: u32,
    pub column: u32,
    pub kind: ViolationKind,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum ViolationKind {
    /// A module outside the allowlist (for `import a.b`, also `a`, which it binds).
    Import { module: String },
    /// `from . import x`: the agent's code has no package.
    RelativeImport,
    /// `__import__`, `exec`, `eval`, `compile`, `breakpoint`, `open`, `__builtins__`, ...
    Builtin { name: String },
    /// An attribute that leads from any object to builtins, globals or frames.
    Traversal { attribute: String },
    /// A string naming such an attribute, or a dunder string given to `getattr` and kin
    /// or used as a subscript (`globals()["__builtins__"]`).
    DunderString { value: String },
    /// `random._os`: a private attribute of an imported module.
    PrivateAttribute { module: String, attribute: String },
    /// `uuid.os`: a module the policy forbids, reached as an attribute of an allowed one.
    ModuleAttribute { module: String, attribute: String },
    /// `getattr(x, name)` with a name computed at run time.
    ComputedAttribute { function: String },
    /// A module (`import random`, or a name assigned one) anywhere but before
    /// a dot or as the argument of a read-only builtin: passed or stored, it
    /// reaches code where its attributes go unchecked.
    ModuleValue { module: String },
    /// `getattr` and its kin, `vars`, or `operator.attrgetter`/`methodcaller`
    /// not called but stored or passed (`g = getattr`).
    IndirectCall { function: String },
    /// `attrgetter('_os')`: a private name given to a function that looks it up.
    PrivateName { function: String, name: String },
    /// `globals()`, `locals()` or `vars()` other than subscripted with a
    /// literal name: each module the code imported is one of its keys.
    Namespace { function: String },
    /// `string.Formatter`, whose `get_field` looks up any attribute a format
    /// string names and returns the object.
    Formatter,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: ", self.line, self.column)?;
        match &self.kind {
            ViolationKind::Import { module } => write!(f, "import of '{module}' is not allowed"),
            ViolationKind::RelativeImport => f.write_str("relative imports are not available in the sandbox"),
            ViolationKind::Builtin { name } => write!(f, "'{name}' is not allowed"),
            ViolationKind::Traversal { attribute } => write!(f, "attribute '{attribute}' is not allowed"),
            ViolationKind::DunderString { value } => write!(f, "string '{value}' names a forbidden attribute"),
            ViolationKind::PrivateAttribute { module, attribute } => {
                write!(f, "private attribute '{attribute}' of module '{module}' is not allowed")
            }
            ViolationKind::ModuleAttribute { module, attribute } => {
                write!(f, "'{module}.{attribute}' is the module '{attribute}', which is not allowed")
            }
            ViolationKind::ComputedAttribute { function } => {
                write!(
                    f,
                    "{function}() with an attribute name computed at run time is not allowed; use a literal name or a dict"
                )
            }
            ViolationKind::ModuleValue { module } => {
                write!(f, "module '{module}' is used as a value; use its attributes directly ({module}.name)")
            }
            ViolationKind::IndirectCall { function } => {
                write!(f, "'{function}' can only be called directly, not stored or passed")
            }
            ViolationKind::PrivateName { function, name } => {
                write!(f, "{function}() with the private name '{name}' is not allowed")
            }
            ViolationKind::Namespace { function } => {
                write!(f, "'{function}()' can only be subscripted with a literal name, not stored, passed or searched")
            }
            ViolationKind::Formatter => {
                f.write_str("'string.Formatter' is not allowed: it looks up any attribute a format string names")
            }
        }
    }
}

impl fmt::Display for SyntaxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: syntax error: {}", self.line, self.column, self.message)
    }
}
