//! Which item a workload starts with.

use crate::items::{Item, ItemKind};
use crate::{Db, File, program};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EntryPoint<'db> {
    pub item: Item<'db>,
    /// Found by upstream's rules; `false` for our "first agent" fallback.
    pub upstream: bool,
}

impl EntryPoint<'_> {
    pub fn is_flow(&self, db: &dyn Db) -> bool {
        self.item.kind(db) == ItemKind::Flow
    }
}

/// Upstream's order: flow `main`, flow `default`, agent `main`, agent `default`
/// (the unnamed agent), the only agent; then, where upstream fails, the first
/// agent of the root file (or of the program).
pub fn entry_point(db: &dyn Db, root: File) -> Option<EntryPoint<'_>> {
    let program = program(db, root);
    let upstream = program
        .flows
        .get("main")
        .or_else(|| program.flows.get("default"))
        .or_else(|| program.agents.get("main"))
        .or_else(|| program.agents.get("default"))
        .or_else(|| if program.agents.len() == 1 { program.agents.values().next() } else { None });
    if let Some(&item) = upstream {
        return Some(EntryPoint { item, upstream: true });
    }
    let first_in_root = program.agents.values().find(|a| a.file(db) == root);
    first_in_root.or_else(|| program.agents.values().next()).map(|&item| EntryPoint { item, upstream: false })
}
