//! Typed views over the untyped tree. Every accessor returns `Option` or an
//! iterator: the tree may be incomplete after a syntax error.

use text_size::TextRange;

use crate::SyntaxKind::{self, *};
use crate::{SyntaxElement, SyntaxNode, SyntaxToken};

pub trait AstNode: Sized {
    fn can_cast(kind: SyntaxKind) -> bool;
    fn cast(node: SyntaxNode) -> Option<Self>;
    fn syntax(&self) -> &SyntaxNode;
}

fn child<N: AstNode>(node: &SyntaxNode) -> Option<N> {
    children(node).next()
}

fn children<N: AstNode>(node: &SyntaxNode) -> impl Iterator<Item = N> + use<N> {
    direct(node, |kind, is_node| is_node && N::can_cast(kind)).filter_map(|e| e.into_node().and_then(N::cast))
}

fn token(node: &SyntaxNode, kind: SyntaxKind) -> Option<SyntaxToken> {
    direct(node, |k, is_node| !is_node && k == kind).find_map(|e| e.into_token())
}

/// The first non-trivia token directly under `node`.
fn first_token(node: &SyntaxNode) -> Option<SyntaxToken> {
    direct(node, |kind, is_node| !is_node && !kind.is_trivia()).find_map(|e| e.into_token())
}

/// Direct tokens of `node` that are not trivia or line breaks.
fn tokens(node: &SyntaxNode) -> impl Iterator<Item = SyntaxToken> + use<> {
    direct(node, |kind, is_node| !is_node && !kind.is_trivia() && kind != NEWLINE).filter_map(|e| e.into_token())
}

/// The direct children and tokens of `node` that `wanted(kind, is_node)`
/// picks. The green children are scanned as they are, and a cursor is made
/// only for a picked one: making one per child, as rowan's iterators do,
/// costs an allocation each.
fn direct<F: Fn(SyntaxKind, bool) -> bool>(
    node: &SyntaxNode,
    wanted: F,
) -> impl Iterator<Item = SyntaxElement> + use<F> {
    let node = node.clone();
    let mut index = 0;
    let mut offset = node.text_range().start();
    std::iter::from_fn(move || {
        let green = node.green();
        loop {
            let child = green.children().nth(index)?;
            let (at, len) = (offset, child.text_len());
            index += 1;
            offset += len;
            let kind = <crate::StreetRace as rowan::Language>::kind_from_raw(child.kind());
            if !wanted(kind, child.as_node().is_some()) {
                continue;
            }
            // A zero-width element's range does not tell it from its neighbours.
            return if len > 0.into() {
                node.child_or_token_at_range(TextRange::at(at, len))
            } else {
                node.children_with_tokens().nth(index - 1)
            };
        }
    })
}

