//! The kinds of top-level definition, named as upstream's messages name them.

use crate::SyntaxKind::{self, *};
use crate::token_set::TokenSet;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ItemKind {
    Import,
    Model,
    Schema,
    Tool,
    RetryPolicy,
    TimeoutPolicy,
    Policy,
    /// `executor NAME:` (our extension).
    Executor,
    Prompt,
    Agent,
    Flow,
    /// An `on`/`after` handler; `owner` is set for handlers inside an agent.
    Handler,
}

impl ItemKind {
    /// How upstream's messages name the kind.
    pub fn describe(self) -> &'static str {
        match self {
            ItemKind::Import => "import",
            ItemKind::Model => "model",
            ItemKind::Schema => "schema",
            ItemKind::Tool => "tool",
            ItemKind::RetryPolicy => "retry policy",
            ItemKind::TimeoutPolicy => "timeout policy",
            ItemKind::Policy => "policy",
            ItemKind::Executor => "executor",
            ItemKind::Prompt => "prompt",
            ItemKind::Agent => "agent",
            ItemKind::Flow => "flow",
            ItemKind::Handler => "handler",
        }
    }

    /// The kind of item a top-level node is, if it is one.
    pub fn of(kind: SyntaxKind) -> Option<ItemKind> {
        Some(match kind {
            SyntaxKind::IMPORT => ItemKind::Import,
            SyntaxKind::MODEL_DEF => ItemKind::Model,
            SyntaxKind::SCHEMA_DEF => ItemKind::Schema,
            SyntaxKind::TOOL_DEF => ItemKind::Tool,
            SyntaxKind::RETRY_POLICY_DEF => ItemKind::RetryPolicy,
            SyntaxKind::TIMEOUT_POLICY_DEF => ItemKind::TimeoutPolicy,
            SyntaxKind::POLICY_DEF => ItemKind::Policy,
            SyntaxKind::EXECUTOR_DEF => ItemKind::Executor,
            SyntaxKind::PROMPT_DEF => ItemKind::Prompt,
            SyntaxKind::AGENT_DEF => ItemKind::Agent,
            SyntaxKind::FLOW_DEF => ItemKind::Flow,
            SyntaxKind::EVENT_HANDLER => ItemKind::Handler,
            _ => return None,
        })
    }
}

/// The contextual keyword of executor definitions and of the agent property
/// that names one; a plain name everywhere else.
pub(crate) const EXECUTOR: &str = "executor";
/// `tool NAME = a2a "URL"`: a remote A2A agent (our extension, contextual like `executor`).
pub(crate) const A2A: &str = "a2a";

/// The keywords that begin a top-level definition (the version declaration
/// and `executor` aside).
pub(crate) const DEFINITION_KEYWORDS: TokenSet = TokenSet::new(&[
    IMPORT_KW, MODEL_KW, SCHEMA_KW, TOOL_KW, RETRY_KW, TIMEOUT_KW, POLICY_KW, ON_KW, AFTER_KW, FLOW_KW, AGENT_KW,
    PROMPT_KW,
]);

/// Whether a token at column 1 can begin a top-level item (`executor` is a
/// plain name that does when a name follows it). Pieces start only at these.
pub(crate) fn starts_item(kind: SyntaxKind, text: &str) -> bool {
    DEFINITION_KEYWORDS.contains(kind) || kind == STREETRACE_KW || (kind == NAME && text == EXECUTOR)
}
