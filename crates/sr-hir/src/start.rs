//! Whether `sr run` would start a program: the one predicate behind `sr run`'s
//! early refusal, the runtime's compile step and the editor's run lenses and
//! entry hints.

use sr_syntax::{Code, Severity};

use crate::diagnostics::{Diagnostic, in_program, syntax};
use crate::entry::entry_point;
use crate::items::Item;
use crate::resolve::Program;
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
    let Some(entry) = entry.map(EntryName::parse) else {
        return entry_point(db, root).map(|e| e.item).ok_or(NoStart::NoEntryPoint);
    };
    // `sr run` starts flows and agents only.
    let start = match entry.resolve_in(program) {
        Some(EntryKind::Flow) => program.flows.get(entry.name),
        Some(EntryKind::Agent) => program.agents.get(entry.name),
        Some(EntryKind::Prompt) | None => None,
    };
    start.copied().ok_or_else(|| NoStart::UnknownEntry(entry.name.to_string()))
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
    /// The order a name without a kind is looked for in.
    const ORDER: [EntryKind; 3] = [EntryKind::Flow, EntryKind::Agent, EntryKind::Prompt];

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
        EntryKind::ORDER
            .into_iter()
            .find_map(|kind| {
                let name = entry.strip_prefix(kind.keyword())?.strip_prefix(':')?;
                Some(EntryName { kind: Some(kind), name })
            })
            .unwrap_or(EntryName { kind: None, name: entry })
    }

    /// The kind of item this name starts: the first kind, in the order flow,
    /// agent, prompt (or the one its prefix names), of which the program
    /// `has` an item named [`EntryName::name`]. Every resolution of an entry
    /// goes through here, over the HIR program or the compiled one.
    pub fn resolve(&self, has: impl Fn(EntryKind) -> bool) -> Option<EntryKind> {
        EntryKind::ORDER.into_iter().find(|&kind| self.kind.is_none_or(|k| k == kind) && has(kind))
    }

    /// [`EntryName::resolve`] in a HIR program.
    pub fn resolve_in(&self, program: &Program<'_>) -> Option<EntryKind> {
        self.resolve(|kind| match kind {
            EntryKind::Flow => program.flows.contains_key(self.name),
            EntryKind::Agent => program.agents.contains_key(self.name),
            EntryKind::Prompt => program.prompts.contains_key(self.name),
        })
    }
}

/// Whether a diagnostic stops a run: every error, except the heuristics about
/// runtime state (SR101, SR104: warnings at run time) and W0002 (upstream's
/// loader ignores it).
pub fn stops_run(d: &Diagnostic) -> bool {
    d.severity == Severity::Error && d.in_mode(false) && !matches!(d.code(), Code::W0002 | Code::SR101 | Code::SR104)
}

#[cfg(test)]
mod tests {
    use super::{EntryKind, EntryName};

    /// What each entry resolves to when the program has the kinds `has` lists.
    fn resolved(entry: &str, has: &[EntryKind]) -> Option<(EntryKind, String)> {
        let entry = EntryName::parse(entry);
        entry.resolve(|kind| has.contains(&kind)).map(|kind| (kind, entry.name.to_string()))
    }

    #[test]
    fn a_plain_name_is_a_flow_then_an_agent_then_a_prompt_and_a_prefix_names_one_kind() {
        use EntryKind::*;
        assert_eq!(resolved("x", &[Prompt, Agent, Flow]), Some((Flow, "x".into())));
        assert_eq!(resolved("x", &[Prompt, Agent]), Some((Agent, "x".into())));
        assert_eq!(resolved("x", &[Prompt]), Some((Prompt, "x".into())));
        assert_eq!(resolved("prompt:x", &[Prompt, Agent, Flow]), Some((Prompt, "x".into())));
        assert_eq!(resolved("agent:x", &[Prompt, Agent, Flow]), Some((Agent, "x".into())));
        assert_eq!(resolved("agent:x", &[Prompt, Flow]), None);
        assert_eq!(resolved("x", &[]), None);
        // Only the three lower-case kinds are prefixes; anything else is a name.
        assert_eq!(EntryName::parse("Prompt:x"), EntryName { kind: None, name: "Prompt:x" });
        assert_eq!(EntryName::parse("prompt"), EntryName { kind: None, name: "prompt" });
        assert_eq!(EntryName::parse("prompt:"), EntryName { kind: Some(Prompt), name: "" });
    }
}