macro_rules! ast_node {
    ($(#[$doc:meta])* $name:ident = $kind:ident) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash)]
        pub struct $name {
            pub(crate) syntax: SyntaxNode,
        }

        impl AstNode for $name {
            fn can_cast(kind: SyntaxKind) -> bool {
                kind == $kind
            }
            fn cast(node: SyntaxNode) -> Option<Self> {
                Self::can_cast(node.kind()).then_some($name { syntax: node })
            }
            fn syntax(&self) -> &SyntaxNode {
                &self.syntax
            }
        }
    };
}

macro_rules! ast_enum {
    ($(#[$doc:meta])* $name:ident { $($variant:ident),* $(,)? }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash)]
        pub enum $name {
            $($variant($variant),)*
        }

        impl AstNode for $name {
            fn can_cast(kind: SyntaxKind) -> bool {
                $($variant::can_cast(kind))||*
            }
            fn cast(node: SyntaxNode) -> Option<Self> {
                $(if $variant::can_cast(node.kind()) {
                    return Some($name::$variant($variant { syntax: node }));
                })*
                None
            }
            fn syntax(&self) -> &SyntaxNode {
                match self {
                    $($name::$variant(it) => &it.syntax,)*
                }
            }
        }
    };
}

// ---------------------------------------------------------------- names

ast_node!(
    /// The name a definition introduces (several words for a multi-word flow name).
    NameDef = NAME_DEF
);
ast_node!(
    /// A name that refers to a definition or a field.
    NameRef = NAME_REF
);

impl NameDef {
    /// The name as upstream stores it (words of a multi-word flow name joined by a space).
    pub fn text(&self) -> String {
        tokens(&self.syntax).map(|t| t.text().to_string()).collect::<Vec<_>>().join(" ")
    }
    pub fn token(&self) -> Option<SyntaxToken> {
        first_token(&self.syntax)
    }
}

impl NameRef {
    pub fn text(&self) -> String {
        self.token().map(|t| t.text().to_string()).unwrap_or_default()
    }
    pub fn token(&self) -> Option<SyntaxToken> {
        first_token(&self.syntax)
    }
}

// ---------------------------------------------------------------- items

ast_node!(SourceFile = SOURCE_FILE);
ast_node!(VersionDecl = VERSION_DECL);
ast_node!(Import = IMPORT);
ast_node!(ModelDef = MODEL_DEF);
ast_node!(ModelProperty = MODEL_PROPERTY);
ast_node!(SchemaDef = SCHEMA_DEF);
ast_node!(SchemaField = SCHEMA_FIELD);
ast_node!(NamedType = NAMED_TYPE);
ast_node!(ListType = LIST_TYPE);
ast_node!(OptionalType = OPTIONAL_TYPE);
ast_node!(ToolDef = TOOL_DEF);
ast_node!(ToolOption = TOOL_OPTION);
ast_node!(ToolProperty = TOOL_PROPERTY);
ast_node!(HeaderEntry = HEADER_ENTRY);
ast_node!(RetryPolicyDef = RETRY_POLICY_DEF);
ast_node!(TimeoutPolicyDef = TIMEOUT_POLICY_DEF);
ast_node!(TimeSpan = TIME_SPAN);
ast_node!(PolicyDef = POLICY_DEF);
ast_node!(PolicyProperty = POLICY_PROPERTY);
ast_node!(ExecutorDef = EXECUTOR_DEF);
ast_node!(ExecutorProperty = EXECUTOR_PROPERTY);
ast_node!(PreserveList = PRESERVE_LIST);
ast_node!(PreserveItem = PRESERVE_ITEM);
ast_node!(EventHandler = EVENT_HANDLER);
ast_node!(FlowDef = FLOW_DEF);
ast_node!(AgentDef = AGENT_DEF);
ast_node!(AgentProperty = AGENT_PROPERTY);
ast_node!(NameList = NAME_LIST);
ast_node!(PromptDef = PROMPT_DEF);
ast_node!(PromptModifier = PROMPT_MODIFIER);
ast_node!(PromptBody = PROMPT_BODY);
ast_node!(EscalationClause = ESCALATION_CLAUSE);
ast_node!(
    /// An indented body of statements or properties.
    Block = BLOCK
);

ast_enum!(
    /// A top-level definition.
    Item {
        Import,
        ModelDef,
        SchemaDef,
        ToolDef,
        RetryPolicyDef,
        TimeoutPolicyDef,
        PolicyDef,
        ExecutorDef,
        EventHandler,
        FlowDef,
        AgentDef,
        PromptDef,
    }
);

ast_enum!(TypeExpr { NamedType, ListType, OptionalType });

impl SourceFile {
    pub fn version(&self) -> Option<VersionDecl> {
        child(&self.syntax)
    }
    pub fn items(&self) -> impl Iterator<Item = Item> + use<> {
        children(&self.syntax)
    }
}

impl VersionDecl {
    pub fn version(&self) -> Option<SyntaxToken> {
        token(&self.syntax, VERSION)
    }
}

/// Where an `import` reads from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ImportSource {
    Streetrace,
    Local(String),
    Pip(String),
    Mcp(String),
}

impl Import {
    pub fn name(&self) -> Option<NameDef> {
        child(&self.syntax)
    }
    pub fn source_token(&self) -> Option<SyntaxToken> {
        tokens(&self.syntax).find(|t| matches!(t.kind(), STREETRACE_KW | LOCAL_PATH | PIP_URI | MCP_URI))
    }
    pub fn source(&self) -> Option<ImportSource> {
        let token = self.source_token()?;
        let text = token.text();
        Some(match token.kind() {
            STREETRACE_KW => ImportSource::Streetrace,
            LOCAL_PATH => ImportSource::Local(text.to_string()),
            PIP_URI => ImportSource::Pip(text.trim_start_matches("pip://").to_string()),
            _ => ImportSource::Mcp(text.trim_start_matches("mcp://").to_string()),
        })
    }
}

impl ModelDef {
    pub fn name(&self) -> Option<NameDef> {
        child(&self.syntax)
    }
    /// `provider/model` or the name of another model in the short form.
    pub fn value(&self) -> Option<SyntaxToken> {
        let mut after_eq = false;
        for t in tokens(&self.syntax) {
            if after_eq && matches!(t.kind(), PROVIDER_MODEL | NAME) {
                return Some(t);
            }
            after_eq |= t.kind() == EQ;
        }
        None
    }
    pub fn properties(&self) -> impl Iterator<Item = ModelProperty> + use<> {
        child::<Block>(&self.syntax).into_iter().flat_map(|b| children(&b.syntax))
    }
}

impl ModelProperty {
    pub fn key(&self) -> Option<SyntaxToken> {
        first_token(&self.syntax)
    }
    pub fn value(&self) -> Option<SyntaxToken> {
        tokens(&self.syntax).nth(2)
    }
}

impl SchemaDef {
    pub fn name(&self) -> Option<NameDef> {
        child(&self.syntax)
    }
    pub fn fields(&self) -> impl Iterator<Item = SchemaField> + use<> {
        child::<Block>(&self.syntax).into_iter().flat_map(|b| children(&b.syntax))
    }
}

impl SchemaField {
    pub fn name(&self) -> Option<NameDef> {
        child(&self.syntax)
    }
    pub fn ty(&self) -> Option<TypeExpr> {
        child(&self.syntax)
    }
}

impl NamedType {
    /// `string`, `int`, `float`, `bool` or a schema name.
    pub fn name_token(&self) -> Option<SyntaxToken> {
        first_token(&self.syntax).or_else(|| self.schema().and_then(|n| n.token()))
    }
    pub fn schema(&self) -> Option<NameRef> {
        child(&self.syntax)
    }
}

impl ListType {
    pub fn item(&self) -> Option<TypeExpr> {
        child(&self.syntax)
    }
}

impl OptionalType {
    pub fn inner(&self) -> Option<TypeExpr> {
        child(&self.syntax)
    }
}

/// How a tool is defined.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolKind {
    Mcp,
    /// `a2a "URL"`: a remote A2A agent (our extension).
    A2a,
    Builtin,
    Ref,
    Long,
}

