//! Name resolution: a file and the files it imports form a program whose
//! definitions are visible everywhere in it (forward references included).

use indexmap::IndexMap;
use sr_syntax::Reported;

use crate::anchor::{Anchor, SemanticDiagnostic, UpstreamAt};
pub use crate::db::resolve_import;
use crate::diagnostic_kinds as kinds;
use crate::hir::{ImportSource, ItemData, PromptData};
use crate::items::{Item, ItemKind, file_items};
use crate::{Db, File, Name, item_data};

/// One program: a root file and everything it imports.
#[derive(Debug, PartialEq, Eq, salsa::SalsaValue)]
pub struct Program<'db> {
    pub root: File,
    /// Imported files before the files that import them; the root last.
    pub files: Vec<File>,
    /// Every item, in the order of `files`.
    pub items: Vec<Item<'db>>,
    pub models: IndexMap<Name, Item<'db>>,
    pub schemas: IndexMap<Name, Item<'db>>,
    pub tools: IndexMap<Name, Item<'db>>,
    pub retry_policies: IndexMap<Name, Item<'db>>,
    pub timeout_policies: IndexMap<Name, Item<'db>>,
    pub policies: IndexMap<Name, Item<'db>>,
    pub executors: IndexMap<Name, Item<'db>>,
    /// The unnamed agent is `default`.
    pub agents: IndexMap<Name, Item<'db>>,
    pub flows: IndexMap<Name, Item<'db>>,
    pub prompts: IndexMap<Name, MergedPrompt<'db>>,
    /// Top-level and agent-scoped handlers.
    pub handlers: Vec<Item<'db>>,
    /// Each agent's `produces` variable, by agent.
    pub produces: IndexMap<Name, Name>,
    /// Duplicates, prompt merging problems, missing and cyclic imports.
    pub diagnostics: Vec<SemanticDiagnostic<'db>>,
}

/// A prompt after merging its declarations and definitions, as upstream does:
/// a later body replaces an earlier one, modifiers fill in when unset and
/// conflicting ones discard the later definition (E0014).
#[derive(Debug, Clone, PartialEq, Eq, salsa::SalsaValue)]
pub struct MergedPrompt<'db> {
    /// The definitions that took part, in order.
    pub definitions: Vec<Item<'db>>,
    /// The definition whose body is used.
    pub body: Option<Item<'db>>,
    pub model: Option<Item<'db>>,
    pub expecting: Option<Item<'db>>,
    pub inherit: Option<Item<'db>>,
    pub escalation: Option<Item<'db>>,
    /// Where upstream places the merged prompt.
    pub position: Item<'db>,
}

impl<'db> Program<'db> {
    /// The definitions of `kind`, by name.
    pub fn defs(&self, kind: ItemKind) -> Option<&IndexMap<Name, Item<'db>>> {
        Some(match kind {
            ItemKind::Model => &self.models,
            ItemKind::Schema => &self.schemas,
            ItemKind::Tool => &self.tools,
            ItemKind::RetryPolicy => &self.retry_policies,
            ItemKind::TimeoutPolicy => &self.timeout_policies,
            ItemKind::Policy => &self.policies,
            ItemKind::Executor => &self.executors,
            ItemKind::Agent => &self.agents,
            ItemKind::Flow => &self.flows,
            _ => return None,
        })
    }

    /// The item that defines `name` as `kind` (the body of a prompt).
    pub fn lookup(&self, kind: ItemKind, name: &str) -> Option<Item<'db>> {
        match kind {
            ItemKind::Prompt => self.prompts.get(name).map(|p| p.body.unwrap_or(p.position)),
            _ => self.defs(kind)?.get(name).copied(),
        }
    }
}

impl<'db> MergedPrompt<'db> {
    /// The merged view of the prompt's data.
    pub fn data(&self, db: &'db dyn Db) -> PromptData {
        let get = |item: Option<Item<'db>>| item.map(|i| prompt_data(db, i));
        PromptData {
            body: get(self.body).and_then(|d| d.body),
            model: get(self.model).and_then(|d| d.model),
            expecting: get(self.expecting).and_then(|d| d.expecting),
            inherit: get(self.inherit).and_then(|d| d.inherit),
            escalation: get(self.escalation).and_then(|d| d.escalation),
        }
    }
}

fn prompt_data(db: &dyn Db, item: Item<'_>) -> PromptData {
    match &*item_data(db, item) {
        ItemData::Prompt(data) => data.clone(),
        _ => unreachable!("not a prompt"),
    }
}

