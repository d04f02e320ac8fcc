//! What `sr try ROOT NAME` runs and what it must be given: the item is
//! resolved as the runtime resolves an entry (a flow first, then an agent,
//! then a prompt; `agent:NAME` or `prompt:NAME` for one kind), and the inputs are the variables its prompt reads through
//! `${…}`, following composed prompts as the runtime renders them.

use sr_syntax::TextRange;

use crate::diagnostics::BUILTIN_VARIABLES;
use crate::hir::{ItemData, PromptData, TemplatePart};
use crate::start::{EntryKind, EntryName};
use crate::{Db, File, Item, Name, item_data, program, source_map};

/// What `sr try` runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Tried {
    /// An agent, whose instruction prompt (if any) is this one.
    Agent {
        instruction: Option<Name>,
    },
    Prompt,
}

/// Why `sr try ROOT NAME` does not run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NoTry {
    /// A flow of that name comes first (and `sr try` does not run flows).
    Flow(String),
    /// No agent or prompt of that name; the names there are.
    Unknown { name: String, known: Vec<String> },
}

impl std::fmt::Display for NoTry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NoTry::Flow(name) => {
                write!(f, "'{name}' is a flow: `sr try` runs one agent or prompt (`sr run --entry {name}` runs a flow)")
            }
            NoTry::Unknown { name, known } if known.is_empty() => {
                write!(f, "the program has no agent or prompt named '{name}' (it has none)")
            }
            NoTry::Unknown { name, known } => {
                write!(f, "the program has no agent or prompt named '{name}' (it has: {})", known.join(", "))
            }
        }
    }
}

/// What `sr try ROOT NAME` runs in the program rooted at `root`: `NAME` as
/// the runtime resolves an entry, or `agent:NAME` / `prompt:NAME` for that
/// kind only ([`EntryName`]).
pub fn tried(db: &dyn Db, root: File, entry: &str) -> Result<Tried, NoTry> {
    let program = program(db, root);
    let EntryName { kind, name } = EntryName::parse(entry);
    match EntryName::parse(entry).resolve_in(program) {
        Some(EntryKind::Flow) => Err(NoTry::Flow(name.to_string())),
        Some(EntryKind::Agent) => {
            let instruction = program.agents.get(name).and_then(|&agent| match &*item_data(db, agent) {
                ItemData::Agent(data) => data.instruction.as_ref().map(|i| i.name.clone()),
                _ => None,
            });
            Ok(Tried::Agent { instruction })
        }
        Some(EntryKind::Prompt) => Ok(Tried::Prompt),
        None => {
            let known = match kind {
                Some(EntryKind::Agent) => program.agents.keys().map(|n| n.to_string()).collect(),
                Some(EntryKind::Prompt) => program.prompts.keys().map(|n| n.to_string()).collect(),
                _ => program.agents.keys().chain(program.prompts.keys()).map(|n| n.to_string()).collect(),
            };
            Err(NoTry::Unknown { name: entry.to_string(), known })
        }
    }
}

/// A variable a prompt reads that the run is not given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MissingInput {
    pub name: Name,
    /// The prompt whose body reads it.
    pub prompt: Name,
    pub file: File,
    /// The `${…}` (the first, when it is read several times).
    pub range: TextRange,
}

