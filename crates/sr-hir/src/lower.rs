//! Lowering an item's syntax into span-free data, a body HIR and a source map.

use std::sync::{Arc, LazyLock};

use sr_syntax::ast::{self, AstNode, LiteralValue};
use sr_syntax::{SyntaxKind, SyntaxNode, SyntaxToken, TextRange, TextSize};

use crate::hir::*;
use crate::items::{Item, ItemKind, item_syntax};
use crate::template::{has_interpolation, parse_template};

mod executor;
use crate::{Db, Name};

/// Everything lowered from one item. `body` and `source_map` are queries of
/// their own so that a change in ranges alone does not invalidate users of the
/// body.
#[derive(Debug, PartialEq, Eq)]
pub struct Lowered {
    data: Arc<ItemData>,
    body: Arc<Body>,
    source_map: Arc<SourceMap>,
}

/// The typed node of an item: its kind was read off the node's kind, so the cast holds.
fn item_node<N: AstNode>(root: SyntaxNode) -> N {
    N::cast(root).expect("an item's kind matches its syntax node")
}

#[salsa::tracked(returns(ref))]
fn lower_item<'db>(db: &'db dyn Db, item: Item<'db>) -> Lowered {
    let root = item_syntax(db, item);
    let mut cx = Lower::default();
    cx.map.item = root.text_range();
    cx.map.name = crate::items::name_range(&root);
    let data = match item.kind(db) {
        ItemKind::Import => ItemData::Import(cx.import(item_node::<ast::Import>(root))),
        ItemKind::Model => ItemData::Model(cx.model(item_node::<ast::ModelDef>(root))),
        ItemKind::Schema => ItemData::Schema(cx.schema(item_node::<ast::SchemaDef>(root))),
        ItemKind::Tool => ItemData::Tool(cx.tool(item_node::<ast::ToolDef>(root))),
        ItemKind::RetryPolicy => ItemData::RetryPolicy(cx.retry_policy(item_node::<ast::RetryPolicyDef>(root))),
        ItemKind::TimeoutPolicy => ItemData::TimeoutPolicy(TimeoutPolicyData {
            seconds: item_node::<ast::TimeoutPolicyDef>(root).span().and_then(|s| s.seconds()),
        }),
        ItemKind::Policy => ItemData::Policy(cx.policy(item_node::<ast::PolicyDef>(root))),
        ItemKind::Executor => ItemData::Executor(cx.executor(item_node::<ast::ExecutorDef>(root))),
        ItemKind::Prompt => ItemData::Prompt(cx.prompt(item_node::<ast::PromptDef>(root))),
        ItemKind::Agent => ItemData::Agent(cx.agent(item_node::<ast::AgentDef>(root))),
        ItemKind::Flow => {
            let flow = item_node::<ast::FlowDef>(root);
            cx.body.root = cx.block(flow.body());
            ItemData::Flow
        }
        ItemKind::Handler => {
            let handler = item_node::<ast::EventHandler>(root);
            cx.body.root = cx.block(handler.body());
            ItemData::Handler(handler_data(&handler))
        }
    };
    Lowered { data: Arc::new(data), body: shared_if_empty(cx.body), source_map: Arc::new(cx.map.shrunk()) }
}

/// Most items have no body: they share one empty one rather than allocate
/// their own (the 9.2 MB benchmark file has 60k such items).
fn shared_if_empty(body: Body) -> Arc<Body> {
    static EMPTY: LazyLock<Arc<Body>> = LazyLock::new(Arc::default);
    if body.stmts.is_empty() && body.exprs.is_empty() && body.root.is_empty() {
        return EMPTY.clone();
    }
    let mut body = body;
    body.stmts.shrink_to_fit();
    body.exprs.shrink_to_fit();
    body.root.shrink_to_fit();
    Arc::new(body)
}

/// The span-free data of an item. Not a query of its own: every check reads
/// every item's data, and after an edit salsa re-validates each memo a query
/// read, so one memo per item ([`lower_item`]'s) is what an edit costs there.
/// A flow's data says only that it is one, so reading it reads nothing.
pub fn item_data<'db>(db: &'db dyn Db, item: Item<'db>) -> Arc<ItemData> {
    static FLOW: LazyLock<Arc<ItemData>> = LazyLock::new(|| Arc::new(ItemData::Flow));
    match item.kind(db) {
        ItemKind::Flow => FLOW.clone(),
        _ => lower_item(db, item).data.clone(),
    }
}