#[salsa::tracked(returns(ref))]
pub fn program(db: &dyn Db, root: File) -> Program<'_> {
    let mut loader = Loader { db, files: Vec::new(), stack: Vec::new(), root_import: None, diagnostics: Vec::new() };
    loader.load(root);
    let Loader { files, mut diagnostics, .. } = loader;

    let mut program = Program {
        root,
        items: files.iter().flat_map(|&f| file_items(db, f).iter().copied()).collect(),
        files,
        models: IndexMap::new(),
        schemas: IndexMap::new(),
        tools: IndexMap::new(),
        retry_policies: IndexMap::new(),
        timeout_policies: IndexMap::new(),
        policies: IndexMap::new(),
        executors: IndexMap::new(),
        agents: IndexMap::new(),
        flows: IndexMap::new(),
        prompts: IndexMap::new(),
        handlers: Vec::new(),
        produces: IndexMap::new(),
        diagnostics: Vec::new(),
    };
    let mut first_nameless_retry = None;
    for &item in &program.items {
        let kind = item.kind(db);
        match kind {
            ItemKind::Import => {}
            // What error recovery made of a broken line: nothing can refer to it,
            // and two of them are not duplicates. (The unnamed agent is `default`.)
            _ if item.name(db).is_empty() => {}
            ItemKind::Handler => program.handlers.push(item),
            ItemKind::Prompt => merge_prompt(db, &mut program.prompts, item, &mut diagnostics),
            ItemKind::Policy => {
                program.policies.entry(item.name(db).clone()).or_insert(item);
            }
            _ => {
                let defs = match kind {
                    ItemKind::Model => &mut program.models,
                    ItemKind::Schema => &mut program.schemas,
                    ItemKind::Tool => &mut program.tools,
                    ItemKind::RetryPolicy => &mut program.retry_policies,
                    ItemKind::TimeoutPolicy => &mut program.timeout_policies,
                    ItemKind::Executor => &mut program.executors,
                    ItemKind::Agent => &mut program.agents,
                    _ => &mut program.flows,
                };
                let name = item.name(db).clone();
                if let Some(&first) = defs.get(&name) {
                    diagnostics.push(duplicate(db, kind, &name, first, item));
                } else {
                    defs.insert(name, item);
                }
                if kind == ItemKind::RetryPolicy && nameless_upstream(item.name(db)) {
                    match first_nameless_retry {
                        Some(first) => diagnostics.push(SemanticDiagnostic {
                            reported: Reported::UpstreamOnly,
                            ..duplicate(db, kind, "", first, item)
                        }),
                        None => first_nameless_retry = Some(item),
                    }
                }
            }
        }
    }
    // E0013 in the order prompts were first seen.
    for (name, prompt) in &program.prompts {
        if prompt.body.is_none() {
            diagnostics.push(SemanticDiagnostic {
                upstream_at: UpstreamAt::Other(Anchor::ItemStart(prompt.position)),
                ..SemanticDiagnostic::new(
                    kinds::PromptWithoutBody { prompt: name.to_string() },
                    Anchor::ItemName(prompt.position),
                )
            });
        }
    }
    for (name, &agent) in &program.agents {
        if let ItemData::Agent(data) = &*item_data(db, agent)
            && let Some(produces) = &data.produces
        {
            program.produces.insert(name.clone(), produces.name.clone());
        }
    }
    program.diagnostics = diagnostics;
    program
}

/// Upstream registers a retry policy named like a backoff (`retry fixed = 3
/// times`) under the empty name: references to it are undefined (E0001) and
/// two of them are duplicates (E0003) in `--compat upstream`.
pub fn nameless_upstream(retry_policy: &str) -> bool {
    matches!(retry_policy, "fixed" | "linear" | "exponential")
}

fn duplicate<'db>(
    db: &'db dyn Db,
    kind: ItemKind,
    name: &str,
    first: Item<'db>,
    item: Item<'db>,
) -> SemanticDiagnostic<'db> {
    // Upstream's retry and timeout policies carry no position: line 1, column 0.
    let upstream_at = match kind {
        ItemKind::RetryPolicy | ItemKind::TimeoutPolicy => UpstreamAt::FileStart,
        _ => UpstreamAt::Other(Anchor::ItemStart(item)),
    };
    let first_file = (first.file(db) != item.file(db)).then(|| first.file(db).path(db).display().to_string());
    SemanticDiagnostic {
        related: vec![(Anchor::ItemName(first), format!("first definition of {} '{name}'", kind.describe()))],
        upstream_at,
        ..SemanticDiagnostic::new(
            kinds::DuplicateDefinition { kind, name: name.to_string(), first_file },
            Anchor::ItemName(item),
        )
    }
}