impl ToolDef {
    pub fn name(&self) -> Option<NameDef> {
        child(&self.syntax)
    }
    pub fn kind(&self) -> Option<ToolKind> {
        if child::<Block>(&self.syntax).is_some() {
            return Some(ToolKind::Long);
        }
        let mut after_eq = false;
        for t in tokens(&self.syntax) {
            if after_eq {
                return match t.kind() {
                    MCP_KW => Some(ToolKind::Mcp),
                    NAME if t.text() == crate::item_kind::A2A => Some(ToolKind::A2a),
                    BUILTIN_KW => Some(ToolKind::Builtin),
                    DOTTED_NAME => Some(ToolKind::Ref),
                    _ => None,
                };
            }
            after_eq = t.kind() == EQ;
        }
        None
    }
    /// The word `a2a` of an A2A tool.
    pub fn a2a_token(&self) -> Option<SyntaxToken> {
        let mut after_eq = false;
        for t in tokens(&self.syntax) {
            if after_eq {
                return (t.kind() == NAME && t.text() == crate::item_kind::A2A).then_some(t);
            }
            after_eq = t.kind() == EQ;
        }
        None
    }
    /// The MCP or A2A URL literal.
    pub fn url(&self) -> Option<Literal> {
        child(&self.syntax)
    }
    /// `streetrace.fs` in `builtin streetrace.fs` or a `ref` tool.
    pub fn dotted_ref(&self) -> Option<SyntaxToken> {
        token(&self.syntax, DOTTED_NAME)
    }
    pub fn options(&self) -> impl Iterator<Item = ToolOption> + use<> {
        children(&self.syntax)
    }
    pub fn properties(&self) -> impl Iterator<Item = ToolProperty> + use<> {
        child::<Block>(&self.syntax).into_iter().flat_map(|b| children(&b.syntax))
    }
}

impl ToolOption {
    /// `bearer`, `basic` or the custom option's name.
    pub fn key(&self) -> Option<SyntaxToken> {
        tokens(&self.syntax).find(|t| t.kind() != AUTH_KW)
    }
    pub fn is_auth(&self) -> bool {
        token(&self.syntax, AUTH_KW).is_some()
    }
    pub fn value(&self) -> Option<Literal> {
        child(&self.syntax)
    }
}

impl ToolProperty {
    pub fn key(&self) -> Option<SyntaxToken> {
        first_token(&self.syntax)
    }
    pub fn value_token(&self) -> Option<SyntaxToken> {
        tokens(&self.syntax).nth(2)
    }
    pub fn headers(&self) -> impl Iterator<Item = HeaderEntry> + use<> {
        child::<Block>(&self.syntax).into_iter().flat_map(|b| children(&b.syntax))
    }
}

impl HeaderEntry {
    pub fn name(&self) -> Option<SyntaxToken> {
        token(&self.syntax, NAME)
    }
    pub fn value(&self) -> Option<Literal> {
        child(&self.syntax)
    }
}