/// The HIR of a flow or handler body (empty for other items, except the
/// expressions of a policy).
#[salsa::tracked(returns(clone))]
pub fn body<'db>(db: &'db dyn Db, item: Item<'db>) -> Arc<Body> {
    lower_item(db, item).body.clone()
}

/// Ranges of the item's parts, statements and expressions, relative to the item.
#[salsa::tracked(returns(clone))]
pub fn source_map<'db>(db: &'db dyn Db, item: Item<'db>) -> Arc<SourceMap> {
    lower_item(db, item).source_map.clone()
}

fn handler_data(handler: &ast::EventHandler) -> HandlerData {
    let timing =
        if handler.timing().is_some_and(|t| t.kind() == SyntaxKind::AFTER_KW) { Timing::After } else { Timing::On };
    let event = match handler.event().map(|t| (t.kind(), t.text().to_string())) {
        Some((SyntaxKind::START_KW, _)) => Event::Start,
        Some((SyntaxKind::INPUT_KW, _)) => Event::Input,
        Some((SyntaxKind::OUTPUT_KW, _)) => Event::Output,
        Some((SyntaxKind::TOOL_CALL_KW, _)) => Event::ToolCall,
        Some((SyntaxKind::TOOL_RESULT_KW, _)) => Event::ToolResult,
        Some((_, other)) => Event::Other(Name::from(other)),
        None => Event::Other(Name::default()),
    };
    HandlerData { timing, event }
}

#[derive(Default)]
struct Lower {
    body: Body,
    map: SourceMap,
}

impl Lower {
    fn part(&mut self, range: TextRange) -> PartId {
        self.map.parts.push(range);
        PartId(self.map.parts.len() as u32 - 1)
    }

    fn named_token(&mut self, token: &SyntaxToken) -> Named {
        Named { name: Name::from(token.text()), part: self.part(token.text_range()) }
    }

    fn name_ref(&mut self, name: Option<ast::NameRef>) -> Option<Named> {
        let name = name?;
        let token = name.token()?;
        Some(self.named_token(&token))
    }

    fn name_def(&mut self, name: Option<ast::NameDef>) -> Option<Named> {
        let name = name?;
        let range = name.syntax().text_range();
        Some(Named { name: Name::from(name.text()), part: self.part(range) })
    }

    fn string(&mut self, literal: Option<ast::Literal>) -> Option<Named> {
        let literal = literal?;
        let text = literal.string()?;
        Some(Named { name: Name::from(text), part: self.part(literal.syntax().text_range()) })
    }

    fn import(&mut self, import: ast::Import) -> ImportData {
        let name = import.name().map(|n| Name::from(n.text()));
        let source_part = self.part(import.source_token().map_or(import.syntax().text_range(), |t| t.text_range()));
        let source = match import.source() {
            Some(ast::ImportSource::Streetrace) => ImportSource::Streetrace,
            Some(ast::ImportSource::Local(path)) => ImportSource::Local(path),
            Some(ast::ImportSource::Pip(name)) => ImportSource::Pip(name),
            Some(ast::ImportSource::Mcp(name)) => ImportSource::Mcp(name),
            None => ImportSource::Missing,
        };
        ImportData { name, source, source_part }
    }

    fn model(&mut self, model: ast::ModelDef) -> ModelData {
        if let Some(value) = model.value() {
            return match value.kind() {
                SyntaxKind::PROVIDER_MODEL => ModelData::Direct(value.text().to_string()),
                _ => ModelData::Alias(self.named_token(&value)),
            };
        }
        let mut long = LongModel::default();
        let mut any = false;
        for property in model.properties() {
            any = true;
            let (Some(key), Some(value)) = (property.key(), property.value()) else { continue };
            let text = value.text();
            match key.kind() {
                SyntaxKind::PROVIDER_KW => long.provider = Some(Name::from(text)),
                SyntaxKind::NAME_KW => long.name = Some(Name::from(text)),
                SyntaxKind::TEMPERATURE_KW => long.temperature = Some(text.to_string()),
                SyntaxKind::MAX_TOKENS_KW => long.max_tokens = text.parse().ok(),
                SyntaxKind::MAX_INPUT_TOKENS_KW => long.max_input_tokens = text.parse().ok(),
                _ => {}
            }
        }
        if any { ModelData::Long(long) } else { ModelData::Missing }
    }

