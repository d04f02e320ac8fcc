//! What a diagnostic found, as data. Each variant is one code's message shape
//! (a code with several shapes has several variants, each saying so); the
//! message, help, quick fixes and severity are built from the data in
//! `text.rs`, so consumers match on the data and never on wording.

use super::{Code, Severity};
use crate::ItemKind;

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum DiagnosticKind {
    /// E0001: a reference to a `kind` nothing defines.
    UndefinedReference { kind: ItemKind, name: String, suggestion: Suggestion },
    /// E0001, an agent's `prompt`: it names a prompt or a variable. A listed
    /// suggestion names the prompts only.
    UndefinedPromptOrVariable { name: String, suggestion: Suggestion },
    /// E0002.
    UsedBeforeDefinition { name: String },
    /// E0003. `first_file`: where the first definition is, when that is another file.
    DuplicateDefinition { kind: ItemKind, name: String, first_file: Option<String> },
    /// E0007, from the parser: what it found, and what it expected there.
    Syntax { found: Found, help: Option<SyntaxHelp> },
    /// E0007, from the lexer: a character no token starts with.
    InvalidCharacter { character: String },
    /// E0007, from the lexer: a triple-quoted string that is never closed
    /// (reported at its third quote, where upstream's lexer fails); it runs to
    /// the next line that starts a definition.
    UnclosedString { delimiter: &'static str },
    /// E0007 in `--compat upstream` only: our language extension, which upstream cannot parse.
    Extension(Extension),
    /// E0007: a YAML agent file that cannot be loaded; `problem` is the loader's explanation.
    InvalidYamlAgent { problem: String },
    /// E0008: a line at `column` (1-based) between the enclosing blocks' columns.
    MismatchedIndentation { column: u32, block_columns: Vec<u32> },
    /// E0010: an agent without `instruction`.
    MissingInstruction { agent: String },
    /// E0011: the agents of the cycle, the first repeated at the end.
    CircularAgentReference { agents: Vec<String> },
    /// E0012.
    ContinueOutsideLoop,
    /// E0013.
    PromptWithoutBody { prompt: String },
    /// E0014: `modifier` is `model`, `expecting` or `inherit`; `first` and `second` its two values.
    ConflictingPromptModifier { modifier: &'static str, prompt: String, first: String, second: String },
    /// E0015. `suggestion`: the known variable the name is a likely typo of.
    UndefinedPromptVariable { prompt: String, variable: String, suggestion: Option<String> },
    /// E0016.
    InstructionRuntimeVariable { instruction: String, agent: String, variable: String },
    /// W0002.
    DelegateAndUse { agent: String },
    /// SR100.
    Unused { kind: ItemKind, name: String },
    /// SR101.
    UndefinedVariable { name: String },
    /// SR102.
    UndefinedInstruction { name: String, suggestion: Suggestion },
    /// SR103: `after` is the keyword that ended the block (`return`, `abort`, …).
    Unreachable { after: &'static str },
    /// SR104: `fields` are the schema's fields.
    UnknownField { schema: String, field: String, fields: Listing },
    /// SR105. `runs_instead`: what `sr run` starts when there is something to start.
    NoEntryPoint { runs_instead: Option<String> },
    /// SR106.
    DuplicateField { field: String, schema: String },
    /// SR107: `import` as written, `looked_for` the path it resolved to.
    ImportNotFound { import: String, looked_for: String },
    /// SR107: a file that exists but cannot be read (a FIFO, a device, a
    /// symlink loop, over the size limit): a workload's own, or an import's
    /// (`path` as the import writes it).
    Unreadable { path: String, error: String },
    /// SR108: the files of the cycle, the first repeated at the end.
    ImportCycle { files: Vec<String> },
    /// SR109: a guardrail upstream knows that this runtime never triggers.
    GuardrailNotEnforced { name: String, enforced: &'static [&'static str] },
    /// SR109: a guardrail nobody knows.
    UnknownGuardrail { name: String, known: &'static [&'static str] },
    /// SR110: an executor property that is not valid.
    InvalidExecutor(ExecutorProblem),
    /// SR110, a warning: a coding agent's `delegate`, which it ignores.
    DelegateIgnored,
    /// SR111: `what` is the construct, e.g. "this expression is".
    TooDeep { what: String },
    /// SR112, a warning: a Python builtin that upstream runs and flows cannot call.
    PythonBuiltin { function: String },
    /// SR112: `closest` is the signature of the nearest function, else `known` lists them all.
    UnknownFunction { function: String, closest: Option<String>, known: Vec<String> },
    /// SR113: `takes` describes the arity, e.g. "1 or 2 arguments".
    ArgumentCount { function: String, takes: String, given: usize, signature: String, doc: String },
    /// SR114.
    BreakOutsideLoop,
    /// SR115.
    RecursiveFlow { flow: String },
    /// SR116: an imported stdio MCP tool and the command it starts.
    ImportedLocalProgram { tool: String, command: String },
    /// SR117: `TOOL.f(…)` where TOOL is no tool or executor; `declared` lists them.
    UnknownTool { tool: String, function: String, declared: Listing },
    /// SR117: a function the tool lacks; `closest` is the nearest signature,
    /// else `known` lists the tool's signatures.
    UnknownToolFunction { tool: String, function: String, closest: Option<String>, known: Vec<String> },
    /// SR118.
    ToolArguments { tool: String, function: String, signature: String, problem: ArgumentProblem },
}

/// Upstream's "did you mean" for an undefined name.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Suggestion {
    None,
    /// A defined name sharing the first three letters: the quick fix replaces the name with it.
    DidYouMean(String),
    /// No close name: the names that are defined.
    Listed(Listing),
}