impl RetryPolicyDef {
    pub fn name(&self) -> Option<NameDef> {
        child(&self.syntax)
    }
    pub fn times(&self) -> Option<u64> {
        token(&self.syntax, INT)?.text().parse().ok()
    }
    /// `exponential`, `linear` or `fixed`.
    pub fn backoff(&self) -> Option<SyntaxToken> {
        tokens(&self.syntax).find(|t| matches!(t.kind(), EXPONENTIAL_KW | LINEAR_KW | FIXED_KW))
    }
}

impl TimeoutPolicyDef {
    pub fn name(&self) -> Option<NameDef> {
        child(&self.syntax)
    }
    pub fn span(&self) -> Option<TimeSpan> {
        child(&self.syntax)
    }
}

impl TimeSpan {
    /// The duration in seconds.
    pub fn seconds(&self) -> Option<u64> {
        let n: u64 = token(&self.syntax, INT)?.text().parse().ok()?;
        let unit = match tokens(&self.syntax).nth(1)?.kind() {
            SECONDS_KW => 1,
            MINUTES_KW => 60,
            HOURS_KW => 3600,
            _ => return None,
        };
        n.checked_mul(unit)
    }
}

impl PolicyDef {
    pub fn name(&self) -> Option<NameDef> {
        child(&self.syntax)
    }
    pub fn properties(&self) -> impl Iterator<Item = PolicyProperty> + use<> {
        child::<Block>(&self.syntax).into_iter().flat_map(|b| children(&b.syntax))
    }
}

impl PolicyProperty {
    /// `trigger`, `strategy`, `preserve`, `use` (for `use model`) or a custom key.
    pub fn key(&self) -> Option<SyntaxToken> {
        first_token(&self.syntax)
    }
    pub fn value(&self) -> Option<Expr> {
        child(&self.syntax)
    }
    pub fn preserve(&self) -> Option<PreserveList> {
        child(&self.syntax)
    }
    pub fn model(&self) -> Option<Literal> {
        child(&self.syntax)
    }
}

impl ExecutorDef {
    pub fn name(&self) -> Option<NameDef> {
        child(&self.syntax)
    }
    pub fn properties(&self) -> impl Iterator<Item = ExecutorProperty> + use<> {
        child::<Block>(&self.syntax).into_iter().flat_map(|b| children(&b.syntax))
    }
}

impl ExecutorProperty {
    pub fn key(&self) -> Option<SyntaxToken> {
        first_token(&self.syntax)
    }
    pub fn value(&self) -> Option<Expr> {
        child(&self.syntax)
    }
}

impl PreserveList {
    pub fn items(&self) -> impl Iterator<Item = PreserveItem> + use<> {
        children(&self.syntax)
    }
}

impl PreserveItem {
    pub fn keyword(&self) -> Option<SyntaxToken> {
        first_token(&self.syntax)
    }
    pub fn count(&self) -> Option<u64> {
        token(&self.syntax, INT)?.text().parse().ok()
    }
    pub fn expr(&self) -> Option<Expr> {
        child(&self.syntax)
    }
}

impl EventHandler {
    /// `on` or `after`.
    pub fn timing(&self) -> Option<SyntaxToken> {
        first_token(&self.syntax)
    }
    /// `start`, `input`, `output`, `tool-call`, `tool-result` or another word.
    pub fn event(&self) -> Option<SyntaxToken> {
        tokens(&self.syntax).nth(1).filter(|t| t.kind() != DO_KW)
    }
    pub fn body(&self) -> Option<Block> {
        child(&self.syntax)
    }
}

impl FlowDef {
    pub fn name(&self) -> Option<NameDef> {
        child(&self.syntax)
    }
    pub fn body(&self) -> Option<Block> {
        child(&self.syntax)
    }
}

impl AgentDef {
    pub fn name(&self) -> Option<NameDef> {
        child(&self.syntax)
    }
    pub fn properties(&self) -> impl Iterator<Item = AgentProperty> + use<> {
        child::<Block>(&self.syntax).into_iter().flat_map(|b| children(&b.syntax))
    }
    pub fn handlers(&self) -> impl Iterator<Item = EventHandler> + use<> {
        child::<Block>(&self.syntax).into_iter().flat_map(|b| children(&b.syntax))
    }
    pub fn body(&self) -> Option<Block> {
        child(&self.syntax)
    }
}

