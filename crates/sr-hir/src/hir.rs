//! Span-free lowered data of items and the HIR of flow and handler bodies.
//!
//! Nothing here holds a text range: ranges live in [`SourceMap`], keyed by
//! [`PartId`], [`StmtId`] and [`ExprId`], so that edits which only move text do
//! not change these values and salsa can reuse everything computed from them.

use std::sync::Arc;

use la_arena::{Arena, ArenaMap, Idx};
use sr_syntax::TextRange;

use crate::Name;
use crate::diagnostic_kinds::ExecutorProblem;

mod facts;
pub use facts::{Binding, GuardrailAction, Invocation, PlaceUse};

/// A piece of an item whose range the source map knows (a name, a reference, a
/// string, a `${…}`), numbered in source order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PartId(pub u32);

/// A name with the part that spells it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Named {
    pub name: Name,
    pub part: PartId,
}

/// Ranges (relative to the item's start) of parts, statements and expressions.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct SourceMap {
    pub parts: Vec<TextRange>,
    pub stmts: ArenaMap<StmtId, TextRange>,
    pub exprs: ArenaMap<ExprId, TextRange>,
    /// The item's own range (from its first token).
    pub item: TextRange,
    /// The item's name, if it has one.
    pub name: Option<TextRange>,
}

impl SourceMap {
    pub fn part(&self, part: PartId) -> TextRange {
        self.parts[part.0 as usize]
    }

