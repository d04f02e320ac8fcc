//! Checks of a flow or handler body.
//!
//! Two walks, because upstream's checker and its runtime disagree:
//! - `Upstream` reproduces the checker: block scopes (`if`, `for`, `loop`
//!   bodies), only some statements and expressions looked at, `on start`
//!   variables visible to later items only. Its E0002s are `UpstreamOnly`.
//! - `Flat` follows the runtime: one namespace per run shared by every flow
//!   (so callers' and callees' assignments count), textual order, every
//!   statement. Its E0002s (positions upstream checks) are `DefaultOnly`; other
//!   positions give SR101. It also checks schema fields in `$x.f` and in each
//!   string's `${x.f}` (SR104, `fields`), unreachable statements (SR103) and
//!   guardrail names (SR109).
//!
//! References (E0001) and `on escalate continue` (E0012) are reported once, by
//! the upstream walk where upstream looks and by the flat walk elsewhere.

use std::sync::Arc;

use foldhash::{HashMap, HashMapExt, HashSet, HashSetExt};
use sr_syntax::Reported;

use super::fields::{self, Ty};
use super::suggest::program_names;
use super::vars::{ProgramVars, program_vars};
use super::{
    Anchor, BUILTIN_VARIABLES, ENFORCED_GUARDRAILS, KNOWN_GUARDRAILS, NOT_ENFORCED_GUARDRAIL, SemanticDiagnostic,
    UpstreamAt,
};
use crate::diagnostic_kinds::{self as kinds, Suggestion};
use crate::hir::*;
use crate::items::{Item, ItemKind};
use crate::resolve::Program;
use crate::{Db, Name, body, item_data, program};

pub(super) fn check<'db>(db: &'db dyn Db, root: crate::File, item: Item<'db>) -> Vec<SemanticDiagnostic<'db>> {
    walked(db, root, item).diagnostics.clone()
}

/// The variables a flow or handler gives a value, with their types.
pub(super) fn bindings<'db>(db: &'db dyn Db, root: crate::File, item: Item<'db>) -> &'db [(Name, Option<Ty>)] {
    &walked(db, root, item).bindings
}

/// The schema each variable holds wherever the program's flows and handlers
/// assign it (a variable one assignment gives another or an unknown type is
/// left out).
#[salsa::tracked(returns(ref))]
pub(super) fn var_types(db: &dyn Db, root: crate::File) -> HashMap<Name, Ty> {
    let program = program(db, root);
    let mut known: HashMap<Name, Option<Ty>> = HashMap::new();
    for &item in program.flows.values().chain(&program.handlers) {
        for (name, ty) in bindings(db, root, item) {
            known
                .entry(name.clone())
                .and_modify(|seen| {
                    if seen != ty {
                        *seen = None
                    }
                })
                .or_insert_with(|| ty.clone());
        }
    }
    known.into_iter().filter_map(|(name, ty)| Some((name, ty?))).collect()
}

#[derive(Debug, PartialEq, Eq, Hash, salsa::SalsaValue)]
struct Walked<'db> {
    diagnostics: Vec<SemanticDiagnostic<'db>>,
    bindings: Vec<(Name, Option<Ty>)>,
}

#[salsa::tracked(returns(ref))]
fn walked<'db>(db: &'db dyn Db, root: crate::File, item: Item<'db>) -> Walked<'db> {
    let body = body(db, item);
    let program = program(db, root);
    let vars = program_vars(db, root);
    let cx = Cx { db, root, item, body: &body, program };
    let mut out = Vec::new();
    // Upstream checks flows and top-level handlers, not agents' handlers.
    let upstream_looks = item.owner(db).is_none();
    if upstream_looks {
        let mut walk =
            Upstream { cx: &cx, globals: upstream_globals(&cx), frames: vec![HashSet::new()], loop_depth: 0 };
        walk.stmts(&body.root, &mut out);
    }
    let mut defined = Names::over(definition_names(db, root));
    defined.add(&vars.on_start_vars);
    match item.kind(db) {
        ItemKind::Flow => {
            for closure in vars.caller_vars.get(item.name(db)).into_iter().flatten() {
                defined.add(closure);
            }
        }
        _ => defined.add(&vars.all_vars),
    }
    let mut flat = Flat {
        cx: &cx,
        vars: &vars,
        defined,
        types: HashMap::new(),
        bindings: Vec::new(),
        loop_depth: 0,
        breakable: false,
    };
    flat.block(&body.root, upstream_looks, &mut out);
    let bindings = flat.bindings;
    out.extend(super::functions::check(item, &body));
    out.extend(super::tool_calls::check(db, item, &body, program));
    Walked { diagnostics: out, bindings }
}