impl AgentProperty {
    /// The property keyword (`tools`, `instruction`, …).
    pub fn keyword(&self) -> Option<SyntaxToken> {
        first_token(&self.syntax)
    }
    /// Names after `tools`, `delegate`, `use`, or the single name after
    /// `instruction`, `prompt`, `retry`, `timeout`.
    pub fn name_refs(&self) -> Vec<NameRef> {
        match child::<NameList>(&self.syntax) {
            Some(list) => list.names().collect(),
            None => children(&self.syntax).collect(),
        }
    }
    /// The variable a `produces` line defines.
    pub fn name_def(&self) -> Option<NameDef> {
        child(&self.syntax)
    }
    pub fn description(&self) -> Option<Literal> {
        child(&self.syntax)
    }
    pub fn time_span(&self) -> Option<TimeSpan> {
        child(&self.syntax)
    }
    /// The strategy word after `history`.
    pub fn word(&self) -> Option<SyntaxToken> {
        tokens(&self.syntax).nth(1)
    }
}

impl NameList {
    pub fn names(&self) -> impl Iterator<Item = NameRef> + use<> {
        children(&self.syntax)
    }
}

impl PromptDef {
    pub fn name(&self) -> Option<NameDef> {
        child(&self.syntax)
    }
    pub fn modifiers(&self) -> impl Iterator<Item = PromptModifier> + use<> {
        children(&self.syntax)
    }
    pub fn body(&self) -> Option<PromptBody> {
        child(&self.syntax)
    }
    pub fn escalation(&self) -> Option<EscalationClause> {
        child(&self.syntax)
    }
}

impl PromptModifier {
    /// `using`, `expecting` or `inherit`.
    pub fn keyword(&self) -> Option<SyntaxToken> {
        first_token(&self.syntax)
    }
    pub fn model(&self) -> Option<Literal> {
        child(&self.syntax)
    }
    pub fn schema(&self) -> Option<NameRef> {
        child(&self.syntax)
    }
    /// `expecting S[]`.
    pub fn is_array(&self) -> bool {
        token(&self.syntax, L_BRACK).is_some()
    }
    pub fn variable(&self) -> Option<Var> {
        child(&self.syntax)
    }
}

impl PromptBody {
    pub fn token(&self) -> Option<SyntaxToken> {
        token(&self.syntax, TRIPLE_STRING)
    }
}

impl EscalationClause {
    /// `~`, `==`, `!=` or `contains`.
    pub fn op(&self) -> Option<SyntaxToken> {
        tokens(&self.syntax).find(|t| matches!(t.kind(), TILDE | EQ2 | NEQ | CONTAINS_KW))
    }
    pub fn value(&self) -> Option<Literal> {
        child(&self.syntax)
    }
}

impl Block {
    pub fn statements(&self) -> impl Iterator<Item = Stmt> + use<> {
        children(&self.syntax)
    }
}

// ---------------------------------------------------------------- statements

ast_node!(AssignStmt = ASSIGN_STMT);
ast_node!(RunStmt = RUN_STMT);
ast_node!(CallStmt = CALL_STMT);
ast_node!(ReturnStmt = RETURN_STMT);
ast_node!(ForStmt = FOR_STMT);
ast_node!(ParallelStmt = PARALLEL_STMT);
ast_node!(LoopStmt = LOOP_STMT);
ast_node!(MatchStmt = MATCH_STMT);
ast_node!(MatchArm = MATCH_ARM);
ast_node!(IfStmt = IF_STMT);
ast_node!(PushStmt = PUSH_STMT);
ast_node!(EscalateStmt = ESCALATE_STMT);
ast_node!(LogStmt = LOG_STMT);
ast_node!(NotifyStmt = NOTIFY_STMT);
ast_node!(ExprStmt = EXPR_STMT);
ast_node!(FailureBlock = FAILURE_BLOCK);
ast_node!(ContinueStmt = CONTINUE_STMT);
ast_node!(BreakStmt = BREAK_STMT);
ast_node!(AbortStmt = ABORT_STMT);
ast_node!(RetryStepStmt = RETRY_STEP_STMT);
ast_node!(MaskStmt = MASK_STMT);
ast_node!(BlockStmt = BLOCK_STMT);
ast_node!(WarnStmt = WARN_STMT);
ast_node!(RetryWithStmt = RETRY_WITH_STMT);
ast_node!(WithClause = WITH_CLAUSE);
ast_node!(HistoryClause = HISTORY_CLAUSE);
ast_node!(UsingClause = USING_CLAUSE);
ast_node!(OnEscalate = ON_ESCALATE);

ast_enum!(
    /// A statement of a flow or handler body.
    Stmt {
        AssignStmt,
        RunStmt,
        CallStmt,
        ReturnStmt,
        ForStmt,
        ParallelStmt,
        LoopStmt,
        MatchStmt,
        IfStmt,
        PushStmt,
        EscalateStmt,
        LogStmt,
        NotifyStmt,
        ExprStmt,
        FailureBlock,
        ContinueStmt,
        BreakStmt,
        AbortStmt,
        RetryStepStmt,
        MaskStmt,
        BlockStmt,
        WarnStmt,
        RetryWithStmt,
    }
);