/// Names a help lists: the first [`Listing::MAX`] of them, and how many
/// more there are. A program with 20,000 agents does not print 20,000 names
/// for each of its undefined references.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Listing {
    pub names: Vec<String>,
    /// How many names are not in `names`.
    pub more: usize,
}

impl Listing {
    pub const MAX: usize = 20;

    /// The first [`Listing::MAX`] of `names`, of which there are `count`.
    pub fn new<S: Into<String>>(names: impl IntoIterator<Item = S>, count: usize) -> Listing {
        let names: Vec<String> = names.into_iter().take(Self::MAX).map(Into::into).collect();
        let more = count.saturating_sub(names.len());
        Listing { names, more }
    }

    pub fn is_empty(&self) -> bool {
        self.names.is_empty() && self.more == 0
    }
}

impl std::fmt::Display for Listing {
    /// `a, b, c`, then ` and 9980 more` when there are.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.names.join(", "))?;
        if self.more > 0 {
            write!(f, " and {} more", self.more)?;
        }
        Ok(())
    }
}

/// What the parser found where it expected something else.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Found {
    EndOfInput,
    EndOfLine,
    Indentation,
    EndOfBlock,
    InvalidCharacter,
    Token(String),
}

/// The parser's explanation of a syntax error.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum SyntaxHelp {
    /// What the grammar accepts here, e.g. "`=` or `:`".
    Expected(String),
    /// A sentence of its own.
    Explain(String),
}

/// Our language extensions, as upstream's parser rejects them.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Extension {
    Executor,
    /// A call of `int`, `float`, `bool` or `max`, which upstream lexes as keywords.
    KeywordCall(String),
    Break,
    /// `tool NAME = a2a "URL"`: a remote A2A agent.
    A2aTool,
}

/// What is wrong with an executor property (SR110).
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

/// What is wrong with a tool function call's arguments (SR118).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ArgumentProblem {
    UnknownParameter(String),
    Missing(Vec<String>),
    /// `takes` describes the arity, e.g. "1 or 2 arguments".
    Count {
        takes: String,
        given: usize,
    },
}

impl DiagnosticKind {
    pub fn code(&self) -> Code {
        use DiagnosticKind::*;
        match self {
            UndefinedReference { .. } | UndefinedPromptOrVariable { .. } => Code::E0001,
            UsedBeforeDefinition { .. } => Code::E0002,
            DuplicateDefinition { .. } => Code::E0003,
            Syntax { .. }
            | InvalidCharacter { .. }
            | UnclosedString { .. }
            | Extension(_)
            | InvalidYamlAgent { .. } => Code::E0007,
            MismatchedIndentation { .. } => Code::E0008,
            MissingInstruction { .. } => Code::E0010,
            CircularAgentReference { .. } => Code::E0011,
            ContinueOutsideLoop => Code::E0012,
            PromptWithoutBody { .. } => Code::E0013,
            ConflictingPromptModifier { .. } => Code::E0014,
            UndefinedPromptVariable { .. } => Code::E0015,
            InstructionRuntimeVariable { .. } => Code::E0016,
            DelegateAndUse { .. } => Code::W0002,
            Unused { .. } => Code::SR100,
            UndefinedVariable { .. } => Code::SR101,
            UndefinedInstruction { .. } => Code::SR102,
            Unreachable { .. } => Code::SR103,
            UnknownField { .. } => Code::SR104,
            NoEntryPoint { .. } => Code::SR105,
            DuplicateField { .. } => Code::SR106,
            ImportNotFound { .. } | Unreadable { .. } => Code::SR107,
            ImportCycle { .. } => Code::SR108,
            GuardrailNotEnforced { .. } | UnknownGuardrail { .. } => Code::SR109,
            InvalidExecutor(_) | DelegateIgnored => Code::SR110,
            TooDeep { .. } => Code::SR111,
            PythonBuiltin { .. } | UnknownFunction { .. } => Code::SR112,
            ArgumentCount { .. } => Code::SR113,
            BreakOutsideLoop => Code::SR114,
            RecursiveFlow { .. } => Code::SR115,
            ImportedLocalProgram { .. } => Code::SR116,
            UnknownTool { .. } | UnknownToolFunction { .. } => Code::SR117,
            ToolArguments { .. } => Code::SR118,
        }
    }

    /// The code's severity, except for the two warnings of error codes.
    pub fn severity(&self) -> Severity {
        match self {
            DiagnosticKind::DelegateIgnored | DiagnosticKind::PythonBuiltin { .. } => Severity::Warning,
            _ => self.code().severity(),
        }
    }
}
