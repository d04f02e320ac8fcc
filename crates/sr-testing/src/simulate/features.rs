//! What a simulated workflow can contain, one [`Feature`] per statement kind,
//! value source, tool kind and failure, and the features known to break an
//! oracle on `main`.

/// One thing the generator can put in a workflow. `cargo xtask simulate
/// --only`/`--without` choose among them by [`Feature::name`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Feature {
    Assign,
    RunAgent,
    RunFlow,
    CallLlm,
    Return,
    For,
    Parallel,
    Loop,
    Match,
    If,
    Push,
    Escalate,
    Log,
    Notify,
    OnFailure,
    Continue,
    Break,
    Abort,
    /// `mask`, `block`, `warn`, `retry with`, `retry step` in event handlers.
    Guardrails,
    Uuid,
    Now,
    Random,
    RandomInt,
    /// The builtin file tools called from a flow (expression statements).
    FileTools,
    /// `streetrace.cli`, sandboxed.
    Cli,
    /// A stdio MCP server that counts its calls on the host.
    Mcp,
    /// `streetrace.state` called from a flow.
    State,
    /// An `executor`'s `run` (Python in a sandbox).
    Executor,
    /// A model's tool call: the agent writes a file when the scripted model asks.
    AgentTools,
    /// A tool call that fails (a missing file).
    ToolFailure,
    /// A model call answered with HTTP 500 once, then retried.
    ModelRetry,
}

impl Feature {
    pub const ALL: &[Feature] = &[
        Feature::Assign,
        Feature::RunAgent,
        Feature::RunFlow,
        Feature::CallLlm,
        Feature::Return,
        Feature::For,
        Feature::Parallel,
        Feature::Loop,
        Feature::Match,
        Feature::If,
        Feature::Push,
        Feature::Escalate,
        Feature::Log,
        Feature::Notify,
        Feature::OnFailure,
        Feature::Continue,
        Feature::Break,
        Feature::Abort,
        Feature::Guardrails,
        Feature::Uuid,
        Feature::Now,
        Feature::Random,
        Feature::RandomInt,
        Feature::FileTools,
        Feature::Cli,
        Feature::Mcp,
        Feature::State,
        Feature::Executor,
        Feature::AgentTools,
        Feature::ToolFailure,
        Feature::ModelRetry,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Feature::Assign => "assign",
            Feature::RunAgent => "run-agent",
            Feature::RunFlow => "run-flow",
            Feature::CallLlm => "call-llm",
            Feature::Return => "return",
            Feature::For => "for",
            Feature::Parallel => "parallel",
            Feature::Loop => "loop",
            Feature::Match => "match",
            Feature::If => "if",
            Feature::Push => "push",
            Feature::Escalate => "escalate",
            Feature::Log => "log",
            Feature::Notify => "notify",
            Feature::OnFailure => "on-failure",
            Feature::Continue => "continue",
            Feature::Break => "break",
            Feature::Abort => "abort",
            Feature::Guardrails => "guardrails",
            Feature::Uuid => "uuid",
            Feature::Now => "now",
            Feature::Random => "random",
            Feature::RandomInt => "random-int",
            Feature::FileTools => "file-tools",
            Feature::Cli => "cli",
            Feature::Mcp => "mcp",
            Feature::State => "state",
            Feature::Executor => "executor",
            Feature::AgentTools => "agent-tools",
            Feature::ToolFailure => "tool-failure",
            Feature::ModelRetry => "model-retry",
        }
    }

    pub fn from_name(name: &str) -> Option<Feature> {
        Feature::ALL.iter().copied().find(|f| f.name() == name)
    }

    /// The statement node kinds of the syntax tree (`sr_syntax::SyntaxKind`
    /// names) this feature's statements are: a test fails when a statement
    /// kind is no feature's.
    pub fn statement_kinds(self) -> &'static [&'static str] {
        match self {
            Feature::Assign => &["ASSIGN_STMT"],
            Feature::RunAgent | Feature::RunFlow => &["RUN_STMT"],
            Feature::CallLlm => &["CALL_STMT"],
            Feature::Return => &["RETURN_STMT"],
            Feature::For => &["FOR_STMT"],
            Feature::Parallel => &["PARALLEL_STMT"],
            Feature::Loop => &["LOOP_STMT"],
            Feature::Match => &["MATCH_STMT"],
            Feature::If => &["IF_STMT"],
            Feature::Push => &["PUSH_STMT"],
            Feature::Escalate => &["ESCALATE_STMT"],
            Feature::Log => &["LOG_STMT"],
            Feature::Notify => &["NOTIFY_STMT"],
            Feature::OnFailure => &["FAILURE_BLOCK"],
            Feature::Continue => &["CONTINUE_STMT"],
            Feature::Break => &["BREAK_STMT"],
            Feature::Abort => &["ABORT_STMT"],
            Feature::Guardrails => &["MASK_STMT", "BLOCK_STMT", "WARN_STMT", "RETRY_WITH_STMT", "RETRY_STEP_STMT"],
            Feature::FileTools | Feature::Cli | Feature::Mcp | Feature::State | Feature::ToolFailure => &["EXPR_STMT"],
            _ => &[],
        }
    }

    /// The function (of `sr_hir::stdlib` or a tool function table) this
    /// feature's statements call, if it is a value source or tool kind.
    pub fn functions(self) -> &'static [&'static str] {
        match self {
            Feature::Uuid => &["uuid"],
            Feature::Now => &["now"],
            Feature::Random => &["random"],
            Feature::RandomInt => &["random_int"],
            Feature::FileTools => {
                &["read_file", "create_directory", "write_file", "append_to_file", "list_directory", "find_in_files"]
            }
            Feature::Cli => &["execute_cli_command"],
            Feature::State => &["set_state", "get_state", "exit_loop"],
            Feature::Executor => &["run"],
            _ => &[],
        }
    }
}

/// A feature, an oracle, or an oracle on workflows with a feature, known to
/// fail on `main`, with the item of issue #41 that fixes it. `cargo xtask
/// simulate` (and so CI) leaves such a feature out, skips such an oracle, or
/// skips the oracle on workflows with the feature, unless `--all`; remove an
/// entry when its fix lands, and CI tests it from then on.
pub struct KnownEscape {
    pub feature: Option<Feature>,
    /// An oracle of `cargo xtask simulate` (`resumed-replay`).
    pub oracle: Option<&'static str>,
    /// The issue item and what goes wrong.
    pub why: &'static str,
}

pub const KNOWN_ESCAPES: &[KnownEscape] = &[];
