//! Checks that look at a whole program: circular agent references (E0011),
//! unused definitions (SR100), a missing entry point (SR105), stdio MCP
//! servers from imported files (SR116), schema fields (SR106) and their types
//! (SR119).

use foldhash::{HashMap, HashMapExt, HashSet, HashSetExt};
use sr_syntax::Reported;

use super::{Anchor, SemanticDiagnostic, UpstreamAt, agent_cycles, imported_tools};
use crate::diagnostic_kinds as kinds;
use crate::entry::entry_point;
use crate::hir::{ItemData, TypeRef};
use crate::items::{Item, ItemKind, file_items};
use crate::membership::is_imported;
use crate::resolve::Program;
use crate::summary::body_summary;
use crate::{Db, File, Name, item_data, program};

#[salsa::tracked(returns(ref))]
pub fn program_checks(db: &dyn Db, root: File) -> Vec<SemanticDiagnostic<'_>> {
    let program = program(db, root);
    let mut out = cycles(db, program);
    if !is_imported(db, root.path(db)) {
        out.extend(unused(db, program));
        out.extend(missing_entry(db, program));
        out.extend(imported_tools::check(db, program));
    }
    out
}

/// E0011. Upstream reports the first cycle its depth-first search meets; we
/// report that one in both modes and every other elementary cycle by default.
fn cycles<'db>(db: &'db dyn Db, program: &Program<'db>) -> Vec<SemanticDiagnostic<'db>> {
    let names: Vec<&Name> = program.agents.keys().collect();
    let index: HashMap<&Name, usize> = names.iter().enumerate().map(|(i, n)| (*n, i)).collect();
    // Edges in upstream's order (delegates, then uses except self-use), with the
    // reference that makes each one.
    let mut edges: Vec<Vec<(usize, Anchor<'db>, &'static str)>> = vec![Vec::new(); names.len()];
    for (i, (name, &agent)) in program.agents.iter().enumerate() {
        let ItemData::Agent(data) = &*item_data(db, agent) else { continue };
        let targets = data
            .delegate
            .iter()
            .map(|t| (t, "delegates to"))
            .chain(data.use_.iter().filter(|t| &t.name != name).map(|t| (t, "uses")));
        for (target, verb) in targets {
            if let Some(&j) = index.get(&target.name) {
                edges[i].push((j, Anchor::Part(agent, target.part), verb));
            }
        }
    }
    let graph: Vec<Vec<usize>> = edges.iter().map(|out| out.iter().map(|(j, _, _)| *j).collect()).collect();
    let first = agent_cycles::upstream_first_cycle(&graph);
    let mut cycles: Vec<Vec<usize>> = first.iter().cloned().collect();
    let first_canonical = first.as_deref().map(agent_cycles::canonical);
    for cycle in agent_cycles::elementary_cycles(&graph) {
        if first_canonical.as_ref() != Some(&agent_cycles::canonical(&cycle)) {
            cycles.push(cycle);
        }
    }
    cycles
        .into_iter()
        .enumerate()
        .map(|(n, cycle)| {
            let head = program.agents[cycle[0]];
            let agents: Vec<String> = cycle.iter().map(|&i| names[i].to_string()).collect();
            let related = cycle
                .windows(2)
                .filter_map(|w| {
                    let (anchor, verb) =
                        edges[w[0]].iter().find(|(j, _, _)| *j == w[1]).map(|(_, a, v)| (a.clone(), *v))?;
                    Some((anchor, format!("'{}' {verb} '{}'", names[w[0]], names[w[1]])))
                })
                .collect();
            SemanticDiagnostic {
                related,
                reported: if n == 0 && first.is_some() { Reported::Always } else { Reported::DefaultOnly },
                upstream_at: UpstreamAt::Other(Anchor::ItemStart(head)),
                ..SemanticDiagnostic::new(kinds::CircularAgentReference { agents }, Anchor::ItemName(head))
            }
        })
        .collect()
}

