//! Every name in a file: where it is, what it names, and whether it defines it.
//! The features (goto, references, rename, hover, highlighting) are all views
//! of this one table.

use std::path::PathBuf;

use sr_hir::hir::{Body, Expr, ItemData, ModelData, Named, Place, PlaceUse, Stmt, TypeRef};
use sr_hir::resolve::{Program, resolve_import};
use sr_hir::{Db, File, Item, ItemKind, Name, body, file_items, item_data, item_name_range, item_syntax, source_map};
use sr_syntax::ast::{self, AstNode};
use sr_syntax::{SyntaxKind, TextRange, TextSize};

use crate::NavigationTarget;
use crate::symbol_kind::SymbolKind;

/// What a name denotes, before resolution.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum Symbol {
    Item(ItemKind, Name),
    /// A flow variable (one namespace at run time; references are per item).
    Variable(Name),
    /// The file an `import ./x.sr` names.
    Import(PathBuf),
}

/// One spelling of a name in a file.
#[derive(Debug, Clone)]
pub(crate) struct Occurrence<'db> {
    /// Exactly the name's text (inside quotes and `${…}`).
    pub range: TextRange,
    pub symbol: Symbol,
    /// The item the occurrence is in.
    pub item: Item<'db>,
    /// A definition's own name, or an assignment to a variable.
    pub def: bool,
    /// Written with a `$` (variables) or inside a string: soft keywords stay valid there.
    pub sheltered: bool,
}

/// Every occurrence in `file`, in source order.
pub(crate) fn file_occurrences<'db>(db: &'db dyn Db, file: File) -> Vec<Occurrence<'db>> {
    let program = crate::namespace::analysis_program(db, file);
    let mut out = Vec::new();
    for &item in file_items(db, file) {
        item_occurrences(db, program, item, &mut out);
    }
    out.sort_by_key(|o| (o.range.start(), o.range.end()));
    out
}

/// The occurrence under `offset`; at a boundary between two, the one that starts there.
pub(crate) fn occurrence_at<'a, 'db>(
    occurrences: &'a [Occurrence<'db>],
    offset: TextSize,
) -> Option<&'a Occurrence<'db>> {
    occurrences
        .iter()
        .find(|o| o.range.contains(offset))
        .or_else(|| occurrences.iter().find(|o| o.range.end() == offset))
}

fn item_occurrences<'db>(db: &'db dyn Db, program: &Program<'db>, item: Item<'db>, out: &mut Vec<Occurrence<'db>>) {
    let text = item.file(db).text(db).clone();
    let map = source_map(db, item);
    let offset = item.offset(db);
    let mut cx = Collect { text: &text, program, item, offset, out };
    let kind = item.kind(db);
    if let Some(name) = map.name
        && !matches!(kind, ItemKind::Handler | ItemKind::Import)
    {
        cx.push(name + offset, Symbol::Item(kind, item.name(db).clone()), true, false);
    }
    let is_prompt = |name: &Name| program.prompts.contains_key(name);
    match &*item_data(db, item) {
        ItemData::Import(import) => {
            if let sr_hir::hir::ImportSource::Local(relative) = &import.source {
                let path = resolve_import(db, item.file(db), relative);
                cx.push(map.part(import.source_part) + offset, Symbol::Import(path), false, true);
            }
        }
        ItemData::Model(ModelData::Alias(alias)) => cx.named(&map.parts, alias, ItemKind::Model, false),
        ItemData::Schema(schema) => {
            for field in &schema.fields {
                cx.type_ref(&map.parts, &field.ty);
            }
        }
        ItemData::Prompt(prompt) => {
            if let Some(model) = &prompt.model {
                cx.named(&map.parts, model, ItemKind::Model, true);
            }
            if let Some(expecting) = &prompt.expecting {
                cx.named(&map.parts, &expecting.schema, ItemKind::Schema, false);
            }
            if let Some(inherit) = &prompt.inherit {
                cx.name_in(map.part(inherit.part), &inherit.name, Symbol::Variable(inherit.name.clone()), false, true);
            }
            if let Some(body) = &prompt.body {
                for interpolation in body.template.interpolations() {
                    let Some(name) = interpolation.path.first().filter(|n| !n.is_empty()) else { continue };
                    let symbol = if is_prompt(name) {
                        Symbol::Item(ItemKind::Prompt, name.clone())
                    } else {
                        Symbol::Variable(name.clone())
                    };
                    cx.interpolation(map.part(interpolation.part), name, interpolation.function.is_some(), symbol);
                }
            }
        }
        ItemData::Agent(agent) => {
            let parts = &map.parts;
            agent.tools.iter().for_each(|t| cx.named(parts, t, ItemKind::Tool, false));
            agent.instruction.iter().for_each(|p| cx.named(parts, p, ItemKind::Prompt, false));
            if let Some(prompt) = &agent.prompt {
                if is_prompt(&prompt.name) {
                    cx.named(parts, prompt, ItemKind::Prompt, false);
                } else {
                    cx.push(map.part(prompt.part) + offset, Symbol::Variable(prompt.name.clone()), false, false);
                }
            }
            if let Some(produces) = &agent.produces {
                cx.push(map.part(produces.part) + offset, Symbol::Variable(produces.name.clone()), true, false);
            }
            agent.retry.iter().for_each(|r| cx.named(parts, r, ItemKind::RetryPolicy, false));
            agent.executor.iter().for_each(|e| cx.named(parts, e, ItemKind::Executor, false));
            if let Some(sr_hir::hir::AgentTimeout::Named(t)) = &agent.timeout {
                cx.named(parts, t, ItemKind::TimeoutPolicy, false);
            }
            // `use`/`delegate` name an agent, or a remote A2A agent (an `a2a` tool).
            agent.delegate.iter().chain(&agent.use_).for_each(|a| {
                let remote = !program.agents.contains_key(&a.name)
                    && program.tools.get(&a.name).is_some_and(|&tool| {
                        matches!(&*item_data(db, tool), ItemData::Tool(sr_hir::ToolData::A2a { .. }))
                    });
                cx.named(parts, a, if remote { ItemKind::Tool } else { ItemKind::Agent }, false)
            });
            if let Some(history) = &agent.history
                && program.policies.contains_key(history)
                && let Some(range) = agent_history_range(db, item)
            {
                cx.push(range + offset, Symbol::Item(ItemKind::Policy, history.clone()), false, false);
            }
        }
        ItemData::Policy(_) => {
            if let Some((range, model)) = policy_model(db, item) {
                cx.name_in(range, &model, Symbol::Item(ItemKind::Model, model.clone()), false, true);
            }
        }
        ItemData::Flow | ItemData::Handler(_) => cx.body(&body(db, item), &map),
        _ => {}
    }
}

