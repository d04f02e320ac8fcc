//! The kind of a named thing, shared by navigation targets, symbols and completion.

use sr_hir::ItemKind;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SymbolKind {
    Agent,
    Prompt,
    Tool,
    Model,
    Schema,
    Field,
    Flow,
    Handler,
    RetryPolicy,
    TimeoutPolicy,
    Policy,
    Executor,
    Import,
    Variable,
    File,
}

impl SymbolKind {
    pub(crate) fn of(kind: ItemKind) -> SymbolKind {
        match kind {
            ItemKind::Import => SymbolKind::Import,
            ItemKind::Model => SymbolKind::Model,
            ItemKind::Schema => SymbolKind::Schema,
            ItemKind::Tool => SymbolKind::Tool,
            ItemKind::RetryPolicy => SymbolKind::RetryPolicy,
            ItemKind::TimeoutPolicy => SymbolKind::TimeoutPolicy,
            ItemKind::Policy => SymbolKind::Policy,
            ItemKind::Executor => SymbolKind::Executor,
            ItemKind::Prompt => SymbolKind::Prompt,
            ItemKind::Agent => SymbolKind::Agent,
            ItemKind::Flow => SymbolKind::Flow,
            ItemKind::Handler => SymbolKind::Handler,
        }
    }
}
