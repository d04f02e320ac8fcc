//! The vocabulary of semantic diagnostics: span-free [`SemanticDiagnostic`]s that point
//! at [`Anchor`]s (an item, a part, a statement, an expression), mapped to byte ranges
//! only when a file's diagnostics are reported. Name resolution and the checks both
//! produce them; neither depends on the other for it.

use sr_syntax::{Reported, TextRange, TextSize};

use crate::hir::{ExprId, PartId, StmtId};
use crate::items::{Item, item_syntax};
use crate::{Db, DiagnosticKind, File, source_map};

/// Where a diagnostic points, resolved to a range only when it is reported.
#[derive(Debug, Clone, PartialEq, Eq, Hash, salsa::SalsaValue)]
pub enum Anchor<'db> {
    /// The beginning of a file.
    FileStart(File),
    /// An item's name, or its keyword when it has none.
    ItemName(Item<'db>),
    /// An item's first token.
    ItemStart(Item<'db>),
    Part(Item<'db>, PartId),
    Stmt(Item<'db>, StmtId),
    Expr(Item<'db>, ExprId),
}

/// Where upstream's `check` reports a diagnostic.
#[derive(Debug, Clone, PartialEq, Eq, Hash, salsa::SalsaValue)]
pub enum UpstreamAt<'db> {
    /// At the start of the diagnostic's own anchor.
    Anchor,
    /// At the start of another anchor (an agent rather than its property).
    Other(Anchor<'db>),
    /// Line 1, column 0 (nodes upstream keeps no position for).
    FileStart,
    /// Upstream counts from the `prompt` keyword through the stripped body text.
    PromptText { item: Item<'db>, char_offset: u32 },
}

/// A diagnostic before its anchors are mapped to ranges.
#[derive(Debug, Clone, PartialEq, Eq, Hash, salsa::SalsaValue)]
pub struct SemanticDiagnostic<'db> {
    pub kind: DiagnosticKind,
    pub anchor: Anchor<'db>,
    pub related: Vec<(Anchor<'db>, String)>,
    pub reported: Reported,
    pub upstream_at: UpstreamAt<'db>,
}

impl<'db> SemanticDiagnostic<'db> {
    /// Reported in every mode, where upstream reports it at the anchor.
    pub fn new(kind: impl Into<DiagnosticKind>, anchor: Anchor<'db>) -> Self {
        SemanticDiagnostic {
            kind: kind.into(),
            anchor,
            related: Vec::new(),
            reported: Reported::Always,
            upstream_at: UpstreamAt::Anchor,
        }
    }
}

impl<'db> Anchor<'db> {
    pub fn file(&self, db: &'db dyn Db) -> File {
        match *self {
            Anchor::FileStart(file) => file,
            Anchor::ItemName(item)
            | Anchor::ItemStart(item)
            | Anchor::Part(item, _)
            | Anchor::Stmt(item, _)
            | Anchor::Expr(item, _) => item.file(db),
        }
    }

    /// The anchor's range in its file.
    pub fn range(&self, db: &'db dyn Db) -> TextRange {
        let (item, relative) = match *self {
            Anchor::FileStart(_) => return TextRange::empty(TextSize::from(0)),
            Anchor::ItemName(item) => (item, source_map(db, item).name.unwrap_or_else(|| keyword_range(db, item))),
            Anchor::ItemStart(item) => (item, keyword_range(db, item)),
            Anchor::Part(item, part) => (item, source_map(db, item).part(part)),
            Anchor::Stmt(item, stmt) => (item, source_map(db, item).stmts[stmt]),
            Anchor::Expr(item, expr) => (item, source_map(db, item).exprs[expr]),
        };
        relative + item.offset(db)
    }
}

fn keyword_range(db: &dyn Db, item: Item<'_>) -> TextRange {
    item_syntax(db, item).first_token().map_or(TextRange::empty(TextSize::from(0)), |t| t.text_range())
}