struct Collect<'a, 'db> {
    text: &'a str,
    program: &'a Program<'db>,
    item: Item<'db>,
    offset: TextSize,
    out: &'a mut Vec<Occurrence<'db>>,
}

impl<'db> Collect<'_, 'db> {
    fn push(&mut self, range: TextRange, symbol: Symbol, def: bool, sheltered: bool) {
        self.out.push(Occurrence { range, symbol, item: self.item, def, sheltered });
    }

    /// `name` inside the item-relative `range` (after a `$`, inside quotes).
    fn name_in(&mut self, range: TextRange, name: &str, symbol: Symbol, def: bool, sheltered: bool) {
        let range = range + self.offset;
        let Some(text) = self.text.get(std::ops::Range::<usize>::from(range)) else { return };
        if let Some(at) = text.find(name) {
            let start = range.start() + TextSize::from(at as u32);
            let dollar = text[..at].ends_with('$');
            self.push(TextRange::at(start, TextSize::of(name)), symbol, def, sheltered || dollar);
        }
    }

    fn named(&mut self, parts: &[TextRange], named: &Named, kind: ItemKind, quoted: bool) {
        let range = parts[named.part.0 as usize];
        self.name_in(range, &named.name, Symbol::Item(kind, named.name.clone()), false, quoted);
    }

    fn interpolation(&mut self, part: TextRange, name: &str, call: bool, symbol: Symbol) {
        // In `${len(items)}` the name is the argument.
        let skip = if call {
            self.text.get(std::ops::Range::<usize>::from(part + self.offset)).and_then(|t| t.find('(')).unwrap_or(0)
        } else {
            2
        };
        let start = part.start() + TextSize::from(skip as u32);
        if start < part.end() {
            self.name_in(TextRange::new(start, part.end()), name, symbol, false, true);
        }
    }

    fn type_ref(&mut self, parts: &[TextRange], ty: &TypeRef) {
        match ty {
            TypeRef::Named(named) => self.named(parts, named, ItemKind::Schema, false),
            TypeRef::List(inner) | TypeRef::Optional(inner) => self.type_ref(parts, inner),
            _ => {}
        }
    }

    fn place(&mut self, parts: &[TextRange], place: &Place, def: bool) {
        if !place.name.is_empty() {
            let range = parts[place.part.0 as usize];
            self.name_in(range, &place.name, Symbol::Variable(place.name.clone()), def, false);
        }
    }

    fn body(&mut self, body: &Body, map: &sr_hir::SourceMap) {
        let parts = &map.parts;
        body.walk_stmts(&mut |_, stmt| {
            for (place, used) in stmt.places() {
                self.place(parts, place, used == PlaceUse::Bind && place.fields.is_empty());
            }
            if let Some((how, callee)) = stmt.invokes() {
                self.named(parts, callee, how.item_kind(), false);
            }
            if let Stmt::Call(call) = stmt {
                call.model.iter().for_each(|m| self.named(parts, m, ItemKind::Model, true));
            }
            for expr in stmt.exprs() {
                body.walk_expr(expr, &mut |id, expr| match expr {
                    Expr::Var { name, .. } if !name.is_empty() => {
                        self.name_in(map.exprs[id], name, Symbol::Variable(name.clone()), false, false)
                    }
                    Expr::Call { function, .. } => {
                        let tool = function.split_once('.').map(|(tool, _)| Name::from(tool));
                        if let Some(tool) = tool.filter(|t| !t.is_empty()) {
                            let kind = match self.program.tools.contains_key(&tool) {
                                true => ItemKind::Tool,
                                false => ItemKind::Executor,
                            };
                            if self.program.lookup(kind, &tool).is_some() {
                                self.name_in(map.exprs[id], &tool, Symbol::Item(kind, tool.clone()), false, false);
                            }
                        }
                    }
                    Expr::Template(template) => {
                        for i in template.interpolations() {
                            if let Some(name) = i.path.first().filter(|n| !n.is_empty()) {
                                let symbol = Symbol::Variable(name.clone());
                                self.interpolation(parts[i.part.0 as usize], name, i.function.is_some(), symbol);
                            }
                        }
                    }
                    _ => {}
                });
            }
        });
    }
}