struct Cx<'a, 'db> {
    db: &'db dyn Db,
    /// The program the item is checked as part of.
    root: crate::File,
    item: Item<'db>,
    body: &'a Body,
    program: &'a Program<'db>,
}

impl<'db> Cx<'_, 'db> {
    fn produces(&self, agent: &Name) -> Option<Name> {
        self.program.produces.get(agent).cloned()
    }

    /// E0001 for `run agent X`, `run F` and `call llm P`.
    fn reference(&self, stmt: StmtId, reported: Reported, out: &mut Vec<SemanticDiagnostic<'db>>) {
        let Some((how, target)) = self.body.stmts[stmt].invokes() else { return };
        let kind = how.item_kind();
        let known = match kind {
            ItemKind::Prompt => self.program.prompts.contains_key(&target.name),
            _ => self.program.defs(kind).is_some_and(|defs| defs.contains_key(&target.name)),
        };
        if known {
            if kind == ItemKind::Flow
                && self.item.kind(self.db) == ItemKind::Flow
                && target.name == *self.item.name(self.db)
            {
                out.push(SemanticDiagnostic::new(
                    kinds::RecursiveFlow { flow: target.name.to_string() },
                    Anchor::Part(self.item, target.part),
                ));
            }
            return;
        }
        let suggestion = program_names(self.db, self.root).of(kind).suggest(&target.name);
        out.push(SemanticDiagnostic {
            reported,
            upstream_at: UpstreamAt::Other(Anchor::Stmt(self.item, stmt)),
            ..SemanticDiagnostic::new(
                kinds::UndefinedReference { kind, name: target.name.to_string(), suggestion },
                Anchor::Part(self.item, target.part),
            )
        });
    }

    fn continue_outside_loop(&self, stmt: StmtId, reported: Reported, out: &mut Vec<SemanticDiagnostic<'db>>) {
        out.push(SemanticDiagnostic {
            reported,
            ..SemanticDiagnostic::new(kinds::ContinueOutsideLoop, Anchor::Stmt(self.item, stmt))
        });
    }

    /// E0002 where upstream checks variables (`upstream_checks`), SR101 elsewhere.
    fn undefined(&self, name: &Name, anchor: Anchor<'db>, upstream_checks: bool) -> SemanticDiagnostic<'db> {
        let name = name.to_string();
        let (kind, reported): (kinds::DiagnosticKind, _) = match upstream_checks {
            true => (kinds::UsedBeforeDefinition { name }.into(), Reported::DefaultOnly),
            false => (kinds::UndefinedVariable { name }.into(), Reported::Always),
        };
        SemanticDiagnostic { reported, ..SemanticDiagnostic::new(kind, anchor) }
    }
}

/// Names of definitions: upstream's global scope holds them beside variables.
#[salsa::tracked(returns(clone))]
fn definition_names(db: &dyn Db, root: crate::File) -> Arc<HashSet<Name>> {
    let program = program(db, root);
    let mut names: HashSet<Name> = BUILTIN_VARIABLES.iter().map(|b| Name::from(*b)).collect();
    for defs in [
        &program.models,
        &program.schemas,
        &program.tools,
        &program.agents,
        &program.flows,
        &program.retry_policies,
        &program.timeout_policies,
    ] {
        names.extend(defs.keys().cloned());
    }
    names.extend(program.prompts.keys().cloned());
    Arc::new(names)
}

/// Upstream's global scope for `cx.item`: definitions, builtins, and what the
/// `on start` handlers before it assign at their top level.
fn upstream_globals(cx: &Cx<'_, '_>) -> Names {
    let mut globals = Names::over(definition_names(cx.db, cx.root));
    let handlers = on_start_globals(cx.db, cx.root);
    if handlers.is_empty() {
        return globals;
    }
    let position = item_positions(cx.db, cx.root).get(&cx.item).copied().unwrap_or(usize::MAX);
    for (index, names) in handlers {
        if *index < position {
            globals.extend(names.iter().cloned());
        }
    }
    globals
}