/// SR100: definitions nothing refers to.
fn unused<'db>(db: &'db dyn Db, program: &Program<'db>) -> Vec<SemanticDiagnostic<'db>> {
    let mut used: HashSet<(ItemKind, Name)> = HashSet::new();
    let mut mark = |kind: ItemKind, name: &Name| {
        used.insert((kind, name.clone()));
    };
    mark(ItemKind::Model, &Name::new_static("main"));
    if let Some(entry) = entry_point(db, program.root) {
        mark(entry.item.kind(db), entry.item.name(db));
    }
    for &item in &program.items {
        match &*item_data(db, item) {
            ItemData::Agent(agent) => {
                agent.tools.iter().for_each(|t| mark(ItemKind::Tool, &t.name));
                agent.delegate.iter().chain(&agent.use_).for_each(|a| {
                    mark(ItemKind::Agent, &a.name);
                    // A remote A2A agent is a tool.
                    mark(ItemKind::Tool, &a.name);
                });
                agent.instruction.iter().chain(&agent.prompt).for_each(|p| mark(ItemKind::Prompt, &p.name));
                agent.retry.iter().for_each(|r| mark(ItemKind::RetryPolicy, &r.name));
                agent.executor.iter().for_each(|e| mark(ItemKind::Executor, &e.name));
                if let Some(crate::hir::AgentTimeout::Named(t)) = &agent.timeout {
                    mark(ItemKind::TimeoutPolicy, &t.name);
                }
            }
            ItemData::Prompt(prompt) => {
                prompt.model.iter().for_each(|m| mark(ItemKind::Model, &m.name));
                prompt.expecting.iter().for_each(|e| mark(ItemKind::Schema, &e.schema.name));
                if let Some(body) = &prompt.body {
                    body.template.interpolations().for_each(|i| mark(ItemKind::Prompt, &i.path[0]));
                }
            }
            ItemData::Executor(executor) => {
                executor.examples.iter().for_each(|p| mark(ItemKind::Prompt, &p.name));
            }
            ItemData::Model(crate::hir::ModelData::Alias(alias)) => mark(ItemKind::Model, &alias.name),
            ItemData::Schema(schema) => {
                for field in &schema.fields {
                    mark_schema_types(&field.ty, &mut mark);
                }
            }
            ItemData::Policy(policy) => {
                if let Some(model) = &policy.use_model {
                    mark(ItemKind::Model, &Name::from(model.as_str()));
                }
            }
            ItemData::Flow | ItemData::Handler(_) => {
                let summary = body_summary(db, item);
                summary.runs_agents.iter().for_each(|a| mark(ItemKind::Agent, a));
                summary.runs_flows.iter().for_each(|f| mark(ItemKind::Flow, f));
                summary.calls_prompts.iter().for_each(|p| mark(ItemKind::Prompt, p));
                summary.call_models.iter().for_each(|m| mark(ItemKind::Model, m));
                // `X.f(…)` names a tool, or an executor (`sandbox.run(code)`).
                for callee in &summary.calls_tools {
                    mark(ItemKind::Tool, callee);
                    mark(ItemKind::Executor, callee);
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    let mut reported: HashSet<(ItemKind, Name)> = HashSet::new();
    for &item in &program.items {
        let kind = item.kind(db);
        if item.file(db) != program.root || matches!(kind, ItemKind::Import | ItemKind::Handler | ItemKind::Policy) {
            continue;
        }
        let name = item.name(db).clone();
        // A nameless item is what error recovery made of a broken line: its
        // syntax error says all there is to say.
        if name.is_empty() || used.contains(&(kind, name.clone())) || !reported.insert((kind, name.clone())) {
            continue;
        }
        out.push(SemanticDiagnostic::new(kinds::Unused { kind, name: name.to_string() }, Anchor::ItemName(item)));
    }
    out
}

fn mark_schema_types(ty: &TypeRef, mark: &mut impl FnMut(ItemKind, &Name)) {
    match ty {
        TypeRef::Named(named) => mark(ItemKind::Schema, &named.name),
        TypeRef::List(inner) | TypeRef::Optional(inner) => mark_schema_types(inner, mark),
        _ => {}
    }
}

/// SR105: a workload upstream cannot start.
fn missing_entry<'db>(db: &'db dyn Db, program: &Program<'db>) -> Vec<SemanticDiagnostic<'db>> {
    let root_items = file_items(db, program.root);
    let runnable = root_items.iter().any(|i| matches!(i.kind(db), ItemKind::Agent | ItemKind::Flow));
    let entry = entry_point(db, program.root);
    if !runnable || entry.is_some_and(|e| e.upstream) {
        return Vec::new();
    }
    let runs_instead = entry.map(|e| e.item.name(db).to_string());
    vec![SemanticDiagnostic::new(kinds::NoEntryPoint { runs_instead }, Anchor::FileStart(program.root))]
}

/// SR106: a field defined twice in one schema.
pub(super) fn schema<'db>(db: &'db dyn Db, root: File, item: Item<'db>) -> Vec<SemanticDiagnostic<'db>> {
    let ItemData::Schema(schema) = &*item_data(db, item) else { return Vec::new() };
    let mut seen: HashMap<&Name, crate::hir::PartId> = HashMap::new();
    let mut out = Vec::new();
    for field in &schema.fields {
        if let Some(named) = unknown_type(&field.ty, program(db, root)) {
            out.push(SemanticDiagnostic {
                reported: Reported::DefaultOnly,
                ..SemanticDiagnostic::new(
                    kinds::UnknownFieldType {
                        ty: named.name.to_string(),
                        field: field.name.name.to_string(),
                        schema: item.name(db).to_string(),
                        suggestion: type_suggestion(db, root, &named.name),
                    },
                    Anchor::Part(item, named.part),
                )
            });
        }
        if let Some(&first) = seen.get(&field.name.name) {
            out.push(SemanticDiagnostic {
                related: vec![(Anchor::Part(item, first), "first defined here".to_string())],
                ..SemanticDiagnostic::new(
                    kinds::DuplicateField { field: field.name.name.to_string(), schema: item.name(db).to_string() },
                    Anchor::Part(item, field.name.part),
                )
            });
        } else {
            seen.insert(&field.name.name, field.name.part);
        }
    }
    out
}

/// The schema name in a field's type that the program does not define.
fn unknown_type<'a>(ty: &'a TypeRef, program: &Program<'_>) -> Option<&'a crate::hir::Named> {
    match ty {
        TypeRef::Named(named) => (!program.schemas.contains_key(&named.name)).then_some(named),
        TypeRef::List(inner) | TypeRef::Optional(inner) => unknown_type(inner, program),
        TypeRef::String | TypeRef::Int | TypeRef::Float | TypeRef::Bool | TypeRef::Missing => None,
    }
}

/// A schema whose name starts like `name` (`Findng`), else a primitive type
/// close to it (`stringy`), else the program's schemas: a constant cost per
/// field.
fn type_suggestion(db: &dyn Db, root: File, name: &Name) -> kinds::Suggestion {
    let schemas = super::suggest::program_names(db, root).of(ItemKind::Schema).suggest(name);
    if matches!(schemas, kinds::Suggestion::DidYouMean(_)) {
        return schemas;
    }
    let primitive = ["string", "int", "float", "bool"]
        .into_iter()
        .map(|p| (super::similarity(&name.to_lowercase(), p), p))
        .filter(|(score, _)| *score >= 0.5)
        .max_by(|a, b| a.0.total_cmp(&b.0));
    match primitive {
        Some((_, p)) => kinds::Suggestion::DidYouMean(p.to_string()),
        None => schemas,
    }
}
