//! What a variable holds, where that is known without running the program.
//! The runtime keeps one flat namespace per run, so a variable's type comes
//! from every assignment to it in the program's flows and handlers: a
//! `run agent A` result is validated against the `expecting` schema of A's
//! instruction prompt (and bound to the target, else to A's `produces`), a
//! `call llm P` result against P's; `for $v in L` binds the items of `L`;
//! assignments copy the type of their value. The type is known only when
//! every assignment gives the same known type. Completion (fields after
//! `$x.`) and hover read this one inference.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::Arc;

use sr_hir::hir::{Body, Expr, ExprId, ItemData, Literal, Stmt, TypeRef};
use sr_hir::resolve::Program;
use sr_hir::{Db, ItemKind, Name, body, item_data};

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum VarType {
    String,
    Int,
    Float,
    Bool,
    Schema(Name),
    List(Box<VarType>),
    Optional(Box<VarType>),
}

impl VarType {
    fn from_ref(ty: &TypeRef) -> Option<VarType> {
        Some(match ty {
            TypeRef::String => VarType::String,
            TypeRef::Int => VarType::Int,
            TypeRef::Float => VarType::Float,
            TypeRef::Bool => VarType::Bool,
            TypeRef::Named(named) => VarType::Schema(named.name.clone()),
            TypeRef::List(inner) => VarType::List(Box::new(VarType::from_ref(inner)?)),
            TypeRef::Optional(inner) => VarType::Optional(Box::new(VarType::from_ref(inner)?)),
            TypeRef::Missing => return None,
        })
    }

    /// As written in a schema: `list[Finding]`, `int?`.
    pub(crate) fn text(&self) -> String {
        match self {
            VarType::String => "string".to_string(),
            VarType::Int => "int".to_string(),
            VarType::Float => "float".to_string(),
            VarType::Bool => "bool".to_string(),
            VarType::Schema(name) => name.to_string(),
            VarType::List(inner) => format!("list[{}]", inner.text()),
            VarType::Optional(inner) => format!("{}?", inner.text()),
        }
    }

    /// The type without its `?`: a field access on `null` fails at run
    /// time, so what it reaches is the value's fields.
    fn present(&self) -> &VarType {
        match self {
            VarType::Optional(inner) => inner.present(),
            other => other,
        }
    }
}

/// A schema's fields with their types (a field of unknown type is left out).
pub(crate) fn schema_fields(db: &dyn Db, program: &Program<'_>, schema: &Name) -> Vec<(Name, VarType)> {
    let Some(&item) = program.schemas.get(schema) else { return Vec::new() };
    let ItemData::Schema(data) = &*item_data(db, item) else { return Vec::new() };
    data.fields.iter().filter_map(|f| Some((f.name.name.clone(), VarType::from_ref(&f.ty)?))).collect()
}

/// The schema `ty` has fields of, if any.
pub(crate) fn schema_of(ty: &VarType) -> Option<&Name> {
    match ty.present() {
        VarType::Schema(name) => Some(name),
        _ => None,
    }
}

/// Where a value bound to a variable comes from.
enum Source {
    /// The type is fixed by the statement (`None`: not statically known).
    Fixed(Option<VarType>),
    /// The value of an expression.
    Value(Arc<Body>, ExprId),
    /// An item of the list an expression gives.
    Item(Arc<Body>, ExprId),
}

/// The program's variables and what they are bound to.
pub(crate) struct VarTypes<'a, 'db> {
    db: &'db dyn Db,
    program: &'a Program<'db>,
    sources: HashMap<Name, Vec<Source>>,
    /// Variables being inferred (a variable defined from itself is unknown).
    visiting: RefCell<Vec<Name>>,
    /// Variables inferred already.
    known: RefCell<HashMap<Name, Option<VarType>>>,
}

/// How many variables deep a type is followed (`$a = $b`, `$b = $c`, …);
/// deeper chains are unknown, so hostile programs cost bounded time and stack.
const MAX_DEPTH: usize = 32;

impl<'a, 'db> VarTypes<'a, 'db> {
    pub(crate) fn new(db: &'db dyn Db, program: &'a Program<'db>) -> VarTypes<'a, 'db> {
        let mut sources: HashMap<Name, Vec<Source>> = HashMap::new();
        for &item in &program.items {
            if !matches!(item.kind(db), ItemKind::Flow | ItemKind::Handler) {
                continue;
            }
            let body = body(db, item);
            body.walk_stmts(&mut |_, stmt| {
                let (name, source) = match stmt {
                    Stmt::Assign { target, value } if target.fields.is_empty() => {
                        (target.name.clone(), Source::Value(body.clone(), *value))
                    }
                    Stmt::Run(run) => {
                        let produces = || program.produces.get(&run.callee.name).cloned().filter(|_| run.agent);
                        let Some(name) = run.target.as_ref().map(|t| t.name.clone()).or_else(produces) else {
                            return;
                        };
                        let ty = if run.agent { agent_result(db, program, &run.callee.name) } else { None };
                        (name, Source::Fixed(ty))
                    }
                    Stmt::Call(call) => {
                        let Some(target) = &call.target else { return };
                        (target.name.clone(), Source::Fixed(prompt_result(db, program, &call.prompt.name)))
                    }
                    Stmt::For { var, iterable, .. } => (var.name.clone(), Source::Item(body.clone(), *iterable)),
                    // A field's assignment, and statements that give no variable a value of known type.
                    Stmt::Assign { .. }
                    | Stmt::Return(_)
                    | Stmt::Parallel { .. }
                    | Stmt::Loop { .. }
                    | Stmt::Match { .. }
                    | Stmt::If { .. }
                    | Stmt::Push { .. }
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
                    | Stmt::Missing => return,
                };
                sources.entry(name).or_default().push(source);
            });
        }
        VarTypes { db, program, sources, visiting: RefCell::default(), known: RefCell::default() }
    }