/// The word after `history` (its last occurrence wins, as upstream reads it).
fn agent_history_range(db: &dyn Db, item: Item<'_>) -> Option<TextRange> {
    let agent = ast::AgentDef::cast(item_syntax(db, item))?;
    agent
        .properties()
        .filter(|p| p.keyword().is_some_and(|k| k.kind() == SyntaxKind::HISTORY_KW))
        .filter_map(|p| p.word())
        .last()
        .map(|w| w.text_range())
}

/// The `use model: "m"` string of a policy (item-relative range) and the model name.
fn policy_model(db: &dyn Db, item: Item<'_>) -> Option<(TextRange, Name)> {
    let policy = ast::PolicyDef::cast(item_syntax(db, item))?;
    policy.properties().filter(|p| p.key().is_some_and(|k| k.kind() == SyntaxKind::USE_KW)).find_map(|p| {
        let literal = p.model()?;
        Some((literal.syntax().text_range(), Name::from(literal.string()?)))
    })
}

// ---------------------------------------------------------------- resolution

/// The item a symbol names in `program`: for prompts the definition whose body
/// is used; for duplicates the first definition.
pub(crate) fn resolve_item<'db>(program: &Program<'db>, kind: ItemKind, name: &str) -> Option<Item<'db>> {
    program.lookup(kind, name)
}

/// Where a variable is first assigned: in `item` itself, else in the program's
/// flows and handlers in order, else an agent's `produces`.
pub(crate) fn variable_definition<'db>(
    db: &'db dyn Db,
    program: &Program<'db>,
    item: Item<'db>,
    name: &Name,
) -> Option<Occurrence<'db>> {
    let first_def = |candidate: Item<'db>| {
        let mut occurrences = Vec::new();
        item_occurrences(db, program, candidate, &mut occurrences);
        occurrences
            .into_iter()
            .filter(|o| o.def && o.symbol == Symbol::Variable(name.clone()))
            .min_by_key(|o| o.range.start())
    };
    if let Some(found) = first_def(item) {
        return Some(found);
    }
    let bodies = program.items.iter().copied().filter(|i| matches!(i.kind(db), ItemKind::Flow | ItemKind::Handler));
    let agents = program.agents.values().copied();
    bodies.chain(agents).filter(|&i| i != item).find_map(first_def)
}

/// The occurrences of `item` in its own file (computed for that item only).
pub(crate) fn occurrences_of_item<'db>(db: &'db dyn Db, item: Item<'db>) -> Vec<Occurrence<'db>> {
    let mut out = Vec::new();
    item_occurrences(db, crate::namespace::analysis_program(db, item.file(db)), item, &mut out);
    out
}

// ---------------------------------------------------------------- ranges

/// The item's range without trailing trivia and line breaks.
pub(crate) fn item_range(db: &dyn Db, item: Item<'_>) -> TextRange {
    let node = item_syntax(db, item);
    // Backwards from the last token: only the trailing trivia is walked, not
    // the whole item (a root of its own: the walk stops at its first token).
    let end = std::iter::successors(node.last_token(), |t| t.prev_token())
        .find(|t| !t.kind().is_trivia() && t.kind() != SyntaxKind::NEWLINE)
        .map_or(node.text_range().end(), |t| t.text_range().end());
    TextRange::new(TextSize::from(0), end) + item.offset(db)
}

/// The item's name, or its first token when it has none.
pub(crate) fn item_focus(db: &dyn Db, item: Item<'_>) -> TextRange {
    let relative = item_name_range(db, item).unwrap_or_else(|| {
        item_syntax(db, item).first_token().map_or(TextRange::empty(TextSize::from(0)), |t| t.text_range())
    });
    relative + item.offset(db)
}

pub(crate) fn item_label(db: &dyn Db, item: Item<'_>) -> String {
    match item.owner(db) {
        Some(owner) => format!("{} ({owner})", item.name(db)),
        None => item.name(db).to_string(),
    }
}

pub(crate) fn navigation_target(db: &dyn Db, item: Item<'_>) -> NavigationTarget {
    NavigationTarget {
        path: item.file(db).path(db).clone(),
        name: item_label(db, item),
        kind: SymbolKind::of(item.kind(db)),
        full_range: item_range(db, item),
        focus_range: item_focus(db, item),
    }
}
