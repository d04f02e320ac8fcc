//! Whether `sr run` would start a program: the one predicate behind `sr run`'s
//! early refusal, the runtime's compile step and the editor's run lenses and
//! entry hints.

use sr_syntax::{Code, Severity};

use crate::diagnostics::{Diagnostic, in_program, syntax};
use crate::entry::entry_point;
use crate::items::Item;
use crate::{Db, File, program};

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
    match entry.map(EntryName::parse) {
        None => entry_point(db, root).map(|e| e.item).ok_or(NoStart::NoEntryPoint),
        Some(entry) => entry
            .looks_in(EntryKind::Flow)
            .then(|| program.flows.get(entry.name))
            .flatten()
            .or_else(|| entry.looks_in(EntryKind::Agent).then(|| program.agents.get(entry.name)).flatten())
            .copied()
            .ok_or_else(|| NoStart::UnknownEntry(entry.name.to_string())),
    }
}

/// What `--entry` (and `sr try`'s item) names: `NAME`, looked up as the
/// runtime does (a flow, then an agent, then, where prompts start runs, a
/// prompt), or `flow:NAME`, `agent:NAME`, `prompt:NAME`, which looks in that
/// kind only: how a prompt that shares an agent's or a flow's name is named.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EntryName<'a> {
    pub kind: Option<EntryKind>,
    pub name: &'a str,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    Flow,
    Agent,
    Prompt,
}

impl EntryKind {
    /// The word before the colon.
    pub fn keyword(self) -> &'static str {
        match self {
            EntryKind::Flow => "flow",
            EntryKind::Agent => "agent",
            EntryKind::Prompt => "prompt",
        }
    }
}

impl EntryName<'_> {
    pub fn parse(entry: &str) -> EntryName<'_> {
        [EntryKind::Flow, EntryKind::Agent, EntryKind::Prompt]
            .into_iter()
            .find_map(|kind| {
                let name = entry.strip_prefix(kind.keyword())?.strip_prefix(':')?;
                Some(EntryName { kind: Some(kind), name })
            })
            .unwrap_or(EntryName { kind: None, name: entry })
    }

    /// Whether items of `kind` are looked at (in the order flow, agent, prompt).
    pub fn looks_in(&self, kind: EntryKind) -> bool {
        self.kind.is_none_or(|k| k == kind)
    }
}

/// Whether a diagnostic stops a run: every error, except the heuristics about
/// runtime state (SR101, SR104: warnings at run time) and W0002 (upstream's
/// loader ignores it).
pub fn stops_run(d: &Diagnostic) -> bool {
    d.severity == Severity::Error && d.in_mode(false) && !matches!(d.code(), Code::W0002 | Code::SR101 | Code::SR104)
}