    fn schema(&mut self, schema: ast::SchemaDef) -> SchemaData {
        let fields = schema
            .fields()
            .filter_map(|field| {
                let name = self.name_def(field.name())?;
                let ty = self.type_ref(field.ty());
                Some(SchemaField { name, ty })
            })
            .collect();
        SchemaData { fields }
    }

    fn type_ref(&mut self, ty: Option<ast::TypeExpr>) -> TypeRef {
        match ty {
            None => TypeRef::Missing,
            Some(ast::TypeExpr::NamedType(named)) => match named.schema() {
                Some(schema) => self.name_ref(Some(schema)).map_or(TypeRef::Missing, TypeRef::Named),
                None => match named.name_token().map(|t| t.kind()) {
                    Some(SyntaxKind::STRING_KW) => TypeRef::String,
                    Some(SyntaxKind::INT_KW) => TypeRef::Int,
                    Some(SyntaxKind::FLOAT_KW) => TypeRef::Float,
                    Some(SyntaxKind::BOOL_KW) => TypeRef::Bool,
                    _ => TypeRef::Missing,
                },
            },
            Some(ast::TypeExpr::ListType(list)) => TypeRef::List(Box::new(self.type_ref(list.item()))),
            Some(ast::TypeExpr::OptionalType(opt)) => TypeRef::Optional(Box::new(self.type_ref(opt.inner()))),
        }
    }

    fn tool(&mut self, tool: ast::ToolDef) -> ToolData {
        match tool.kind() {
            Some(kind @ (ast::ToolKind::Mcp | ast::ToolKind::A2a)) => {
                let url = tool.url().and_then(|u| u.string()).unwrap_or_default();
                let mut auth = None;
                let mut options = Vec::new();
                for option in tool.options() {
                    let (Some(key), Some(value)) = (option.key(), option.value().and_then(|v| v.string())) else {
                        continue;
                    };
                    if option.is_auth() {
                        let kind = if key.kind() == SyntaxKind::BASIC_KW { AuthKind::Basic } else { AuthKind::Bearer };
                        auth = Some(ToolAuth { kind, value });
                    } else {
                        options.push((Name::from(key.text()), value));
                    }
                }
                match kind {
                    ast::ToolKind::A2a => {
                        let keyword = tool.a2a_token().map_or(tool.syntax().text_range(), |t| t.text_range());
                        let keyword_part = self.part(keyword);
                        let url_part = self.part(tool.url().map_or(keyword, |u| u.syntax().text_range()));
                        ToolData::A2a { url, auth, options, keyword_part, url_part }
                    }
                    _ => ToolData::Mcp { url, auth, options },
                }
            }
            Some(ast::ToolKind::Builtin) => {
                ToolData::Builtin(tool.dotted_ref().map(|t| t.text().to_string()).unwrap_or_default())
            }
            Some(ast::ToolKind::Ref) => {
                ToolData::Ref(tool.dotted_ref().map(|t| t.text().to_string()).unwrap_or_default())
            }
            Some(ast::ToolKind::Long) => {
                let (mut ty, mut url, mut headers) = (None, None, Vec::new());
                for property in tool.properties() {
                    match property.key().map(|k| k.kind()) {
                        Some(SyntaxKind::TYPE_KW) => ty = property.value_token().map(|t| Name::from(t.text())),
                        Some(SyntaxKind::URL_KW) => {
                            url = property.syntax().children().find_map(ast::Literal::cast).and_then(|l| l.string())
                        }
                        Some(SyntaxKind::HEADERS_KW) => {
                            for header in property.headers() {
                                if let (Some(name), Some(value)) =
                                    (header.name(), header.value().and_then(|v| v.string()))
                                {
                                    headers.push((Name::from(name.text()), value));
                                }
                            }
                        }
                        _ => {}
                    }
                }
                ToolData::Long { ty, url, headers }
            }
            None => ToolData::Missing,
        }
    }

    fn retry_policy(&mut self, retry: ast::RetryPolicyDef) -> RetryPolicyData {
        let backoff = match retry.backoff().map(|t| t.kind()) {
            Some(SyntaxKind::EXPONENTIAL_KW) => Backoff::Exponential,
            Some(SyntaxKind::LINEAR_KW) => Backoff::Linear,
            Some(SyntaxKind::FIXED_KW) => Backoff::Fixed,
            _ => Backoff::None,
        };
        RetryPolicyData { times: retry.times().unwrap_or(0), backoff }
    }

