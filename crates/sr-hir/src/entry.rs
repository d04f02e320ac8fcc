//! Which item a workload starts with.

use sr_syntax::{Code, Severity};

use crate::diagnostics::{Diagnostic, in_program, syntax};
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

/// Why `sr run ROOT [--entry NAME]` would not start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NoStart {
    /// The program rooted there has errors that stop a run (as many as this).
    Errors(usize),
    /// No entry point, and no `--entry`.
    NoEntryPoint,
    /// `--entry` names no flow or agent of the program.
    UnknownEntry(String),
}

impl std::fmt::Display for NoStart {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NoStart::Errors(1) => write!(f, "the program has an error"),
            NoStart::Errors(n) => write!(f, "the program has {n} errors"),
            NoStart::NoEntryPoint => {
                write!(f, "no entry point: define `flow main` or an agent, or pass --entry NAME")
            }
            NoStart::UnknownEntry(name) => write!(f, "--entry {name}: the program has no flow or agent of that name"),
        }
    }
}

/// The item `sr run ROOT [--entry NAME]` starts at, or why it refuses to: the
/// one predicate behind `sr run` and the editor's run lenses and entry hints.
/// The program is judged with `root` as its root, as `sr run` loads it (a
/// library file whose importer defines what it uses does not run alone).
pub fn run_start<'db>(db: &'db dyn Db, root: File, entry: Option<&str>) -> Result<Item<'db>, NoStart> {
    let program = program(db, root);
    let errors: usize = program
        .files
        .iter()
        .map(|&file| {
            let syntax = syntax(db, file).into_iter().filter(stops_run).count();
            syntax + in_program(db, root, file).iter().filter(|d| stops_run(d)).count()
        })
        .sum();
    if errors > 0 {
        return Err(NoStart::Errors(errors));
    }
    match entry {
        None => entry_point(db, root).map(|e| e.item).ok_or(NoStart::NoEntryPoint),
        Some(name) => program
            .flows
            .get(name)
            .or_else(|| program.agents.get(name))
            .copied()
            .ok_or_else(|| NoStart::UnknownEntry(name.to_string())),
    }
}

/// Whether a diagnostic stops a run: every error, except the heuristics about
/// runtime state (SR101, SR104: warnings at run time) and W0002 (upstream's
/// loader ignores it).
pub fn stops_run(d: &Diagnostic) -> bool {
    d.severity == Severity::Error && d.in_mode(false) && !matches!(d.code(), Code::W0002 | Code::SR101 | Code::SR104)
}