/// Each item's position in its program's items (one lookup per body instead
/// of a scan).
#[salsa::tracked(returns(ref))]
fn item_positions<'db>(db: &'db dyn Db, root: crate::File) -> std::collections::HashMap<Item<'db>, usize> {
    program(db, root).items.iter().enumerate().map(|(index, &item)| (item, index)).collect()
}

/// For each top-level `on start` handler (by position in the program's items),
/// the variables it assigns at its top level, which upstream makes global.
#[salsa::tracked(returns(ref))]
fn on_start_globals(db: &dyn Db, root: crate::File) -> Vec<(usize, Vec<Name>)> {
    let program = program(db, root);
    let mut out = Vec::new();
    for (index, &item) in program.items.iter().enumerate() {
        if item.kind(db) != ItemKind::Handler || item.owner(db).is_some() {
            continue;
        }
        let ItemData::Handler(handler) = &*item_data(db, item) else { continue };
        if handler.timing == Timing::On && handler.event == Event::Start {
            let body = body(db, item);
            let mut names = Vec::new();
            top_scope_definitions(program, &body, &body.root, &mut names);
            out.push((index, names));
        }
    }
    out
}

fn top_scope_definitions(program: &Program<'_>, body: &Body, stmts: &[StmtId], out: &mut Vec<Name>) {
    for &id in stmts {
        let stmt = &body.stmts[id];
        // `parallel do`'s scope is the top one; loops' and conditions' bodies are not.
        if let Stmt::Parallel { body: inner } = stmt {
            top_scope_definitions(program, body, inner, out);
        }
        match stmt.binds() {
            Some(Binding::Assign(target)) => out.push(target.name.clone()),
            // Not `for` variables, nor `$human_input` (a builtin).
            Some(Binding::Loop(_) | Binding::HumanInput) => {}
            // An agent run without a target still defines what the agent produces.
            None => {
                if let Stmt::Run(run) = stmt
                    && run.agent
                {
                    out.extend(program.produces.get(&run.callee.name).cloned());
                }
            }
        }
    }
}

/// A body's names: sets shared with the rest of the program (its definition
/// names, the variables of the flows that run it: a `main` that runs 12k flows
/// has one closure those flows all share, never copied) and what the body
/// adds itself.
struct Names {
    shared: Vec<Arc<HashSet<Name>>>,
    own: HashSet<Name>,
}

impl Names {
    /// A set this small is copied into the body's own names rather than kept
    /// as one more set every lookup has to ask.
    const COPIED: usize = 64;

    fn over(shared: Arc<HashSet<Name>>) -> Names {
        Names { shared: vec![shared], own: HashSet::new() }
    }

    fn contains(&self, name: &str) -> bool {
        self.own.contains(name) || self.shared.iter().any(|set| set.contains(name))
    }

    /// Whether `name` was not there before.
    fn insert(&mut self, name: Name) -> bool {
        !self.shared.iter().any(|set| set.contains(&name)) && self.own.insert(name)
    }

    /// Takes out a name [`Names::insert`] put in.
    fn remove(&mut self, name: &Name) {
        self.own.remove(name);
    }

    /// Makes every name of `set` known.
    fn add(&mut self, set: &Arc<HashSet<Name>>) {
        if set.len() <= Self::COPIED {
            for name in set.iter() {
                self.insert(name.clone());
            }
        } else if !self.shared.iter().any(|known| Arc::ptr_eq(known, set)) {
            self.shared.push(Arc::clone(set));
        }
    }

    fn extend(&mut self, names: impl IntoIterator<Item = Name>) {
        for name in names {
            self.insert(name);
        }
    }
}

struct Upstream<'a, 'b, 'db> {
    cx: &'a Cx<'b, 'db>,
    globals: Names,
    frames: Vec<HashSet<Name>>,
    loop_depth: u32,
}

impl<'db> Upstream<'_, '_, 'db> {
    fn lookup(&self, name: &str) -> bool {
        self.globals.contains(name) || self.frames.iter().any(|f| f.contains(name))
    }

    fn define(&mut self, name: &Name) {
        if let Some(frame) = self.frames.last_mut() {
            frame.insert(name.clone());
        }
    }

    fn stmts(&mut self, ids: &[StmtId], out: &mut Vec<SemanticDiagnostic<'db>>) {
        for &id in ids {
            self.stmt(id, out);
        }
    }