    fn policy(&mut self, policy: ast::PolicyDef) -> PolicyData {
        let mut data =
            PolicyData { trigger: None, strategy: None, preserve: Vec::new(), use_model: None, custom: Vec::new() };
        for property in policy.properties() {
            let Some(key) = property.key() else { continue };
            match key.kind() {
                SyntaxKind::USE_KW if property.model().is_some() => {
                    data.use_model = property.model().and_then(|m| m.string());
                }
                SyntaxKind::PRESERVE_KW if let Some(preserve) = property.preserve() => {
                    for item in preserve.items() {
                        let preserved = match item.keyword().map(|k| k.kind()) {
                            Some(SyntaxKind::LAST_KW) if let Some(count) = item.count() => {
                                PreserveItem::LastMessages(count)
                            }
                            Some(SyntaxKind::TOOL_KW) if item.expr().is_none() => PreserveItem::ToolResults,
                            _ => match item.expr() {
                                Some(ast::Expr::Var(var)) if var.fields().is_empty() => {
                                    PreserveItem::Variable(Name::from(var.name().unwrap_or_default()))
                                }
                                Some(ast::Expr::Literal(lit)) if let Some(text) = lit.string() => {
                                    PreserveItem::Text(text)
                                }
                                Some(expr) => PreserveItem::Expr(self.expr(expr)),
                                None => continue,
                            },
                        };
                        data.preserve.push(preserved);
                    }
                }
                _ => {
                    let name = Name::from(key.text());
                    let Some(value) = property.value() else { continue };
                    match key.kind() {
                        SyntaxKind::STRATEGY_KW => {
                            data.strategy = match &value {
                                ast::Expr::Var(var) => var.name().map(Name::from),
                                _ => None,
                            };
                        }
                        SyntaxKind::TRIGGER_KW => data.trigger = Some(self.expr(value)),
                        _ => {
                            let id = self.expr(value);
                            data.custom.push((name, id));
                        }
                    }
                }
            }
        }
        data
    }

    fn prompt(&mut self, prompt: ast::PromptDef) -> PromptData {
        let mut data = PromptData { body: None, model: None, expecting: None, inherit: None, escalation: None };
        for modifier in prompt.modifiers() {
            match modifier.keyword().map(|k| k.kind()) {
                Some(SyntaxKind::USING_KW) => data.model = self.string(modifier.model()),
                Some(SyntaxKind::EXPECTING_KW) => {
                    if let Some(schema) = self.name_ref(modifier.schema()) {
                        data.expecting = Some(Expecting { schema, array: modifier.is_array() });
                    }
                }
                Some(SyntaxKind::INHERIT_KW) => {
                    if let Some(var) = modifier.variable() {
                        let name = var.name_token().map(|t| t.text().to_string()).unwrap_or_default();
                        data.inherit =
                            Some(Named { name: Name::from(name), part: self.part(var.syntax().text_range()) });
                    }
                }
                _ => {}
            }
        }
        if let Some(token) = prompt.body().and_then(|b| b.token()) {
            data.body = Some(self.prompt_body(&token));
        }
        if let Some(clause) = prompt.escalation()
            && let (Some(op), Some(value)) = (clause.op(), clause.value().and_then(|v| v.string()))
        {
            let op = match op.kind() {
                SyntaxKind::TILDE => EscalationOp::Normalized,
                SyntaxKind::EQ2 => EscalationOp::Equals,
                SyntaxKind::NEQ => EscalationOp::NotEquals,
                _ => EscalationOp::Contains,
            };
            data.escalation = Some(Escalation { op, value });
        }
        data
    }

    /// Upstream strips the quotes, then surrounding whitespace.
    fn prompt_body(&mut self, token: &SyntaxToken) -> PromptBody {
        let raw = token.text();
        let inner = ast::unquote(raw);
        let leading = inner.len() - inner.trim_start().len();
        let text = inner.trim();
        let start = token.text_range().start() + TextSize::from(3 + leading as u32);
        let template = parse_template(text, start, &mut self.map.parts);
        PromptBody { text: text.into(), template }
    }