/// The variables prompt `name` reads, composed prompts' included, that are
/// neither `given` nor set by the runtime ([`BUILTIN_VARIABLES`]), each once,
/// at its first `${…}`: a prompt's own before those of the prompts it
/// composes. A `${x}` naming a prompt composes it unless `x` is given: the
/// runtime reads a variable first.
pub fn missing_inputs(db: &dyn Db, root: File, name: &str, given: &dyn Fn(&str) -> bool) -> Vec<MissingInput> {
    let program = program(db, root);
    let mut out: Vec<MissingInput> = Vec::new();
    let mut seen: Vec<Item<'_>> = Vec::new();
    // A prompt's own variables first, then those of the prompts it composes, in order.
    let mut pending: Vec<(Name, Item<'_>)> =
        program.prompts.get(name).and_then(|p| p.body).map(|body| (Name::from(name), body)).into_iter().collect();
    while let Some((prompt, item)) = pending.pop() {
        if seen.contains(&item) {
            continue;
        }
        seen.push(item);
        let data = item_data(db, item);
        let ItemData::Prompt(PromptData { body: Some(body), .. }) = &*data else { continue };
        let map = source_map(db, item);
        let mut composed = Vec::new();
        for part in &body.template.parts {
            let TemplatePart::Interpolation(i) = part else { continue };
            let base = &i.path[0];
            if given(base) || BUILTIN_VARIABLES.contains(&base.as_str()) {
                continue;
            }
            if let Some(other) = program.prompts.get(base.as_str()).and_then(|p| p.body) {
                if i.function.is_none() {
                    composed.push((base.clone(), other));
                }
                continue;
            }
            if !out.iter().any(|m| &m.name == base) {
                let range = map.part(i.part) + item.offset(db);
                out.push(MissingInput { name: base.clone(), prompt: prompt.clone(), file: item.file(db), range });
            }
        }
        pending.extend(composed.into_iter().rev());
    }
    out
}

#[cfg(test)]
mod tests {
    use expect_test::{Expect, expect};

    use super::*;
    use crate::RootDatabase;

    fn check(text: &str, name: &str, given: &[&str], expect: Expect) {
        let mut db = RootDatabase::default();
        let root = db.set_file("/main.sr", text);
        let (mut out, prompt) = match tried(&db, root, name) {
            Ok(Tried::Prompt) => ("prompt\n".to_string(), Some(name.to_string())),
            Ok(Tried::Agent { instruction }) => {
                (format!("agent, instruction {instruction:?}\n"), instruction.map(|i| i.to_string()))
            }
            Err(refusal) => (format!("{refusal}\n"), None),
        };
        for m in prompt.iter().flat_map(|p| missing_inputs(&db, root, p, &|n| given.contains(&n))) {
            out.push_str(&format!("{} in {} at {:?}\n", m.name, m.prompt, &text[m.range]));
        }
        expect.assert_eq(&out);
    }

    const PROGRAM: &str = r#"
prompt tone: """Be ${mood}."""
prompt greet: """${tone} Hi ${who.name}, ${len(items)} items, ${who.age}; ${input_prompt}"""
agent helper:
    instruction greet
flow main:
    $who = {name: "a"}
    $mood = "calm"
    $items = []
    $r = run agent helper
"#;

    #[test]
    fn a_prompt_needs_its_variables_and_its_composed_prompts_variables() {
        check(
            PROGRAM,
            "greet",
            &[],
            expect![[r#"
                prompt
                who in greet at "${who.name}"
                items in greet at "${len(items)}"
                mood in tone at "${mood}"
            "#]],
        );
        check(
            PROGRAM,
            "greet",
            &["who", "items", "mood"],
            expect![[r#"
            prompt
        "#]],
        );
    }

    #[test]
    fn a_given_variable_stands_for_the_prompt_of_its_name() {
        check(
            PROGRAM,
            "greet",
            &["tone"],
            expect![[r#"
                prompt
                who in greet at "${who.name}"
                items in greet at "${len(items)}"
            "#]],
        );
    }

    #[test]
    fn an_agent_is_tried_with_its_instruction() {
        check(
            PROGRAM,
            "helper",
            &["who", "items"],
            expect![[r#"
                agent, instruction Some("greet")
                mood in tone at "${mood}"
            "#]],
        );
    }

    #[test]
    fn flows_and_unknown_names_are_refused() {
        check(
            PROGRAM,
            "main",
            &[],
            expect![[r#"
            'main' is a flow: `sr try` runs one agent or prompt (`sr run --entry main` runs a flow)
        "#]],
        );
        check(
            PROGRAM,
            "nope",
            &[],
            expect![[r#"
            the program has no agent or prompt named 'nope' (it has: helper, tone, greet)
        "#]],
        );
    }
}
