//! What each kind of statement, and of tool definition, holds and does, one
//! exhaustive `match` per fact: a new kind does not compile until every fact
//! says what it is for that kind, and every walker and check built on the
//! facts sees it.

use super::{ExprId, Named, OnEscalate, Place, Stmt, StmtId, ToolData};

/// A variable a statement gives a value as a whole.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Binding<'a> {
    /// `$x = …`, `$x = run …`, `$x = call llm …`.
    Assign(&'a Place),
    /// `for $x in …`.
    Loop(&'a Place),
    /// `escalate to human` gives `$human_input` the answer.
    HumanInput,
}

/// How a statement invokes an item by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Invocation {
    /// `run agent X`
    RunAgent,
    /// `run F`
    RunFlow,
    /// `call llm P`
    CallLlm,
}

impl Invocation {
    /// The kind of item the invocation names.
    pub fn item_kind(self) -> crate::ItemKind {
        match self {
            Invocation::RunAgent => crate::ItemKind::Agent,
            Invocation::RunFlow => crate::ItemKind::Flow,
            Invocation::CallLlm => crate::ItemKind::Prompt,
        }
    }
}

/// How a statement uses a variable place it names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlaceUse {
    /// The statement gives it a value: `$x = …`, `$x = run …`, `for $x in …`.
    Bind,
    /// The statement changes what it holds: `push … to $x`, `run agent a history $h`.
    Update,
}