    fn agent(&mut self, agent: ast::AgentDef) -> AgentData {
        let mut data = AgentData {
            named: agent.name().is_some(),
            tools: Vec::new(),
            instruction: None,
            prompt: None,
            produces: None,
            retry: None,
            timeout: None,
            description: None,
            delegate: Vec::new(),
            use_: Vec::new(),
            history: None,
            executor: None,
            property_parts: Vec::new(),
        };
        for property in agent.properties() {
            let Some(keyword) = property.keyword() else { continue };
            let kind = match keyword.kind() {
                SyntaxKind::TOOLS_KW => AgentProperty::Tools,
                SyntaxKind::INSTRUCTION_KW => AgentProperty::Instruction,
                SyntaxKind::PROMPT_KW => AgentProperty::Prompt,
                SyntaxKind::PRODUCES_KW => AgentProperty::Produces,
                SyntaxKind::RETRY_KW => AgentProperty::Retry,
                SyntaxKind::TIMEOUT_KW => AgentProperty::Timeout,
                SyntaxKind::DESCRIPTION_KW => AgentProperty::Description,
                SyntaxKind::DELEGATE_KW => AgentProperty::Delegate,
                SyntaxKind::USE_KW => AgentProperty::Use,
                SyntaxKind::HISTORY_KW => AgentProperty::History,
                SyntaxKind::NAME if keyword.text() == "executor" => AgentProperty::Executor,
                _ => continue,
            };
            let part = self.part(property.syntax().text_range());
            data.property_parts.push((kind, part));
            // Upstream: a repeated property line replaces the earlier one.
            let refs: Vec<Named> = property.name_refs().into_iter().filter_map(|n| self.name_ref(Some(n))).collect();
            match kind {
                AgentProperty::Tools => data.tools = refs,
                AgentProperty::Delegate => data.delegate = refs,
                AgentProperty::Use => data.use_ = refs,
                AgentProperty::Instruction => data.instruction = refs.into_iter().next(),
                AgentProperty::Prompt => data.prompt = refs.into_iter().next(),
                AgentProperty::Retry => data.retry = refs.into_iter().next(),
                AgentProperty::Timeout => {
                    data.timeout = match property.time_span() {
                        Some(span) => span.seconds().map(AgentTimeout::Seconds),
                        None => refs.into_iter().next().map(AgentTimeout::Named),
                    }
                }
                AgentProperty::Produces => data.produces = self.name_def(property.name_def()),
                AgentProperty::Description => data.description = property.description().and_then(|d| d.string()),
                AgentProperty::History => data.history = property.word().map(|w| Name::from(w.text())),
                AgentProperty::Executor => data.executor = refs.into_iter().next(),
            }
        }
        data
    }

    // ------------------------------------------------------------ bodies

    fn block(&mut self, block: Option<ast::Block>) -> Vec<StmtId> {
        block.map(|b| b.statements().map(|s| self.stmt(s)).collect()).unwrap_or_default()
    }

    fn alloc_stmt(&mut self, stmt: Stmt, node: &SyntaxNode) -> StmtId {
        let id = self.body.stmts.alloc(stmt);
        // A statement's range ends before its trailing line break.
        let range = TextRange::new(node.text_range().start(), sr_syntax::significant_range(node).end());
        self.map.stmts.insert(id, range);
        id
    }

    fn alloc_expr(&mut self, expr: Expr, range: TextRange) -> ExprId {
        let id = self.body.exprs.alloc(expr);
        self.map.exprs.insert(id, range);
        id
    }

    fn missing_expr(&mut self, at: &SyntaxNode) -> ExprId {
        self.alloc_expr(Expr::Missing, at.text_range())
    }

    fn opt_expr(&mut self, expr: Option<ast::Expr>, parent: &SyntaxNode) -> ExprId {
        match expr {
            Some(e) => self.expr(e),
            None => self.missing_expr(parent),
        }
    }

    fn place(&mut self, var: Option<ast::Var>, parent: &SyntaxNode) -> Place {
        match var.and_then(|v| Some((v.name()?, v.fields(), v.syntax().text_range()))) {
            Some((name, fields, range)) => Place {
                name: Name::from(name),
                fields: fields.into_iter().map(Name::from).collect(),
                part: self.part(range),
            },
            None => Place { name: Name::default(), fields: Vec::new(), part: self.part(parent.text_range()) },
        }
    }

