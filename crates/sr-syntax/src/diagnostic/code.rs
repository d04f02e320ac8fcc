//! The code table: each code's short name and default severity are declared
//! once, beside the code, and docs/diagnostics.md's table is generated from
//! them (sr-hir's `tests/docs.rs` checks it has not drifted). Each code is
//! documented in the file named by its short name: sr-hir's
//! `diagnostic_kinds/<name>.rs`, or this module's for syntax errors.

use std::fmt;

use super::Severity;

/// Declares the codes once: the enum, [`Code::ALL`], [`Code::as_str`],
/// [`Code::name`] and [`Code::severity`] come from the one list, so they cannot
/// disagree.
macro_rules! codes {
    ($($(#[$doc:meta])* $code:ident $name:literal $severity:ident,)*) => {
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

            /// The short kebab-case name, e.g. `undefined-reference`.
            pub fn name(self) -> &'static str {
                match self {
                    $(Code::$code => $name,)*
                }
            }

            /// The severity of the code's diagnostics, unless a
            /// kind ([`Describe::severity`](super::Describe::severity)) says otherwise.
            pub fn severity(self) -> Severity {
                match self {
                    $(Code::$code => Severity::$severity,)*
                }
            }
        }
    };
}

codes! {
/// Undefined reference.
E0001 "undefined-reference" Error,
/// Variable used before definition.
E0002 "used-before-definition" Error,
/// Duplicate definition.
E0003 "duplicate-definition" Error,
/// Syntax error: invalid character, unexpected token, unexpected end of input.
E0007 "syntax-error" Error,
/// Mismatched indentation.
E0008 "mismatched-indentation" Error,
/// Missing required property.
E0010 "missing-property" Error,
/// Circular agent reference.
E0011 "circular-agent-reference" Error,
/// `on escalate continue` outside a loop.
E0012 "continue-outside-loop" Error,
/// Prompt without body after merging.
E0013 "prompt-without-body" Error,
/// Conflicting prompt modifiers.
E0014 "conflicting-prompt-modifiers" Error,
/// Prompt references an undefined variable.
E0015 "undefined-prompt-variable" Error,
/// Instruction references a runtime variable.
E0016 "instruction-runtime-variable" Error,
/// Agent has both `delegate` and `use`: upstream's `check` reports this warning as an error.
W0002 "delegate-and-use" Error,
/// Unused definition.
SR100 "unused-definition" Warning,
/// Undefined `${var}` in a flow string or log/notify expression.
SR101 "undefined-variable" Error,
/// `instruction` names a prompt that does not exist.
SR102 "undefined-instruction" Error,
/// Unreachable statement.
SR103 "unreachable-statement" Warning,
/// Property access names a field the schema lacks.
SR104 "unknown-field" Error,
/// Workload has no entry point.
SR105 "missing-entry-point" Warning,
/// Duplicate schema field.
SR106 "duplicate-field" Error,
/// Imported file not found.
SR107 "import-not-found" Error,
/// Import cycle.
SR108 "import-cycle" Error,
/// Unknown guardrail.
SR109 "unknown-guardrail" Warning,
/// Invalid executor configuration.
SR110 "invalid-executor" Error,
/// Nesting deeper than the parser's limit.
SR111 "nesting-too-deep" Error,
/// A call to a function the standard library does not have.
SR112 "unknown-function" Error,
/// A standard library function called with the wrong number of arguments.
SR113 "wrong-argument-count" Error,
/// `break` outside a `loop` or `for`.
SR114 "break-outside-loop" Error,
/// A flow that runs itself.
SR115 "recursive-flow" Warning,
/// A stdio MCP server defined in an imported file.
SR116 "imported-local-program" Warning,
/// `TOOL.FUNCTION(…)` in a flow naming no declared tool, or no function of it.
SR117 "unknown-tool-function" Error,
/// A builtin tool function called with the wrong arguments.
SR118 "wrong-tool-arguments" Error,
/// A schema field's type that is neither a primitive nor a schema.
SR119 "unknown-field-type" Warning,
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

    /// The anchor of the code's entry in docs/diagnostics.md.
    pub fn doc_anchor(self) -> String {
        self.as_str().to_lowercase()
    }
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