    fn block(&mut self, ids: &[StmtId], var: Option<&Name>, is_loop: bool, out: &mut Vec<SemanticDiagnostic<'db>>) {
        self.frames.push(var.into_iter().cloned().collect());
        self.loop_depth += u32::from(is_loop);
        self.stmts(ids, out);
        self.loop_depth -= u32::from(is_loop);
        self.frames.pop();
    }

    fn stmt(&mut self, id: StmtId, out: &mut Vec<SemanticDiagnostic<'db>>) {
        let cx = self.cx;
        match &cx.body.stmts[id] {
            Stmt::Assign { target, value } if target.fields.is_empty() => {
                self.expr(*value, out);
                self.define(&target.name);
            }
            Stmt::Run(run) => {
                cx.reference(id, Reported::Always, out);
                if let Some(input) = run.input {
                    self.expr(input, out);
                }
                match &run.target {
                    Some(target) => self.define(&target.name),
                    None if run.agent => {
                        if let Some(produces) = cx.produces(&run.callee.name) {
                            self.define(&produces);
                        }
                    }
                    None => {}
                }
                if matches!(run.on_escalate, Some(OnEscalate::Continue)) && self.loop_depth == 0 {
                    cx.continue_outside_loop(id, Reported::Always, out);
                }
            }
            Stmt::Call(call) => {
                cx.reference(id, Reported::Always, out);
                if let Some(model) = &call.model {
                    // Upstream's transformer stores the keyword `using` as the model.
                    out.push(SemanticDiagnostic {
                        reported: Reported::UpstreamOnly,
                        upstream_at: UpstreamAt::Other(Anchor::Stmt(cx.item, id)),
                        ..SemanticDiagnostic::new(
                            kinds::UndefinedReference {
                                kind: ItemKind::Model,
                                name: "using".to_string(),
                                suggestion: Suggestion::None,
                            },
                            Anchor::Part(cx.item, model.part),
                        )
                    });
                }
                if let Some(input) = call.input {
                    self.expr(input, out);
                }
                if let Some(target) = &call.target {
                    self.define(&target.name);
                }
            }
            Stmt::Return(value) => self.expr(*value, out),
            Stmt::Push { value, target, .. } => {
                self.expr(*value, out);
                let name = std::iter::once(target.name.as_str())
                    .chain(target.fields.iter().map(|f| f.as_str()))
                    .collect::<Vec<_>>()
                    .join(".");
                if !self.lookup(&name) {
                    out.push(SemanticDiagnostic {
                        reported: Reported::UpstreamOnly,
                        upstream_at: UpstreamAt::Other(Anchor::Stmt(cx.item, id)),
                        ..SemanticDiagnostic::new(
                            kinds::UsedBeforeDefinition { name },
                            Anchor::Part(cx.item, target.part),
                        )
                    });
                }
            }
            Stmt::For { var, iterable, body } => {
                self.expr(*iterable, out);
                self.block(body, Some(&var.name), true, out);
            }
            Stmt::If { condition, body, .. } => {
                self.expr(*condition, out);
                self.block(body, None, false, out);
            }
            Stmt::Match { scrutinee, .. } => self.expr(*scrutinee, out),
            Stmt::Parallel { body } => self.stmts(body, out),
            Stmt::Loop { body, .. } => self.block(body, None, true, out),
            // Upstream's checker looks at nothing else: not at a field's
            // assignment, nor inside `on failure:`, nor at guardrail actions.
            Stmt::Assign { .. }
            | Stmt::Escalate { .. }
            | Stmt::Log(_)
            | Stmt::Notify(_)
            | Stmt::Expr(_)
            | Stmt::OnFailure { .. }
            | Stmt::Continue
            | Stmt::Break
            | Stmt::Abort
            | Stmt::RetryStep(_)
            | Stmt::Mask { .. }
            | Stmt::Block { .. }
            | Stmt::Warn { .. }
            | Stmt::RetryWith { .. }
            | Stmt::Missing => {}
        }
    }