impl AssignStmt {
    pub fn target(&self) -> Option<Var> {
        child(&self.syntax)
    }
    pub fn value(&self) -> Option<Expr> {
        children::<Expr>(&self.syntax).nth(1)
    }
}

impl RunStmt {
    pub fn target(&self) -> Option<Var> {
        child(&self.syntax)
    }
    /// `run agent X` rather than `run FLOW` (in `run agent`, a flow named `agent`
    /// is called and the keyword sits inside the callee).
    pub fn is_agent(&self) -> bool {
        token(&self.syntax, AGENT_KW).is_some()
    }
    pub fn callee(&self) -> Option<NameRef> {
        child(&self.syntax)
    }
    pub fn with(&self) -> Option<WithClause> {
        child(&self.syntax)
    }
    pub fn history(&self) -> Option<HistoryClause> {
        child(&self.syntax)
    }
    pub fn on_escalate(&self) -> Option<OnEscalate> {
        child(&self.syntax)
    }
}

impl CallStmt {
    pub fn target(&self) -> Option<Var> {
        child(&self.syntax)
    }
    pub fn prompt(&self) -> Option<NameRef> {
        child(&self.syntax)
    }
    pub fn with(&self) -> Option<WithClause> {
        child(&self.syntax)
    }
    pub fn using(&self) -> Option<UsingClause> {
        child(&self.syntax)
    }
}

impl WithClause {
    pub fn expr(&self) -> Option<Expr> {
        child(&self.syntax)
    }
}

impl HistoryClause {
    pub fn var(&self) -> Option<Var> {
        child(&self.syntax)
    }
}

impl UsingClause {
    pub fn model(&self) -> Option<Literal> {
        child(&self.syntax)
    }
}

impl OnEscalate {
    /// `return`, `continue` or `abort`.
    pub fn action(&self) -> Option<SyntaxToken> {
        tokens(&self.syntax).find(|t| matches!(t.kind(), RETURN_KW | CONTINUE_KW | ABORT_KW))
    }
    pub fn value(&self) -> Option<Expr> {
        child(&self.syntax)
    }
}

impl ReturnStmt {
    pub fn value(&self) -> Option<Expr> {
        child(&self.syntax)
    }
}

impl ForStmt {
    pub fn var(&self) -> Option<Var> {
        child(&self.syntax)
    }
    pub fn iterable(&self) -> Option<Expr> {
        children::<Expr>(&self.syntax).nth(1)
    }
    pub fn body(&self) -> Option<Block> {
        child(&self.syntax)
    }
}

impl ParallelStmt {
    pub fn body(&self) -> Option<Block> {
        child(&self.syntax)
    }
}

impl LoopStmt {
    pub fn max(&self) -> Option<u64> {
        token(&self.syntax, INT)?.text().parse().ok()
    }
    pub fn body(&self) -> Option<Block> {
        child(&self.syntax)
    }
}

impl MatchStmt {
    pub fn scrutinee(&self) -> Option<Expr> {
        child(&self.syntax)
    }
    pub fn arms(&self) -> impl Iterator<Item = MatchArm> + use<> {
        child::<Block>(&self.syntax).into_iter().flat_map(|b| children(&b.syntax))
    }
}

impl MatchArm {
    /// `None` for the `else` arm.
    pub fn pattern(&self) -> Option<Literal> {
        child(&self.syntax)
    }
    pub fn is_else(&self) -> bool {
        first_token(&self.syntax).is_some_and(|t| t.kind() == ELSE_KW)
    }
    pub fn stmt(&self) -> Option<Stmt> {
        child(&self.syntax)
    }
}

impl IfStmt {
    pub fn condition(&self) -> Option<Expr> {
        child(&self.syntax)
    }
    pub fn body(&self) -> Option<Block> {
        child(&self.syntax)
    }
    /// The statement of a one-line `if C: STATEMENT`.
    pub fn inline(&self) -> Option<Stmt> {
        child(&self.syntax)
    }
}

impl PushStmt {
    pub fn value(&self) -> Option<Expr> {
        child(&self.syntax)
    }
    pub fn role(&self) -> Option<SyntaxToken> {
        let mut it = tokens(&self.syntax);
        it.find(|t| t.kind() == AS_KW)?;
        it.next().filter(|t| t.kind().is_identifier())
    }
    pub fn target(&self) -> Option<Var> {
        children::<Expr>(&self.syntax).nth(1).and_then(|e| match e {
            Expr::Var(v) => Some(v),
            _ => None,
        })
    }
}

impl EscalateStmt {
    pub fn message(&self) -> Option<Literal> {
        child(&self.syntax)
    }
}

