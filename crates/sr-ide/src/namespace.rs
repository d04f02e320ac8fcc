//! Which items share flow variables. At run time a run has one flat
//! `ctx.vars` (language.md §10.2): a sub-flow (`run F`) reads and writes its
//! caller's variables, `call llm P` resolves P's `${x}` in it, `run agent A`
//! assigns A's `produces` and reads A's `prompt` variable there, and a prompt
//! composed into another (`${p}`) is evaluated in the same context. Items
//! joined by these links form one namespace; flows that never meet in a run
//! keep their own (two unrelated flows may both use `$x`).

use std::collections::{HashMap, HashSet};

use sr_hir::graph::{EdgeKind, edges};
use sr_hir::hir::ItemData;
use sr_hir::resolve::Program;
use sr_hir::summary::body_summary;
use sr_hir::{Db, File, Item, ItemKind, Name, RootDatabase, item_data, program, programs_of};

/// The program a file's names are read in: the first program that imports
/// it (so an imported file sees its importer's definitions and variables, as
/// the checker judges it), or its own.
pub(crate) fn analysis_program(db: &dyn Db, file: File) -> &Program<'_> {
    program(db, programs_of(db, file).first().copied().unwrap_or(file))
}

/// Every program a file is judged in ([`sr_hir::programs_of`]).
pub(crate) fn analysis_programs(db: &dyn Db, file: File) -> impl Iterator<Item = &Program<'_>> {
    programs_of(db, file).iter().map(move |&root| program(db, root))
}

/// The items that share variables with `item`: its namespace in every
/// program (root file and imports) that contains it, `item` first.
pub(crate) fn variable_scope<'db>(db: &'db RootDatabase, item: Item<'db>) -> Vec<Item<'db>> {
    let mut out = vec![item];
    let mut seen = HashSet::from([item]);
    for file in db.files() {
        if program(db, file).items.contains(&item) {
            out.extend(component(db, file, item).into_iter().filter(|&other| seen.insert(other)));
        }
    }
    out
}

/// The items linked to `item` in the program rooted at `root`.
fn component<'db>(db: &'db dyn Db, root: File, item: Item<'db>) -> Vec<Item<'db>> {
    let program = program(db, root);
    let mut sets = UnionFind::default();
    // Every definition of a prompt, by each of them (`call llm` names the one with the body).
    let definitions: HashMap<Item<'db>, &[Item<'db>]> =
        program.prompts.values().flat_map(|p| p.definitions.iter().map(|&d| (d, &p.definitions[..]))).collect();
    for edge in edges(db, root) {
        match edge.kind {
            EdgeKind::RunFlow | EdgeKind::RunAgent => sets.union(edge.from, edge.to),
            EdgeKind::CallLlm => {
                let parts = definitions.get(&edge.to).copied().unwrap_or(std::slice::from_ref(&edge.to));
                parts.iter().for_each(|&p| sets.union(edge.from, p));
            }
            // Instructions are evaluated with no variables; delegation and
            // tools run the other agent in a session of its own.
            EdgeKind::Instruction | EdgeKind::Delegate | EdgeKind::Use => {}
        }
    }
    for &candidate in &program.items {
        match &*item_data(db, candidate) {
            ItemData::Agent(agent) => {
                if let Some(prompt) = agent.prompt.as_ref().and_then(|p| program.prompts.get(&p.name)) {
                    prompt.definitions.iter().for_each(|&p| sets.union(candidate, p));
                }
            }
            ItemData::Prompt(prompt) => {
                let composed = prompt.body.iter().flat_map(|b| b.template.interpolations());
                for name in composed.filter_map(|i| i.path.first().cloned()) {
                    if let Some(other) = program.prompts.get(&name) {
                        other.definitions.iter().for_each(|&p| sets.union(candidate, p));
                    }
                }
            }
            _ => {}
        }
    }
    // A prompt no flow reaches may be called from any of them (the checker
    // accepts its `${x}` when any flow assigns `x`): it shares variables with
    // every flow or handler that assigns one of them.
    let bodies: Vec<Item<'db>> =
        program.items.iter().copied().filter(|i| matches!(i.kind(db), ItemKind::Flow | ItemKind::Handler)).collect();
    let reached: HashSet<Item<'db>> = bodies.iter().map(|&b| sets.find(b)).collect();
    // Which flows and handlers assign each variable: built once, so that a
    // program of many flows and prompts costs a lookup per `${x}`.
    let mut assigners: HashMap<&Name, Vec<Item<'db>>> = HashMap::new();
    let summaries: Vec<_> = bodies.iter().map(|&b| (b, body_summary(db, b))).collect();
    for (flow, summary) in &summaries {
        for variable in &summary.assigned {
            assigners.entry(variable).or_default().push(*flow);
        }
    }
    let mut joined: HashSet<&Name> = HashSet::new();
    for prompt in program.prompts.values() {
        let Some(body) = prompt.body else { continue };
        if reached.contains(&sets.find(body)) {
            continue;
        }
        let ItemData::Prompt(data) = &*item_data(db, body) else { continue };
        let variables = data
            .body
            .iter()
            .flat_map(|b| b.template.interpolations())
            .filter_map(|i| i.path.first())
            .filter(|name| !program.prompts.contains_key(*name));
        for variable in variables {
            let Some((&variable, flows)) = assigners.get_key_value(variable) else { continue };
            // The flows assigning one variable join one another once; each
            // prompt then joins the first of them.
            if joined.insert(variable) {
                flows.windows(2).for_each(|pair| sets.union(pair[0], pair[1]));
            }
            sets.union(body, flows[0]);
        }
    }
    let root_of = sets.find(item);
    program.items.iter().copied().filter(|&i| i != item && sets.find(i) == root_of).collect()
}

#[derive(Default)]
struct UnionFind<'db> {
    parent: HashMap<Item<'db>, Item<'db>>,
}

impl<'db> UnionFind<'db> {
    fn find(&mut self, item: Item<'db>) -> Item<'db> {
        let mut root = item;
        while let Some(&parent) = self.parent.get(&root) {
            root = parent;
        }
        // Path compression: point every visited item at the root.
        let mut at = item;
        while let Some(&parent) = self.parent.get(&at) {
            self.parent.insert(at, root);
            at = parent;
        }
        root
    }

    fn union(&mut self, a: Item<'db>, b: Item<'db>) {
        let (a, b) = (self.find(a), self.find(b));
        if a != b {
            self.parent.insert(a, b);
        }
    }
}

/// How an item is named in messages: `flow 'main'`.
pub(crate) fn describe(db: &dyn Db, item: Item<'_>) -> String {
    format!("{} '{}'", item.kind(db).describe(), item.name(db))
}