/// A guardrail action of a handler (`mask`, `block`, `warn`, `retry with`):
/// it acts on the message the handler guards.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GuardrailAction<'a> {
    Mask(&'a Named),
    Block { condition: ExprId },
    Warn { condition: Option<ExprId>, message: Option<&'a str> },
    RetryWith { message: ExprId, condition: ExprId },
}

impl Stmt {
    /// The statements nested in this one, in order: its blocks' statements
    /// and its `match` arms.
    ///
    /// Every statement kind is listed (here and in each fact below: what it
    /// evaluates, binds, names and invokes, whether it ends its block, whether
    /// it is a guardrail action): a new kind does not compile until each says
    /// what it holds, and the walkers and checks built on them see it.
    pub fn children(&self) -> Vec<StmtId> {
        match self {
            Stmt::For { body, .. }
            | Stmt::Parallel { body }
            | Stmt::Loop { body, .. }
            | Stmt::If { body, .. }
            | Stmt::OnFailure { body } => body.clone(),
            Stmt::Match { arms, otherwise, .. } => arms.iter().map(|(_, s)| *s).chain(*otherwise).collect(),
            Stmt::Assign { .. }
            | Stmt::Run(_)
            | Stmt::Call(_)
            | Stmt::Return(_)
            | Stmt::Push { .. }
            | Stmt::Escalate { .. }
            | Stmt::Log(_)
            | Stmt::Notify(_)
            | Stmt::Expr(_)
            | Stmt::Continue
            | Stmt::Break
            | Stmt::Abort
            | Stmt::RetryStep(_)
            | Stmt::Mask { .. }
            | Stmt::Block { .. }
            | Stmt::Warn { .. }
            | Stmt::RetryWith { .. }
            | Stmt::Missing => Vec::new(),
        }
    }

    /// The expressions the statement evaluates itself (not those of nested
    /// statements), in evaluation order.
    pub fn exprs(&self) -> Vec<ExprId> {
        match self {
            Stmt::Assign { value, .. } => vec![*value],
            Stmt::Run(run) => run
                .input
                .into_iter()
                .chain(match &run.on_escalate {
                    Some(OnEscalate::Return(e)) => Some(*e),
                    Some(OnEscalate::Continue | OnEscalate::Abort) | None => None,
                })
                .collect(),
            Stmt::Call(call) => call.input.into_iter().collect(),
            Stmt::Return(e) | Stmt::Log(e) | Stmt::Notify(e) | Stmt::Expr(e) | Stmt::RetryStep(e) => vec![*e],
            Stmt::For { iterable, .. } => vec![*iterable],
            Stmt::Match { scrutinee, .. } => vec![*scrutinee],
            Stmt::If { condition, .. } | Stmt::Block { condition } => vec![*condition],
            Stmt::Push { value, .. } => vec![*value],
            Stmt::Warn { condition, .. } => condition.iter().copied().collect(),
            Stmt::RetryWith { message, condition } => vec![*message, *condition],
            Stmt::Parallel { .. }
            | Stmt::Loop { .. }
            | Stmt::Escalate { .. }
            | Stmt::OnFailure { .. }
            | Stmt::Continue
            | Stmt::Break
            | Stmt::Abort
            | Stmt::Mask { .. }
            | Stmt::Missing => Vec::new(),
        }
    }

    /// The variable the statement gives a value as a whole, if it does.
    /// (`$x.f = …` changes a field of `$x`; `push … to $x` changes its items.)
    pub fn binds(&self) -> Option<Binding<'_>> {
        match self {
            Stmt::Assign { target, .. } if target.fields.is_empty() => Some(Binding::Assign(target)),
            Stmt::Assign { .. } => None,
            Stmt::Run(run) => run.target.as_ref().map(Binding::Assign),
            Stmt::Call(call) => call.target.as_ref().map(Binding::Assign),
            Stmt::For { var, .. } => Some(Binding::Loop(var)),
            Stmt::Escalate { .. } => Some(Binding::HumanInput),
            Stmt::Return(_)
            | Stmt::Parallel { .. }
            | Stmt::Loop { .. }
            | Stmt::Match { .. }
            | Stmt::If { .. }
            | Stmt::Push { .. }
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
            | Stmt::Missing => None,
        }
    }

    /// The item the statement invokes by name, and how.
    pub fn invokes(&self) -> Option<(Invocation, &Named)> {
        match self {
            Stmt::Run(run) if run.agent => Some((Invocation::RunAgent, &run.callee)),
            Stmt::Run(run) => Some((Invocation::RunFlow, &run.callee)),
            Stmt::Call(call) => Some((Invocation::CallLlm, &call.prompt)),
            Stmt::Assign { .. }
            | Stmt::Return(_)
            | Stmt::For { .. }
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
            | Stmt::Missing => None,
        }
    }

    /// The variable places the statement names itself (not in its
    /// expressions), in source order, with how it uses each.
    pub fn places(&self) -> Vec<(&Place, PlaceUse)> {
        match self {
            Stmt::Assign { target, .. } | Stmt::For { var: target, .. } => vec![(target, PlaceUse::Bind)],
            Stmt::Run(run) => run
                .target
                .iter()
                .map(|t| (t, PlaceUse::Bind))
                .chain(run.history.iter().map(|h| (h, PlaceUse::Update)))
                .collect(),
            Stmt::Call(call) => call.target.iter().map(|t| (t, PlaceUse::Bind)).collect(),
            Stmt::Push { target, .. } => vec![(target, PlaceUse::Update)],
            Stmt::Return(_)
            | Stmt::Parallel { .. }
            | Stmt::Loop { .. }
            | Stmt::Match { .. }
            | Stmt::If { .. }
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
            | Stmt::Missing => Vec::new(),
        }
    }

    /// The keyword of a statement after which nothing else in its block runs.
    pub fn ends_block(&self) -> Option<&'static str> {
        match self {
            Stmt::Return(_) => Some("return"),
            Stmt::Abort => Some("abort"),
            Stmt::Continue => Some("continue"),
            Stmt::Break => Some("break"),
            Stmt::Assign { .. }
            | Stmt::Run(_)
            | Stmt::Call(_)
            | Stmt::For { .. }
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
            | Stmt::RetryStep(_)
            | Stmt::Mask { .. }
            | Stmt::Block { .. }
            | Stmt::Warn { .. }
            | Stmt::RetryWith { .. }
            | Stmt::Missing => None,
        }
    }

    /// The statement as a guardrail action, if it is one.
    pub fn guardrail_action(&self) -> Option<GuardrailAction<'_>> {
        match self {
            Stmt::Mask { guardrail } => Some(GuardrailAction::Mask(guardrail)),
            Stmt::Block { condition } => Some(GuardrailAction::Block { condition: *condition }),
            Stmt::Warn { condition, message } => {
                Some(GuardrailAction::Warn { condition: *condition, message: message.as_deref() })
            }
            Stmt::RetryWith { message, condition } => {
                Some(GuardrailAction::RetryWith { message: *message, condition: *condition })
            }
            Stmt::Assign { .. }
            | Stmt::Run(_)
            | Stmt::Call(_)
            | Stmt::Return(_)
            | Stmt::For { .. }
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
            | Stmt::Missing => None,
        }
    }
}

impl ToolData {
    /// Whether the tool is an MCP server's, whose functions come from the
    /// server: `mcp "URL"`, or the long form with `type: mcp` and a `url`.
    pub fn is_mcp(&self) -> bool {
        match self {
            ToolData::Mcp { .. } => true,
            ToolData::Long { ty: Some(ty), url: Some(_), .. } => ty.as_str() == "mcp",
            ToolData::Long { .. }
            | ToolData::A2a { .. }
            | ToolData::Builtin(_)
            | ToolData::Ref(_)
            | ToolData::Missing => false,
        }
    }

    /// What a built-in tool is known by: its `builtin` or `a.b` reference, or
    /// the long form's `url`; `None` where the tool's own name decides.
    pub fn builtin_key(&self) -> Option<&str> {
        match self {
            ToolData::Builtin(reference) | ToolData::Ref(reference) if !reference.is_empty() => Some(reference),
            ToolData::Long { url: Some(url), .. } => Some(url),
            ToolData::Builtin(_)
            | ToolData::Ref(_)
            | ToolData::Long { url: None, .. }
            | ToolData::Mcp { .. }
            | ToolData::A2a { .. }
            | ToolData::Missing => None,
        }
    }
}