impl LogStmt {
    pub fn value(&self) -> Option<Expr> {
        child(&self.syntax)
    }
}

impl NotifyStmt {
    pub fn value(&self) -> Option<Expr> {
        child(&self.syntax)
    }
}

impl ExprStmt {
    pub fn expr(&self) -> Option<Expr> {
        child(&self.syntax)
    }
}

impl FailureBlock {
    pub fn body(&self) -> Option<Block> {
        child(&self.syntax)
    }
}

impl RetryStepStmt {
    pub fn value(&self) -> Option<Expr> {
        child(&self.syntax)
    }
}

impl MaskStmt {
    pub fn guardrail(&self) -> Option<SyntaxToken> {
        tokens(&self.syntax).nth(1)
    }
}

impl BlockStmt {
    pub fn condition(&self) -> Option<Expr> {
        child(&self.syntax)
    }
}

impl WarnStmt {
    pub fn condition(&self) -> Option<Expr> {
        child::<Expr>(&self.syntax).filter(|_| token(&self.syntax, IF_KW).is_some())
    }
    pub fn message(&self) -> Option<Literal> {
        child::<Literal>(&self.syntax).filter(|_| token(&self.syntax, IF_KW).is_none())
    }
}

impl RetryWithStmt {
    pub fn message(&self) -> Option<Expr> {
        child(&self.syntax)
    }
    pub fn condition(&self) -> Option<Expr> {
        children::<Expr>(&self.syntax).nth(1)
    }
}

// ---------------------------------------------------------------- expressions

ast_node!(
    /// `$x`, `x`, `$a.b.c` or `a.b` (a dotted name reads nested fields).
    Var = VAR
);
ast_node!(
    /// `E . field` written with a separate dot.
    PropertyExpr = PROPERTY_EXPR
);
ast_node!(
    /// `.field` inside `filter … where`.
    ImplicitProperty = IMPLICIT_PROPERTY
);
ast_node!(Literal = LITERAL);
ast_node!(InitialPrompt = INITIAL_PROMPT);
ast_node!(ListExpr = LIST_EXPR);
ast_node!(ObjectExpr = OBJECT_EXPR);
ast_node!(ObjectEntry = OBJECT_ENTRY);
ast_node!(ParenExpr = PAREN_EXPR);
ast_node!(PrefixExpr = PREFIX_EXPR);
ast_node!(BinExpr = BIN_EXPR);
ast_node!(FilterExpr = FILTER_EXPR);
ast_node!(CallExpr = CALL_EXPR);
ast_node!(ArgList = ARG_LIST);

ast_enum!(Expr {
    Var,
    PropertyExpr,
    ImplicitProperty,
    Literal,
    InitialPrompt,
    ListExpr,
    ObjectExpr,
    ParenExpr,
    PrefixExpr,
    BinExpr,
    FilterExpr,
    CallExpr,
});

impl Var {
    pub fn has_dollar(&self) -> bool {
        token(&self.syntax, DOLLAR).is_some()
    }
    /// The name token (a `DOTTED_NAME` for `$a.b.c`).
    pub fn name_token(&self) -> Option<SyntaxToken> {
        tokens(&self.syntax).find(|t| t.kind() != DOLLAR)
    }
    /// The variable's name (the first segment of a dotted name).
    pub fn name(&self) -> Option<String> {
        let token = self.name_token()?;
        Some(token.text().split('.').next().unwrap_or_default().to_string())
    }
    /// Field names after the variable in `$a.b.c`.
    pub fn fields(&self) -> Vec<String> {
        self.name_token().map(|t| t.text().split('.').skip(1).map(str::to_string).collect()).unwrap_or_default()
    }
}

impl PropertyExpr {
    pub fn receiver(&self) -> Option<Expr> {
        child(&self.syntax)
    }
    pub fn field(&self) -> Option<NameRef> {
        child(&self.syntax)
    }
}

impl ImplicitProperty {
    /// The field path, split at dots.
    pub fn path(&self) -> Vec<String> {
        children::<NameRef>(&self.syntax)
            .flat_map(|n| n.text().split('.').map(str::to_string).collect::<Vec<_>>())
            .collect()
    }
}

/// The value of a literal token.
#[derive(Debug, Clone, PartialEq)]
pub enum LiteralValue {
    /// Plain text between the quotes (no escapes exist).
    String(String),
    /// Text between the quotes, with `${…}` to interpolate.
    Interpolated(String),
    Int(i64),
    Float(f64),
    Bool(bool),
    Null,
}