    /// The type of `$name`, when every assignment to it agrees.
    pub(crate) fn of(&self, name: &Name) -> Option<VarType> {
        let sources = self.sources.get(name)?;
        if let Some(known) = self.known.borrow().get(name) {
            return known.clone();
        }
        let visiting = self.visiting.borrow();
        if visiting.len() >= MAX_DEPTH || visiting.contains(name) {
            return None;
        }
        drop(visiting);
        self.visiting.borrow_mut().push(name.clone());
        let mut types = sources.iter().map(|source| match source {
            Source::Fixed(ty) => ty.clone(),
            Source::Value(body, expr) => self.expr(body, *expr),
            Source::Item(body, expr) => match self.expr(body, *expr)?.present() {
                VarType::List(inner) => Some((**inner).clone()),
                _ => None,
            },
        });
        let first = types.next().flatten();
        let agreed = types.try_fold(first, |acc, ty| (ty == acc).then_some(acc)).flatten();
        self.visiting.borrow_mut().pop();
        // Kept even when a cycle or the depth limit cut the inference short
        // (then unknown): each variable is inferred once per request.
        self.known.borrow_mut().insert(name.clone(), agreed.clone());
        agreed
    }

    /// The type of `$name.f1.f2…`.
    pub(crate) fn path(&self, name: &Name, fields: &[&str]) -> Option<VarType> {
        fields.iter().try_fold(self.of(name)?, |ty, field| self.field(&ty, field))
    }

    fn field(&self, ty: &VarType, field: &str) -> Option<VarType> {
        let schema = schema_of(ty)?;
        schema_fields(self.db, self.program, schema)
            .into_iter()
            .find(|(name, _)| name.as_str() == field)
            .map(|(_, t)| t)
    }

    fn expr(&self, body: &Body, expr: ExprId) -> Option<VarType> {
        match &body.exprs[expr] {
            Expr::Literal(Literal::String(_)) | Expr::Template(_) | Expr::InitialPrompt => Some(VarType::String),
            Expr::Literal(Literal::Int(_)) => Some(VarType::Int),
            Expr::Literal(Literal::Float(_)) => Some(VarType::Float),
            Expr::Literal(Literal::Bool(_)) => Some(VarType::Bool),
            Expr::Var { name, .. } => self.of(name),
            Expr::Field { base, field } => self.field(&self.expr(body, *base)?, field),
            // `filter L where C` keeps some items of L.
            Expr::Filter { list, .. } => self.expr(body, *list).filter(|t| matches!(t.present(), VarType::List(_))),
            _ => None,
        }
    }
}

/// What `expecting S` (or `S[]`) of prompt `prompt` makes of a reply.
fn prompt_result(db: &dyn Db, program: &Program<'_>, prompt: &Name) -> Option<VarType> {
    let expecting = program.prompts.get(prompt)?.data(db).expecting?;
    let schema = VarType::Schema(expecting.schema.name);
    Some(if expecting.array { VarType::List(Box::new(schema)) } else { schema })
}

/// An agent's result: what its instruction prompt expects.
fn agent_result(db: &dyn Db, program: &Program<'_>, agent: &Name) -> Option<VarType> {
    let &item = program.agents.get(agent)?;
    let ItemData::Agent(data) = &*item_data(db, item) else { return None };
    prompt_result(db, program, &data.instruction.as_ref()?.name)
}

#[cfg(test)]
mod tests {
    use std::fmt::Write;
    use std::path::Path;

    use sr_hir::{Name, RootDatabase, program};

    use super::VarTypes;

    const DEFS: &str = "schema R:\n    n: int\nprompt p expecting R: \"\"\"x\"\"\"\nagent a:\n    instruction p\n";

    /// The type of each variable named in `names`, in a fresh inference each.
    fn types(flow: &str, names: &[&str]) -> Vec<String> {
        let mut db = RootDatabase::default();
        db.set_file(Path::new("/main.sr"), format!("{DEFS}flow main:\n{flow}"));
        let file = db.file(Path::new("/main.sr")).unwrap();
        let program = program(&db, file);
        names
            .iter()
            .map(|n| VarTypes::new(&db, program).of(&Name::from(*n)).map_or("unknown".to_string(), |t| t.text()))
            .collect()
    }

    #[test]
    fn chains_of_copies_are_followed_to_a_depth() {
        let mut flow = "    $x0 = run agent a\n".to_string();
        for i in 1..40 {
            let _ = writeln!(flow, "    $x{i} = $x{}", i - 1);
        }
        assert_eq!(types(&flow, &["x0", "x31", "x32", "x39"]), ["R", "R", "unknown", "unknown"]);
    }

    #[test]
    fn each_variable_is_inferred_once() {
        // Every variable has two sources naming the previous one: without
        // memoization this is about 2^30 steps.
        let mut flow = "    $x0 = run agent a\n".to_string();
        for i in 1..30 {
            let _ = writeln!(flow, "    $x{i} = $x{}\n    $x{i} = $x{}.n", i - 1, i - 1);
        }
        let _ = writeln!(flow, "    $y1 = $x0.n\n    $y2 = $y1\n    $y2 = 3");
        assert_eq!(types(&flow, &["x29", "x1", "y2"]), ["unknown", "unknown", "int"]);
    }
}
