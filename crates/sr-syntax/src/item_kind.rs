//! The kinds of top-level definition, named as upstream's messages name them.

use crate::SyntaxKind;

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
