//! The semantic diagnostics' vocabulary, one code per file (rust-analyzer's
//! `ide-diagnostics/src/handlers`): each file's doc comment is the code's entry
//! in docs/diagnostics.md (what it means, an example, how to fix; `tests/docs.rs`
//! generates the page and checks the example), then the data it reports, its
//! message, help and quick fixes, and their tests. Syntax errors are sr-syntax's
//! ([`SyntaxError`]). A new diagnostic is a file here and a line in `kinds!`.
//! The checks that find them are in `diagnostics` (and name resolution's in
//! `resolve`); this module depends on neither.

use sr_syntax::{Code, Describe, Fix, Severity, SyntaxError};

mod names;

pub use names::{Listing, Suggestion};

/// Declares the modules, re-exports their kinds and builds [`DiagnosticKind`]
/// with one variant per kind, each dispatching to the kind's [`Describe`].
macro_rules! kinds {
    ($($module:ident: $($kind:ident),+;)*) => {
        $(mod $module; pub use $module::{$($kind),+};)*

        /// What a diagnostic found: a syntax error, or one of the semantic
        /// kinds, each from its own file.
        #[derive(Debug, Clone, PartialEq, Eq, Hash)]
        pub enum DiagnosticKind {
            Syntax(SyntaxError),
            $($($kind($kind),)+)*
        }

        impl DiagnosticKind {
            fn describe(&self) -> &dyn Describe {
                match self {
                    DiagnosticKind::Syntax(kind) => kind,
                    $($(DiagnosticKind::$kind(kind) => kind,)+)*
                }
            }
        }

        $($(impl From<$kind> for DiagnosticKind {
            fn from(kind: $kind) -> DiagnosticKind {
                DiagnosticKind::$kind(kind)
            }
        })+)*
    };
}

kinds! {
    undefined_reference: UndefinedReference, UndefinedPromptOrVariable;
    used_before_definition: UsedBeforeDefinition;
    duplicate_definition: DuplicateDefinition;
    language_extension: Extension;
    missing_property: MissingInstruction;
    circular_agent_reference: CircularAgentReference;
    continue_outside_loop: ContinueOutsideLoop;
    prompt_without_body: PromptWithoutBody;
    conflicting_prompt_modifiers: ConflictingPromptModifier;
    undefined_prompt_variable: UndefinedPromptVariable;
    instruction_runtime_variable: InstructionRuntimeVariable;
    delegate_and_use: DelegateAndUse;
    unused_definition: Unused;
    undefined_variable: UndefinedVariable;
    undefined_instruction: UndefinedInstruction;
    unreachable_statement: Unreachable;
    unknown_field: UnknownField;
    missing_entry_point: NoEntryPoint;
    duplicate_field: DuplicateField;
    import_not_found: ImportNotFound, Unreadable;
    import_cycle: ImportCycle;
    unknown_guardrail: GuardrailNotEnforced, UnknownGuardrail;
    invalid_executor: InvalidExecutor, DelegateIgnored;
    unknown_function: PythonBuiltin, UnknownFunction;
    wrong_argument_count: ArgumentCount;
    break_outside_loop: BreakOutsideLoop;
    recursive_flow: RecursiveFlow;
    imported_local_program: ImportedLocalProgram;
    unknown_tool_function: UnknownTool, UnknownToolFunction;
    wrong_tool_arguments: ToolArguments;
    unknown_field_type: UnknownFieldType;
}

pub use invalid_executor::ExecutorProblem;
pub use wrong_tool_arguments::ArgumentProblem;

impl From<SyntaxError> for DiagnosticKind {
    fn from(kind: SyntaxError) -> DiagnosticKind {
        DiagnosticKind::Syntax(kind)
    }
}

impl Describe for DiagnosticKind {
    fn code(&self) -> Code {
        self.describe().code()
    }

    fn message(&self) -> String {
        self.describe().message()
    }

    fn help(&self) -> Option<String> {
        self.describe().help()
    }

    fn fixes(&self) -> Vec<Fix> {
        self.describe().fixes()
    }

    fn severity(&self) -> Severity {
        self.describe().severity()
    }
}

/// A kind's code, severity, message, help and fixes on one line, for the
/// kinds' snapshot tests.
#[cfg(test)]
fn render(kind: impl Into<DiagnosticKind>) -> String {
    let kind = kind.into();
    format!(
        "{} {}: {} | help: {} | fixes: {:?}",
        kind.code(),
        kind.severity().as_str(),
        kind.message(),
        kind.help().unwrap_or_default(),
        kind.fixes()
    )
}