impl Literal {
    pub fn token(&self) -> Option<SyntaxToken> {
        first_token(&self.syntax)
    }
    pub fn value(&self) -> Option<LiteralValue> {
        let token = self.token()?;
        let text = token.text();
        Some(match token.kind() {
            STRING => LiteralValue::String(unquote(text).to_string()),
            INTERP_STRING => LiteralValue::Interpolated(unquote(text).to_string()),
            INT => LiteralValue::Int(text.parse().ok()?),
            NUMBER => LiteralValue::Float(text.parse().ok()?),
            TRUE_KW => LiteralValue::Bool(true),
            FALSE_KW => LiteralValue::Bool(false),
            NULL_KW => LiteralValue::Null,
            _ => return None,
        })
    }
    /// The text of a string literal, without quotes.
    pub fn string(&self) -> Option<String> {
        match self.value()? {
            LiteralValue::String(s) | LiteralValue::Interpolated(s) => Some(s),
            _ => None,
        }
    }
}

/// Strips one pair of quotes (single, double or triple), or the opening
/// triple quote of a string never closed (it runs to the next definition).
pub fn unquote(text: &str) -> &str {
    for q in ["\"\"\"", "'''", "\"", "'"] {
        let Some(inner) = text.strip_prefix(q) else { continue };
        if text.len() >= 2 * q.len()
            && let Some(inner) = inner.strip_suffix(q)
        {
            return inner;
        }
        if q.len() == 3 {
            return inner;
        }
    }
    text
}

impl ListExpr {
    pub fn items(&self) -> impl Iterator<Item = Expr> + use<> {
        children(&self.syntax)
    }
}

impl ObjectExpr {
    pub fn entries(&self) -> impl Iterator<Item = ObjectEntry> + use<> {
        children(&self.syntax)
    }
}

impl ObjectEntry {
    pub fn key(&self) -> Option<NameDef> {
        child(&self.syntax)
    }
    pub fn value(&self) -> Option<Expr> {
        child(&self.syntax)
    }
}

impl ParenExpr {
    pub fn inner(&self) -> Option<Expr> {
        child(&self.syntax)
    }
}

impl PrefixExpr {
    /// `not` or `-`.
    pub fn op(&self) -> Option<SyntaxToken> {
        first_token(&self.syntax)
    }
    pub fn operand(&self) -> Option<Expr> {
        child(&self.syntax)
    }
}

impl BinExpr {
    pub fn lhs(&self) -> Option<Expr> {
        child(&self.syntax)
    }
    pub fn rhs(&self) -> Option<Expr> {
        children::<Expr>(&self.syntax).nth(1)
    }
    pub fn op(&self) -> Option<SyntaxToken> {
        tokens(&self.syntax).next()
    }
}

impl FilterExpr {
    pub fn list(&self) -> Option<Expr> {
        child(&self.syntax)
    }
    pub fn condition(&self) -> Option<Expr> {
        children::<Expr>(&self.syntax).nth(1)
    }
}

impl CallExpr {
    /// The function name (`len`, `lib.f`, `process`), if the callee is a name.
    pub fn callee(&self) -> Option<NameRef> {
        child(&self.syntax)
    }
    /// The receiver of a statement-level property call `$a.b(x)`.
    pub fn receiver(&self) -> Option<Expr> {
        child(&self.syntax)
    }
    /// Parenthesised and juxtaposed arguments, in order.
    pub fn args(&self) -> impl Iterator<Item = Expr> + use<> {
        children::<ArgList>(&self.syntax).flat_map(|list| children(&list.syntax).collect::<Vec<_>>())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every element `direct` picks is the one rowan's iterator gives at the
    /// same place, zero-width ones included (an unclosed list at the end of a
    /// line leaves an empty node).
    #[test]
    fn direct_children_are_rowans_children() {
        let mut texts: Vec<String> = sr_testing::upstream_files().into_iter().map(|(_, text)| text).collect();
        texts.push("agent a:\n    tools [\n".to_string());
        texts.push("agent a:\n    instruction p\nflow".to_string());
        let mut zero_width = 0;
        for text in &texts {
            let root = crate::parse(text).syntax();
            for node in root.descendants() {
                let all: Vec<_> = direct(&node, |_, _| true).map(|e| (e.kind(), e.text_range())).collect();
                let expected: Vec<_> = node.children_with_tokens().map(|e| (e.kind(), e.text_range())).collect();
                assert_eq!(all, expected, "children of {node:?} in {text:?}");
                zero_width += expected.iter().filter(|(_, range)| range.is_empty()).count();
                let nodes: Vec<_> = children::<Expr>(&node).map(|e| e.syntax().text_range()).collect();
                let expected: Vec<_> =
                    node.children().filter_map(Expr::cast).map(|e| e.syntax().text_range()).collect();
                assert_eq!(nodes, expected);
            }
        }
        assert!(zero_width > 0, "no zero-width element was checked");
    }
}