    fn stmt(&mut self, stmt: ast::Stmt) -> StmtId {
        let node = stmt.syntax().clone();
        let lowered = match stmt {
            ast::Stmt::AssignStmt(s) => {
                let target = self.place(s.target(), &node);
                let value = self.opt_expr(s.value(), &node);
                Stmt::Assign { target, value }
            }
            ast::Stmt::RunStmt(s) => {
                let target = s.target().map(|t| self.place(Some(t), &node));
                match self.name_ref(s.callee()) {
                    Some(callee) => {
                        let input = s.with().map(|w| self.opt_expr(w.expr(), w.syntax()));
                        let history = s.history().map(|h| self.place(h.var(), h.syntax()));
                        let on_escalate = s.on_escalate().map(|e| self.on_escalate(e));
                        Stmt::Run(RunStmt { target, callee, agent: s.is_agent(), input, history, on_escalate })
                    }
                    None => Stmt::Missing,
                }
            }
            ast::Stmt::CallStmt(s) => {
                let target = s.target().map(|t| self.place(Some(t), &node));
                match self.name_ref(s.prompt()) {
                    Some(prompt) => {
                        let input = s.with().map(|w| self.opt_expr(w.expr(), w.syntax()));
                        let model = s.using().and_then(|u| self.string(u.model()));
                        Stmt::Call(CallStmt { target, prompt, input, model })
                    }
                    None => Stmt::Missing,
                }
            }
            ast::Stmt::ReturnStmt(s) => Stmt::Return(self.opt_expr(s.value(), &node)),
            ast::Stmt::ForStmt(s) => {
                let var = self.place(s.var(), &node);
                let iterable = self.opt_expr(s.iterable(), &node);
                let body = self.block(s.body());
                Stmt::For { var, iterable, body }
            }
            ast::Stmt::ParallelStmt(s) => Stmt::Parallel { body: self.block(s.body()) },
            ast::Stmt::LoopStmt(s) => Stmt::Loop { max: s.max(), body: self.block(s.body()) },
            ast::Stmt::MatchStmt(s) => {
                let scrutinee = self.opt_expr(s.scrutinee(), &node);
                let mut arms = Vec::new();
                let mut otherwise = None;
                for arm in s.arms() {
                    let Some(stmt) = arm.stmt() else { continue };
                    let stmt = self.stmt(stmt);
                    if arm.is_else() {
                        otherwise = Some(stmt);
                    } else if let Some(pattern) = arm.pattern().and_then(|p| p.string()) {
                        arms.push((pattern, stmt));
                    }
                }
                Stmt::Match { scrutinee, arms, otherwise }
            }
            ast::Stmt::IfStmt(s) => {
                let condition = self.opt_expr(s.condition(), &node);
                match s.inline() {
                    Some(inline) => Stmt::If { condition, body: vec![self.stmt(inline)], inline: true },
                    None => Stmt::If { condition, body: self.block(s.body()), inline: false },
                }
            }
            ast::Stmt::PushStmt(s) => {
                let value = self.opt_expr(s.value(), &node);
                let role = s.role().map(|r| Name::from(r.text()));
                let target = self.place(s.target(), &node);
                Stmt::Push { value, role, target }
            }
            ast::Stmt::EscalateStmt(s) => Stmt::Escalate { message: s.message().and_then(|m| m.string()) },
            ast::Stmt::LogStmt(s) => Stmt::Log(self.opt_expr(s.value(), &node)),
            ast::Stmt::NotifyStmt(s) => Stmt::Notify(self.opt_expr(s.value(), &node)),
            ast::Stmt::ExprStmt(s) => match s.expr() {
                Some(e) => Stmt::Expr(self.expr(e)),
                None => Stmt::Missing,
            },
            ast::Stmt::FailureBlock(s) => Stmt::OnFailure { body: self.block(s.body()) },
            ast::Stmt::ContinueStmt(_) => Stmt::Continue,
            ast::Stmt::BreakStmt(_) => Stmt::Break,
            ast::Stmt::AbortStmt(_) => Stmt::Abort,
            ast::Stmt::RetryStepStmt(s) => Stmt::RetryStep(self.opt_expr(s.value(), &node)),
            ast::Stmt::MaskStmt(s) => match s.guardrail() {
                Some(g) => Stmt::Mask { guardrail: self.named_token(&g) },
                None => Stmt::Missing,
            },
            ast::Stmt::BlockStmt(s) => Stmt::Block { condition: self.opt_expr(s.condition(), &node) },
            ast::Stmt::WarnStmt(s) => Stmt::Warn {
                condition: s.condition().map(|c| self.expr(c)),
                message: s.message().and_then(|m| m.string()),
            },
            ast::Stmt::RetryWithStmt(s) => {
                let message = self.opt_expr(s.message(), &node);
                let condition = self.opt_expr(s.condition(), &node);
                Stmt::RetryWith { message, condition }
            }
        };
        self.alloc_stmt(lowered, &node)
    }