    fn expr(&mut self, id: ExprId, out: &mut Vec<SemanticDiagnostic<'db>>) {
        let cx = self.cx;
        match &cx.body.exprs[id] {
            Expr::Var { name, origin } => {
                let upstream_at = match origin {
                    VarOrigin::Dollar | VarOrigin::Bare => UpstreamAt::Anchor,
                    // The base of `$a.b` carries no position upstream.
                    VarOrigin::DollarDotted => UpstreamAt::FileStart,
                    // The base of `a.b` is a name, not a variable, upstream.
                    VarOrigin::BareDotted => return,
                };
                if !self.lookup(name) {
                    out.push(SemanticDiagnostic {
                        reported: Reported::UpstreamOnly,
                        upstream_at,
                        ..SemanticDiagnostic::new(
                            kinds::UsedBeforeDefinition { name: name.to_string() },
                            Anchor::Expr(cx.item, id),
                        )
                    });
                }
            }
            Expr::Field { base, .. } => self.expr(*base, out),
            Expr::Unary { operand, .. } => self.expr(*operand, out),
            Expr::Binary { lhs, rhs, .. } => {
                self.expr(*lhs, out);
                self.expr(*rhs, out);
            }
            Expr::Call { args, .. } | Expr::List(args) => args.iter().for_each(|&a| self.expr(a, out)),
            Expr::Object(entries) => entries.iter().for_each(|(_, v)| self.expr(*v, out)),
            // Upstream's checker does not look into these.
            Expr::Missing
            | Expr::Literal(_)
            | Expr::Template(_)
            | Expr::ItemField(_)
            | Expr::Filter { .. }
            | Expr::MethodCall { .. }
            | Expr::InitialPrompt => {}
        }
    }
}

struct Flat<'a, 'b, 'db> {
    cx: &'a Cx<'b, 'db>,
    vars: &'a ProgramVars,
    defined: Names,
    types: HashMap<Name, Ty>,
    /// Every variable given a value, with its type: the program's variable
    /// types ([`var_types`]) are read from these.
    bindings: Vec<(Name, Option<Ty>)>,
    loop_depth: u32,
    /// Whether a `break` here ends a loop of this body.
    breakable: bool,
}

impl<'db> Flat<'_, '_, 'db> {
    /// `visible`: whether upstream's checker looks at these statements.
    fn block(&mut self, ids: &[StmtId], visible: bool, out: &mut Vec<SemanticDiagnostic<'db>>) {
        let mut ended_by: Option<&str> = None;
        for &id in ids {
            let stmt = &self.cx.body.stmts[id];
            if let Some(keyword) = ended_by.take()
                && !matches!(stmt, Stmt::OnFailure { .. })
            {
                out.push(SemanticDiagnostic::new(
                    kinds::Unreachable { after: keyword },
                    Anchor::Stmt(self.cx.item, id),
                ));
            }
            self.stmt(id, visible, out);
            if ended_by.is_none() {
                ended_by = stmt.ends_block();
            }
        }
    }

    fn loop_body(&mut self, body: &[StmtId], visible: bool, out: &mut Vec<SemanticDiagnostic<'db>>) {
        self.loop_depth += 1;
        let breakable = std::mem::replace(&mut self.breakable, true);
        self.block(body, visible, out);
        self.breakable = breakable;
        self.loop_depth -= 1;
    }