    /// Without the room its vectors grew: a map lives as long as its item.
    pub(crate) fn shrunk(mut self) -> SourceMap {
        self.parts.shrink_to_fit();
        self.stmts.shrink_to_fit();
        self.exprs.shrink_to_fit();
        self
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ItemData {
    Import(ImportData),
    Model(ModelData),
    Schema(SchemaData),
    Tool(ToolData),
    RetryPolicy(RetryPolicyData),
    TimeoutPolicy(TimeoutPolicyData),
    Policy(PolicyData),
    Executor(ExecutorData),
    Prompt(PromptData),
    Agent(AgentData),
    Flow,
    Handler(HandlerData),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportData {
    pub name: Option<Name>,
    pub source: ImportSource,
    pub source_part: PartId,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ImportSource {
    Streetrace,
    /// `./relative/path.sr`
    Local(String),
    Pip(String),
    Mcp(String),
    /// Unparseable (after a syntax error).
    Missing,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelData {
    /// `model m = provider/model`
    Direct(String),
    /// `model m = other`
    Alias(Named),
    /// `model m:` with properties.
    Long(LongModel),
    Missing,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LongModel {
    pub provider: Option<Name>,
    pub name: Option<Name>,
    /// Kept as text: `f64` is not `Eq`.
    pub temperature: Option<String>,
    pub max_tokens: Option<u64>,
    pub max_input_tokens: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaData {
    pub fields: Vec<SchemaField>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaField {
    pub name: Named,
    pub ty: TypeRef,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum TypeRef {
    String,
    Int,
    Float,
    Bool,
    Named(Named),
    List(Box<TypeRef>),
    Optional(Box<TypeRef>),
    Missing,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolData {
    Mcp {
        url: String,
        auth: Option<ToolAuth>,
        options: Vec<(Name, String)>,
    },
    /// `a2a "URL"`: a remote A2A agent, by the URL of its card (our extension).
    A2a {
        url: String,
        auth: Option<ToolAuth>,
        options: Vec<(Name, String)>,
        /// The word `a2a`, and the URL literal (the word when it has none).
        keyword_part: PartId,
        url_part: PartId,
    },
    /// `builtin streetrace.fs`
    Builtin(String),
    /// `tool x = a.b`: upstream ignores the reference and uses the tool's name.
    Ref(String),
    /// `tool x:` with `type`, `url`, `headers`.
    Long {
        ty: Option<Name>,
        url: Option<String>,
        headers: Vec<(Name, String)>,
    },
    Missing,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolAuth {
    pub kind: AuthKind,
    /// The value as written, `${env:VAR}` unresolved.
    pub value: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuthKind {
    Bearer,
    Basic,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetryPolicyData {
    pub times: u64,
    pub backoff: Backoff,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backoff {
    None,
    Exponential,
    Linear,
    Fixed,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TimeoutPolicyData {
    pub seconds: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PolicyData {
    pub trigger: Option<ExprId>,
    pub strategy: Option<Name>,
    pub preserve: Vec<PreserveItem>,
    pub use_model: Option<String>,
    /// Other `key: expression` properties.
    pub custom: Vec<(Name, ExprId)>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PreserveItem {
    Variable(Name),
    LastMessages(u64),
    ToolResults,
    Text(String),
    Expr(ExprId),
}

/// `executor NAME:`: where a coding agent's Python runs (our extension).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExecutorData {
    pub backend: SandboxBackend,
    /// The container image (`container` backend).
    pub image: Option<String>,
    /// The Docker Engine API socket (`container` backend); `$DOCKER_HOST` or the
    /// usual socket when absent.
    pub socket: Option<String>,
    /// Modules the code may import besides the safe default list: exact names
    /// or `pkg.*` patterns.
    pub allow: Vec<String>,
    /// Whether the code may `open` files (of the sandbox's scratch directory).
    pub files: bool,
    /// Seconds one step may run.
    pub timeout: Option<u64>,
    pub memory_mb: Option<u64>,
    pub cpu_seconds: Option<u64>,
    pub max_steps: Option<u64>,
    pub max_errors: Option<u64>,
    /// `examples: PROMPT`: worked examples for the system prompt.
    pub examples: Option<Named>,
    /// `stateless: true`: a fresh interpreter for every step.
    pub stateless: bool,
    /// What is wrong with the properties (SR110), and where.
    pub problems: Vec<(PartId, ExecutorProblem)>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum SandboxBackend {
    #[default]
    Bubblewrap,
    Container,
    /// Runs code as the user: trusted local use only.
    Unsandboxed,
}

impl SandboxBackend {
    pub const NAMES: [&str; 3] = ["bubblewrap", "container", "unsandboxed"];

    pub fn named(name: &str) -> Option<SandboxBackend> {
        match name {
            "bubblewrap" => Some(SandboxBackend::Bubblewrap),
            "container" => Some(SandboxBackend::Container),
            "unsandboxed" => Some(SandboxBackend::Unsandboxed),
            _ => None,
        }
    }
}

/// The properties an executor takes, with what each means (for completion and hover).
pub const EXECUTOR_PROPERTIES: [(&str, &str); 12] = [
    ("backend", "`bubblewrap` (default), `container` or `unsandboxed` (trusted local use only)"),
    ("image", "the container image (`container` backend)"),
    ("socket", "the Docker Engine API socket (`container` backend), e.g. \"unix:///run/podman/podman.sock\""),
    ("allow", "modules to allow besides the safe defaults: `[json, \"numpy.*\"]`"),
    ("files", "`true` lets the code `open` files in its scratch directory"),
    ("timeout", "seconds one step may run (default 30)"),
    ("memory", "megabytes of memory (default 512)"),
    ("cpu", "seconds of CPU time for the whole run (default 300)"),
    ("max_steps", "model replies before the agent gives up (default 20)"),
    ("max_errors", "failed steps in a row before the agent gives up (default 3)"),
    ("examples", "a prompt of worked examples, added to the coding rules the model reads"),
    ("stateless", "`true` runs every step in a fresh interpreter: nothing carries over between steps"),
];

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptData {
    pub body: Option<PromptBody>,
    /// `using model "m"` (the string).
    pub model: Option<Named>,
    /// `expecting S` or `expecting S[]`.
    pub expecting: Option<Expecting>,
    /// `inherit $x`.
    pub inherit: Option<Named>,
    pub escalation: Option<Escalation>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expecting {
    pub schema: Named,
    pub array: bool,
}

/// A prompt body: upstream's text (quotes removed, surrounding whitespace
/// stripped) and its `${…}` interpolations.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptBody {
    pub text: Arc<str>,
    pub template: Template,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Escalation {
    pub op: EscalationOp,
    pub value: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EscalationOp {
    /// `~`: normalised equality.
    Normalized,
    Equals,
    NotEquals,
    Contains,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentData {
    /// `false` for the unnamed agent (named `default`).
    pub named: bool,
    pub tools: Vec<Named>,
    pub instruction: Option<Named>,
    pub prompt: Option<Named>,
    pub produces: Option<Named>,
    pub retry: Option<Named>,
    pub timeout: Option<AgentTimeout>,
    pub description: Option<String>,
    pub delegate: Vec<Named>,
    pub use_: Vec<Named>,
    pub history: Option<Name>,
    /// `executor NAME`: the agent writes and runs code (our extension).
    pub executor: Option<Named>,
    /// Parts of the property keywords, by property, for diagnostics.
    pub property_parts: Vec<(AgentProperty, PartId)>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AgentProperty {
    Tools,
    Instruction,
    Prompt,
    Produces,
    Retry,
    Timeout,
    Description,
    Delegate,
    Use,
    History,
    Executor,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AgentTimeout {
    Named(Named),
    Seconds(u64),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HandlerData {
    pub timing: Timing,
    pub event: Event,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Timing {
    On,
    After,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Event {
    Start,
    Input,
    Output,
    ToolCall,
    ToolResult,
    /// Any other word; upstream treats it as `input`.
    Other(Name),
}

// ---------------------------------------------------------------- bodies

pub type StmtId = Idx<Stmt>;
pub type ExprId = Idx<Expr>;

/// The HIR of a flow or handler body (and the expressions of a policy).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Body {
    pub stmts: Arena<Stmt>,
    pub exprs: Arena<Expr>,
    /// Top-level statements in order.
    pub root: Vec<StmtId>,
}

/// An assignment target or `push … to` target: `$a` or `$a.b.c`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Place {
    pub name: Name,
    pub fields: Vec<Name>,
    pub part: PartId,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stmt {
    Assign {
        target: Place,
        value: ExprId,
    },
    Run(RunStmt),
    Call(CallStmt),
    Return(ExprId),
    For {
        var: Place,
        iterable: ExprId,
        body: Vec<StmtId>,
    },
    Parallel {
        body: Vec<StmtId>,
    },
    Loop {
        max: Option<u64>,
        body: Vec<StmtId>,
    },
    Match {
        scrutinee: ExprId,
        arms: Vec<(String, StmtId)>,
        otherwise: Option<StmtId>,
    },
    If {
        condition: ExprId,
        body: Vec<StmtId>,
        inline: bool,
    },
    Push {
        value: ExprId,
        role: Option<Name>,
        target: Place,
    },
    Escalate {
        message: Option<String>,
    },
    Log(ExprId),
    Notify(ExprId),
    /// A call used as a statement.
    Expr(ExprId),
    /// `on failure:` guards the statements before it in the same body.
    OnFailure {
        body: Vec<StmtId>,
    },
    Continue,
    /// `break` (our extension): ends the innermost `loop` or `for`.
    Break,
    Abort,
    RetryStep(ExprId),
    Mask {
        guardrail: Named,
    },
    Block {
        condition: ExprId,
    },
    Warn {
        condition: Option<ExprId>,
        message: Option<String>,
    },
    RetryWith {
        message: ExprId,
        condition: ExprId,
    },
    /// A statement that failed to parse.
    Missing,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunStmt {
    pub target: Option<Place>,
    pub callee: Named,
    /// `run agent X` rather than `run FLOW`.
    pub agent: bool,
    pub input: Option<ExprId>,
    pub history: Option<Place>,
    pub on_escalate: Option<OnEscalate>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OnEscalate {
    Return(ExprId),
    Continue,
    Abort,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallStmt {
    pub target: Option<Place>,
    pub prompt: Named,
    pub input: Option<ExprId>,
    /// `using model "m"`.
    pub model: Option<Named>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Expr {
    Missing,
    Literal(Literal),
    /// A string with `${…}` interpolations.
    Template(Template),
    /// `$x` or `x`.
    Var {
        name: Name,
        origin: VarOrigin,
    },
    /// `base.field` (from `$a.b`, `a.b` or `$a . b`).
    Field {
        base: ExprId,
        field: Name,
    },
    /// `.a.b` inside `filter … where`: a field of the current item.
    ItemField(Vec<Name>),
    List(Vec<ExprId>),
    Object(Vec<(Name, ExprId)>),
    Unary {
        op: UnaryOp,
        operand: ExprId,
    },
    Binary {
        op: BinaryOp,
        lhs: ExprId,
        rhs: ExprId,
    },
    Filter {
        list: ExprId,
        condition: ExprId,
    },
    /// `f(x)`, `f x`, `lib.f(x)`, `process x`.
    Call {
        function: Name,
        args: Vec<ExprId>,
    },
    /// `$a . b(x)` (statements only).
    MethodCall {
        receiver: ExprId,
        method: Name,
        args: Vec<ExprId>,
    },
    /// `initial user prompt`.
    InitialPrompt,
}

/// How a variable was written; upstream's checker treats the forms differently.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum VarOrigin {
    /// `$x`
    Dollar,
    /// `x`
    Bare,
    /// the `a` of `$a.b`
    DollarDotted,
    /// the `a` of `a.b`
    BareDotted,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Literal {
    String(String),
    Int(i64),
    /// Kept as text: `f64` is not `Eq`.
    Float(String),
    Bool(bool),
    Null,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum UnaryOp {
    Not,
    Neg,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BinaryOp {
    Or,
    And,
    Eq,
    NotEq,
    Lt,
    Gt,
    LtEq,
    GtEq,
    Contains,
    /// `~`: normalised equality.
    Similar,
    Add,
    Sub,
    Mul,
    Div,
    Rem,
}

impl BinaryOp {
    pub fn text(self) -> &'static str {
        match self {
            BinaryOp::Or => "or",
            BinaryOp::And => "and",
            BinaryOp::Eq => "==",
            BinaryOp::NotEq => "!=",
            BinaryOp::Lt => "<",
            BinaryOp::Gt => ">",
            BinaryOp::LtEq => "<=",
            BinaryOp::GtEq => ">=",
            BinaryOp::Contains => "contains",
            BinaryOp::Similar => "~",
            BinaryOp::Add => "+",
            BinaryOp::Sub => "-",
            BinaryOp::Mul => "*",
            BinaryOp::Div => "/",
            BinaryOp::Rem => "%",
        }
    }
}

/// Text with `${…}` interpolations, as upstream reads them: `${name}`,
/// `${a.b.c}`, `${$name}`, `${f(a.b)}`; anything else inside `${…}` is read as
/// a dotted path.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Template {
    pub parts: Vec<TemplatePart>,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum TemplatePart {
    Text(String),
    Interpolation(Interpolation),
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Interpolation {
    /// `len` in `${len(items)}`.
    pub function: Option<Name>,
    /// The variable and its fields: `["chunk", "title"]`.
    pub path: Vec<Name>,
    /// Upstream's checker validates only `${ident(.ident)*}`.
    pub plain: bool,
    /// The `${…}` in the source.
    pub part: PartId,
    /// Character offset of `${` in the string's text (a prompt body's text is
    /// stripped, as upstream's).
    pub char_offset: u32,
}

impl Template {
    pub fn interpolations(&self) -> impl Iterator<Item = &Interpolation> {
        self.parts.iter().filter_map(|p| match p {
            TemplatePart::Interpolation(i) => Some(i),
            TemplatePart::Text(_) => None,
        })
    }
}

impl Body {
    /// Statements in execution order of their appearance, nested blocks included.
    pub fn walk_stmts(&self, f: &mut impl FnMut(StmtId, &Stmt)) {
        fn go(body: &Body, stmts: &[StmtId], f: &mut impl FnMut(StmtId, &Stmt)) {
            for &id in stmts {
                let stmt = &body.stmts[id];
                f(id, stmt);
                go(body, &stmt.children(), f);
            }
        }
        go(self, &self.root, f)
    }

    /// `expr` and every expression under it, parents first.
    pub fn walk_expr(&self, expr: ExprId, f: &mut impl FnMut(ExprId, &Expr)) {
        let e = &self.exprs[expr];
        f(expr, e);
        match e {
            Expr::Field { base, .. } => self.walk_expr(*base, f),
            Expr::List(items) => items.iter().for_each(|&i| self.walk_expr(i, f)),
            Expr::Object(entries) => entries.iter().for_each(|(_, v)| self.walk_expr(*v, f)),
            Expr::Unary { operand, .. } => self.walk_expr(*operand, f),
            Expr::Binary { lhs, rhs, .. } => {
                self.walk_expr(*lhs, f);
                self.walk_expr(*rhs, f);
            }
            Expr::Filter { list, condition } => {
                self.walk_expr(*list, f);
                self.walk_expr(*condition, f);
            }
            Expr::Call { args, .. } => args.iter().for_each(|&a| self.walk_expr(a, f)),
            Expr::MethodCall { receiver, args, .. } => {
                self.walk_expr(*receiver, f);
                args.iter().for_each(|&a| self.walk_expr(a, f));
            }
            Expr::Missing
            | Expr::Literal(_)
            | Expr::Template(_)
            | Expr::Var { .. }
            | Expr::ItemField(_)
            | Expr::InitialPrompt => {}
        }
    }
}