    fn on_escalate(&mut self, e: ast::OnEscalate) -> OnEscalate {
        match e.action().map(|a| a.kind()) {
            Some(SyntaxKind::CONTINUE_KW) => OnEscalate::Continue,
            Some(SyntaxKind::ABORT_KW) => OnEscalate::Abort,
            _ => OnEscalate::Return(self.opt_expr(e.value(), e.syntax())),
        }
    }

    fn expr(&mut self, expr: ast::Expr) -> ExprId {
        let range = expr.syntax().text_range();
        let lowered = match expr {
            ast::Expr::Var(var) => return self.var(&var),
            ast::Expr::PropertyExpr(p) => {
                let base = self.opt_expr(p.receiver(), p.syntax());
                let field = p.field().map(|f| Name::from(f.text())).unwrap_or_default();
                Expr::Field { base, field }
            }
            ast::Expr::ImplicitProperty(p) => Expr::ItemField(p.path().into_iter().map(Name::from).collect()),
            ast::Expr::Literal(lit) => match lit.value() {
                Some(LiteralValue::String(text) | LiteralValue::Interpolated(text)) => {
                    if has_interpolation(&text) {
                        let start = range.start() + TextSize::from(1);
                        Expr::Template(parse_template(&text, start, &mut self.map.parts))
                    } else {
                        Expr::Literal(Literal::String(text))
                    }
                }
                Some(LiteralValue::Int(n)) => Expr::Literal(Literal::Int(n)),
                Some(LiteralValue::Float(_)) => {
                    Expr::Literal(Literal::Float(lit.token().map(|t| t.text().to_string()).unwrap_or_default()))
                }
                Some(LiteralValue::Bool(b)) => Expr::Literal(Literal::Bool(b)),
                Some(LiteralValue::Null) => Expr::Literal(Literal::Null),
                None => Expr::Missing,
            },
            ast::Expr::InitialPrompt(_) => Expr::InitialPrompt,
            ast::Expr::ListExpr(list) => Expr::List(list.items().map(|i| self.expr(i)).collect()),
            ast::Expr::ObjectExpr(obj) => Expr::Object(
                obj.entries()
                    .map(|entry| {
                        let key = entry.key().map(|k| Name::from(k.text())).unwrap_or_default();
                        let value = self.opt_expr(entry.value(), entry.syntax());
                        (key, value)
                    })
                    .collect(),
            ),
            ast::Expr::ParenExpr(p) => return self.opt_expr(p.inner(), p.syntax()),
            ast::Expr::PrefixExpr(p) => {
                let op = match p.op().map(|o| o.kind()) {
                    Some(SyntaxKind::NOT_KW) => UnaryOp::Not,
                    _ => UnaryOp::Neg,
                };
                Expr::Unary { op, operand: self.opt_expr(p.operand(), p.syntax()) }
            }
            ast::Expr::BinExpr(b) => {
                let op = match b.op().map(|o| o.kind()) {
                    Some(SyntaxKind::OR_KW) => BinaryOp::Or,
                    Some(SyntaxKind::AND_KW) => BinaryOp::And,
                    Some(SyntaxKind::EQ2) => BinaryOp::Eq,
                    Some(SyntaxKind::NEQ) => BinaryOp::NotEq,
                    Some(SyntaxKind::LT) => BinaryOp::Lt,
                    Some(SyntaxKind::GT) => BinaryOp::Gt,
                    Some(SyntaxKind::LTEQ) => BinaryOp::LtEq,
                    Some(SyntaxKind::GTEQ) => BinaryOp::GtEq,
                    Some(SyntaxKind::CONTAINS_KW) => BinaryOp::Contains,
                    Some(SyntaxKind::TILDE) => BinaryOp::Similar,
                    Some(SyntaxKind::PLUS) => BinaryOp::Add,
                    Some(SyntaxKind::MINUS) => BinaryOp::Sub,
                    Some(SyntaxKind::STAR) => BinaryOp::Mul,
                    Some(SyntaxKind::SLASH) => BinaryOp::Div,
                    _ => BinaryOp::Rem,
                };
                let lhs = self.opt_expr(b.lhs(), b.syntax());
                let rhs = self.opt_expr(b.rhs(), b.syntax());
                Expr::Binary { op, lhs, rhs }
            }
            ast::Expr::FilterExpr(f) => {
                let list = self.opt_expr(f.list(), f.syntax());
                let condition = self.opt_expr(f.condition(), f.syntax());
                Expr::Filter { list, condition }
            }
            ast::Expr::CallExpr(call) => match (call.callee(), call.receiver()) {
                (Some(callee), _) => {
                    let args = call.args().map(|a| self.expr(a)).collect();
                    Expr::Call { function: Name::from(callee.text()), args }
                }
                (None, Some(ast::Expr::PropertyExpr(p))) => {
                    let receiver = self.opt_expr(p.receiver(), p.syntax());
                    let method = p.field().map(|f| Name::from(f.text())).unwrap_or_default();
                    let args = call.args().map(|a| self.expr(a)).collect();
                    Expr::MethodCall { receiver, method, args }
                }
                _ => Expr::Missing,
            },
        };
        self.alloc_expr(lowered, range)
    }