    fn stmt(&mut self, id: StmtId, visible: bool, out: &mut Vec<SemanticDiagnostic<'db>>) {
        let cx = self.cx;
        let hidden = if visible { None } else { Some(Reported::DefaultOnly) };
        match &cx.body.stmts[id] {
            Stmt::Assign { target, value } => {
                if target.fields.is_empty() {
                    self.expr(*value, visible, out);
                    let ty = self.type_of(*value);
                    self.define(&target.name, ty);
                } else {
                    self.expr(*value, false, out);
                    self.place(target, out);
                }
            }
            Stmt::Run(run) => {
                if let Some(reported) = hidden {
                    cx.reference(id, reported, out);
                }
                if let Some(input) = run.input {
                    self.expr(input, visible, out);
                }
                if let Some(history) = &run.history {
                    self.place(history, out);
                }
                if let Some(OnEscalate::Return(value)) = &run.on_escalate {
                    self.expr(*value, false, out);
                }
                let ty = if run.agent { self.agent_output(&run.callee.name) } else { None };
                match &run.target {
                    Some(target) => self.define(&target.name, ty),
                    None if run.agent => {
                        if let Some(produces) = cx.produces(&run.callee.name) {
                            self.define(&produces, ty);
                        }
                    }
                    None => {}
                }
                if !run.agent
                    && let Some(closure) = self.vars.flow_closure.get(&run.callee.name)
                {
                    self.defined.add(closure);
                }
                if matches!(run.on_escalate, Some(OnEscalate::Continue))
                    && self.loop_depth == 0
                    && let Some(reported) = hidden
                {
                    cx.continue_outside_loop(id, reported, out);
                }
            }
            Stmt::Call(call) => {
                if let Some(reported) = hidden {
                    cx.reference(id, reported, out);
                }
                if let Some(model) = &call.model
                    && !cx.program.models.contains_key(&model.name)
                {
                    let names = program_names(cx.db, cx.root);
                    let suggestion = names.of(ItemKind::Model).suggest(&model.name);
                    out.push(SemanticDiagnostic {
                        reported: Reported::DefaultOnly,
                        ..SemanticDiagnostic::new(
                            kinds::UndefinedReference {
                                kind: ItemKind::Model,
                                name: model.name.to_string(),
                                suggestion,
                            },
                            Anchor::Part(cx.item, model.part),
                        )
                    });
                }
                if let Some(input) = call.input {
                    self.expr(input, visible, out);
                }
                if let Some(target) = &call.target {
                    let ty = self.prompt_output(&call.prompt.name);
                    self.define(&target.name, ty);
                }
            }
            Stmt::Return(value) => self.expr(*value, visible, out),
            Stmt::Push { value, target, .. } => {
                self.expr(*value, visible, out);
                if !self.defined.contains(&target.name) {
                    out.push(cx.undefined(&target.name, Anchor::Part(cx.item, target.part), visible));
                }
            }
            Stmt::For { var, iterable, body } => {
                self.expr(*iterable, visible, out);
                let item_ty = match self.type_of(*iterable) {
                    Some(Ty::List(inner)) => Some(*inner),
                    _ => None,
                };
                self.define(&var.name, item_ty);
                self.loop_body(body, visible, out);
            }
            Stmt::If { condition, body, .. } => {
                self.expr(*condition, visible, out);
                self.block(body, visible, out);
            }
            Stmt::Match { scrutinee, arms, otherwise } => {
                self.expr(*scrutinee, visible, out);
                for &arm in arms.iter().map(|(_, s)| s).chain(otherwise) {
                    self.stmt(arm, false, out);
                }
            }
            Stmt::Parallel { body } => {
                // A branch cannot end the loop around the `parallel`.
                let breakable = std::mem::replace(&mut self.breakable, false);
                self.block(body, visible, out);
                self.breakable = breakable;
            }
            Stmt::Loop { body, .. } => self.loop_body(body, visible, out),
            Stmt::Break => {
                out.push(super::functions::break_not_upstream(cx.item, id));
                if !self.breakable {
                    out.push(SemanticDiagnostic {
                        reported: Reported::DefaultOnly,
                        ..SemanticDiagnostic::new(kinds::BreakOutsideLoop, Anchor::Stmt(cx.item, id))
                    });
                }
            }
            Stmt::OnFailure { body } => {
                // The runtime sets `$error` to the failure's message for the
                // block; after it, `$error` is set only if a failure happened.
                let error = Name::new_static("error");
                let newly = self.defined.insert(error.clone());
                self.block(body, false, out);
                if newly {
                    self.defined.remove(&error);
                }
            }
            Stmt::Escalate { .. } => self.define(&Name::new_static(crate::summary::HUMAN_INPUT), None),
            Stmt::Log(e) | Stmt::Notify(e) | Stmt::Expr(e) | Stmt::RetryStep(e) => self.expr(*e, false, out),
            Stmt::RetryWith { message, condition } => {
                self.expr(*message, false, out);
                self.expr(*condition, false, out);
            }
            Stmt::Mask { guardrail } => self.guardrail(&guardrail.name, Anchor::Part(cx.item, guardrail.part), out),
            Stmt::Block { condition } | Stmt::Warn { condition: Some(condition), .. } => {
                match &cx.body.exprs[*condition] {
                    // `block if jailbreak` names a guardrail.
                    Expr::Var { name, origin: VarOrigin::Bare } => {
                        self.guardrail(name, Anchor::Expr(cx.item, *condition), out)
                    }
                    _ => self.expr(*condition, false, out),
                }
            }
            Stmt::Warn { condition: None, .. } | Stmt::Continue | Stmt::Abort | Stmt::Missing => {}
        }
    }

    fn define(&mut self, name: &Name, ty: Option<Ty>) {
        self.defined.insert(name.clone());
        self.bindings.push((name.clone(), ty.clone()));
        match ty {
            Some(ty) => self.types.insert(name.clone(), ty),
            None => self.types.remove(name),
        };
    }