fn merge_prompt<'db>(
    db: &'db dyn Db,
    prompts: &mut IndexMap<Name, MergedPrompt<'db>>,
    item: Item<'db>,
    diagnostics: &mut Vec<SemanticDiagnostic<'db>>,
) {
    let name = item.name(db).clone();
    let new = prompt_data(db, item);
    let Some(merged) = prompts.get_mut(&name) else {
        prompts.insert(
            name,
            MergedPrompt {
                definitions: vec![item],
                body: new.body.is_some().then_some(item),
                model: new.model.is_some().then_some(item),
                expecting: new.expecting.is_some().then_some(item),
                inherit: new.inherit.is_some().then_some(item),
                escalation: new.escalation.is_some().then_some(item),
                position: item,
            },
        );
        return;
    };
    let existing = merged.data(db);
    let conflicts = [
        ("model", existing.model.as_ref().map(|m| m.name.to_string()), new.model.as_ref().map(|m| m.name.to_string())),
        ("expecting", existing.expecting.as_ref().map(expecting_text), new.expecting.as_ref().map(expecting_text)),
        (
            "inherit",
            existing.inherit.as_ref().map(|i| format!("${}", i.name)),
            new.inherit.as_ref().map(|i| format!("${}", i.name)),
        ),
    ];
    for (modifier, first, second) in conflicts {
        if let (Some(first), Some(second)) = (first, second)
            && first != second
        {
            diagnostics.push(SemanticDiagnostic {
                related: vec![(
                    Anchor::ItemName(merged.definitions[0]),
                    format!("first definition of prompt '{name}'"),
                )],
                upstream_at: UpstreamAt::Other(Anchor::ItemStart(item)),
                ..SemanticDiagnostic::new(
                    kinds::ConflictingPromptModifier { modifier, prompt: name.to_string(), first, second },
                    Anchor::ItemName(item),
                )
            });
            return;
        }
    }
    merged.definitions.push(item);
    if new.body.is_some() {
        merged.body = Some(item);
        merged.position = item;
    }
    let fill = |slot: &mut Option<Item<'db>>, present: bool| {
        if present {
            *slot = Some(item);
        }
    };
    fill(&mut merged.model, new.model.is_some() && existing.model.is_none());
    fill(&mut merged.expecting, new.expecting.is_some() && existing.expecting.is_none());
    fill(&mut merged.inherit, new.inherit.is_some() && existing.inherit.is_none());
    fill(&mut merged.escalation, new.escalation.is_some());
}

fn expecting_text(expecting: &crate::hir::Expecting) -> String {
    format!("{}{}", expecting.schema.name, if expecting.array { "[]" } else { "" })
}

/// Walks imports depth first; a file's imports load before the file.
struct Loader<'db> {
    db: &'db dyn Db,
    files: Vec<File>,
    stack: Vec<File>,
    /// The root file's import being followed: cycles are reported there, so
    /// that every file on a cycle reports it.
    root_import: Option<Anchor<'db>>,
    diagnostics: Vec<SemanticDiagnostic<'db>>,
}

impl<'db> Loader<'db> {
    fn load(&mut self, file: File) {
        self.stack.push(file);
        for &item in file_items(self.db, file) {
            if item.kind(self.db) != ItemKind::Import {
                continue;
            }
            let ItemData::Import(import) = &*item_data(self.db, item) else { continue };
            let ImportSource::Local(relative) = &import.source else { continue };
            let anchor = Anchor::Part(item, import.source_part);
            if self.stack.len() == 1 {
                self.root_import = Some(anchor.clone());
            }
            let path = resolve_import(self.db, file, relative);
            match self.db.workspace().files(self.db).get(&path).copied() {
                None => {
                    let kind: kinds::DiagnosticKind = match self.db.workspace().unreadable(self.db).get(&path) {
                        Some(reason) => kinds::Unreadable { path: relative.clone(), error: reason.clone() }.into(),
                        None => {
                            kinds::ImportNotFound { import: relative.clone(), looked_for: path.display().to_string() }
                                .into()
                        }
                    };
                    self.diagnostics.push(SemanticDiagnostic {
                        reported: Reported::DefaultOnly,
                        ..SemanticDiagnostic::new(kind, anchor)
                    })
                }
                Some(target) if let Some(start) = self.stack.iter().position(|&f| f == target) => {
                    let files: Vec<String> =
                        self.stack[start..].iter().chain([&target]).map(|f| file_label(self.db, *f)).collect();
                    let at = self.root_import.clone().unwrap_or(anchor);
                    self.diagnostics.push(SemanticDiagnostic {
                        reported: Reported::DefaultOnly,
                        ..SemanticDiagnostic::new(kinds::ImportCycle { files }, at)
                    });
                }
                Some(target) if self.files.contains(&target) => {}
                Some(target) => self.load(target),
            }
        }
        self.stack.pop();
        self.files.push(file);
    }
}

fn file_label(db: &dyn Db, file: File) -> String {
    file.path(db).file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
}