    /// `$a.b.c` becomes `Field(Field(Var a, b), c)`, each with the range of its
    /// prefix of the token.
    fn var(&mut self, var: &ast::Var) -> ExprId {
        let range = var.syntax().text_range();
        let Some(token) = var.name_token() else { return self.alloc_expr(Expr::Missing, range) };
        let dollar = var.has_dollar();
        let text = token.text();
        let start = token.text_range().start();
        let mut segments = text.split('.');
        let first = segments.next().unwrap_or_default();
        let dotted = text.contains('.');
        let origin = match (dollar, dotted) {
            (true, false) => VarOrigin::Dollar,
            (false, false) => VarOrigin::Bare,
            (true, true) => VarOrigin::DollarDotted,
            (false, true) => VarOrigin::BareDotted,
        };
        let var_range = TextRange::new(range.start(), start + TextSize::of(first));
        let mut id = self.alloc_expr(Expr::Var { name: Name::from(first), origin }, var_range);
        let mut end = start + TextSize::of(first);
        // The parser reported a name with more dots than the nesting limit;
        // walks over fields recurse, so only that many are lowered.
        for segment in segments.take(sr_syntax::MAX_NESTING as usize) {
            end += TextSize::of(segment) + TextSize::from(1);
            id = self
                .alloc_expr(Expr::Field { base: id, field: Name::from(segment) }, TextRange::new(range.start(), end));
        }
        id
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{RootDatabase, file_items};

    #[test]
    fn items_without_a_body_share_one_and_kept_vectors_have_no_spare_room() {
        let mut db = RootDatabase::default();
        let text = "schema S:\n    a: int\n    b: int\n    c: int\nprompt p: \"\"\"x\"\"\"\nagent:\n    instruction p\nflow main:\n    $a = 1\n    $b = 2\n    $c = 3\n    $d = [1, 2, 3, 4, 5]\n    return $d\n";
        let file = db.set_file("/lower/main.sr", text.to_string());
        let items = file_items(&db, file);
        let (flows, others): (Vec<Item>, Vec<Item>) = items.iter().partition(|item| item.kind(&db) == ItemKind::Flow);
        assert_eq!((flows.len(), others.len()), (1, 3));
        let empty = body(&db, others[0]);
        for &item in &others {
            assert!(Arc::ptr_eq(&body(&db, item), &empty), "{:?}", item.kind(&db));
        }
        let flow = body(&db, flows[0]);
        assert!(!Arc::ptr_eq(&flow, &empty));
        assert_eq!((flow.root.len(), flow.root.capacity()), (5, 5));
        for &item in items {
            let map = source_map(&db, item);
            assert_eq!(map.parts.len(), map.parts.capacity(), "{:?}", item.kind(&db));
        }
    }
}