    /// The variable a property assignment or `history` writes to must exist.
    fn place(&mut self, place: &Place, out: &mut Vec<SemanticDiagnostic<'db>>) {
        if !self.defined.contains(&place.name) {
            out.push(self.cx.undefined(&place.name, Anchor::Part(self.cx.item, place.part), false));
        }
    }

    fn guardrail(&self, name: &Name, anchor: Anchor<'db>, out: &mut Vec<SemanticDiagnostic<'db>>) {
        if name.as_str() == NOT_ENFORCED_GUARDRAIL {
            let kind = kinds::GuardrailNotEnforced { name: name.to_string(), enforced: &ENFORCED_GUARDRAILS };
            out.push(SemanticDiagnostic::new(kind, anchor));
        } else if !KNOWN_GUARDRAILS.contains(&name.as_str()) {
            let kind = kinds::UnknownGuardrail { name: name.to_string(), known: &KNOWN_GUARDRAILS };
            out.push(SemanticDiagnostic::new(kind, anchor));
        }
    }

    /// `primary`: a position where upstream checks variables (E0002 there,
    /// SR101 elsewhere).
    fn expr(&mut self, id: ExprId, primary: bool, out: &mut Vec<SemanticDiagnostic<'db>>) {
        let cx = self.cx;
        match &cx.body.exprs[id] {
            Expr::Var { name, origin } => {
                if self.defined.contains(name) {
                    return;
                }
                let upstream_checks = primary && *origin != VarOrigin::BareDotted;
                out.push(cx.undefined(name, Anchor::Expr(cx.item, id), upstream_checks));
            }
            Expr::Template(template) => {
                for interpolation in template.interpolations() {
                    let Some(var) = interpolation.path.first() else { continue };
                    if !var.is_empty() && !self.defined.contains(var) {
                        out.push(cx.undefined(var, Anchor::Part(cx.item, interpolation.part), false));
                    } else if let Some(ty) = self.types.get(var) {
                        out.extend(fields::interpolation(cx.db, cx.program, cx.item, ty.clone(), interpolation));
                    }
                }
            }
            Expr::Field { base, field } => {
                self.expr(*base, primary, out);
                if let Some(ty) = self.type_of(*base)
                    && let Err(unknown) = fields::field(cx.db, cx.program, &ty, field, Anchor::Expr(cx.item, id))
                {
                    out.push(*unknown);
                }
            }
            Expr::Unary { operand, .. } => self.expr(*operand, primary, out),
            Expr::Binary { lhs, rhs, .. } => {
                self.expr(*lhs, primary, out);
                self.expr(*rhs, primary, out);
            }
            Expr::Call { args, .. } | Expr::List(args) => args.iter().for_each(|&a| self.expr(a, primary, out)),
            Expr::Object(entries) => entries.iter().for_each(|(_, v)| self.expr(*v, primary, out)),
            Expr::Filter { list, condition } => {
                self.expr(*list, false, out);
                self.expr(*condition, false, out);
            }
            Expr::MethodCall { receiver, args, .. } => {
                self.expr(*receiver, false, out);
                args.iter().for_each(|&a| self.expr(a, false, out));
            }
            Expr::Missing | Expr::Literal(_) | Expr::ItemField(_) | Expr::InitialPrompt => {}
        }
    }

    fn type_of(&self, id: ExprId) -> Option<Ty> {
        match &self.cx.body.exprs[id] {
            Expr::Var { name, .. } => self.types.get(name).cloned(),
            Expr::Field { base, field } => match self.type_of(*base)? {
                Ty::Schema(schema) => {
                    Ty::of(fields::fields_of(self.cx.db, self.cx.program, &schema)?.types.get(field)?)
                }
                Ty::List(_) => None,
            },
            _ => None,
        }
    }

    /// The schema a prompt's reply is validated against.
    fn prompt_output(&self, prompt: &Name) -> Option<Ty> {
        let expecting = self.cx.program.prompts.get(prompt)?.data(self.cx.db).expecting?;
        let ty = Ty::Schema(expecting.schema.name);
        Some(if expecting.array { Ty::List(Box::new(ty)) } else { ty })
    }

    /// An agent's result is validated against its instruction prompt's schema.
    fn agent_output(&self, agent: &Name) -> Option<Ty> {
        let &item = self.cx.program.agents.get(agent)?;
        match &*item_data(self.cx.db, item) {
            ItemData::Agent(data) => self.prompt_output(&data.instruction.as_ref()?.name),
            _ => None,
        }
    }
}
