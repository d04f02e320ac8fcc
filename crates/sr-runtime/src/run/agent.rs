//! Agents: an LLM tool-calling loop. `use` offers other agents as tools (the
//! parent gets their answer back); `delegate` offers a `transfer_to_agent` tool
//! that hands the conversation to another agent, whose answer is the result.
//! Agents run the same way whether they are the entry point or run from a flow.

use std::collections::HashSet;
use std::sync::Arc;

use futures::StreamExt;
use serde_json::{Value, json};
use sr_llm::{ChatEvent, ChatRequest, ChatResponse, Message, Part, Role, ToolCall, ToolResult, ToolSpec};

use crate::event::{Payload, Usage};
use crate::hook::{Control, Failure, Frame, FrameKind, StepPoint};
use crate::journal::{Divergence, EffectAt, ToolStop};
use crate::run::{ErrorKind, RunError, Runtime, Thread};
use crate::structured;
use crate::tools::{Tool, builtin_tools};
use crate::value::{display, from_model_text};
use sr_hir::tool_functions::{STATE, ToolKind};

/// The tool `delegate` adds.
const TRANSFER: &str = "transfer_to_agent";
/// How deep agents may use and delegate to agents (upstream cuts self-use at 3).
const MAX_DEPTH: usize = 8;

mod code;

/// The error of the `agent_finished` of an agent run that was cancelled.
const CANCELLED: &str = "cancelled";

/// Emits `agent_finished` with the error `cancelled` when dropped armed.
struct CancelledGuard<'a> {
    emitter: Option<crate::event::Emitter>,
    agent: &'a str,
}

impl Drop for CancelledGuard<'_> {
    fn drop(&mut self) {
        if let Some(emitter) = self.emitter.take() {
            emitter.emit(Payload::AgentFinished {
                agent: self.agent.to_string(),
                output: Value::Null,
                usage: Usage::default(),
                error: Some(CANCELLED.to_string()),
            });
        }
    }
}

/// What an agent (or a flow's tool function call) can call in one run.
pub(crate) enum Callable {
    Tool(Arc<dyn Tool>),
    /// `use`: the agent runs with the request and its answer comes back.
    Agent(String),
    /// `delegate`: the conversation moves to one of these agents.
    Transfer(Vec<String>),
    /// A function of `streetrace.state` (`run::state_tool`).
    State,
}

/// Messages from a flow's `history $var` list: `{role, content}` objects; role
/// `user` is the user, anything else the agent; other values are user text.
pub fn history_messages(history: &Value) -> Vec<Message> {
    let Value::Array(items) = history else { return Vec::new() };
    items
        .iter()
        .map(|item| match item {
            Value::Object(map) => {
                let content = map.get("content").map(display).unwrap_or_default();
                match map.get("role").and_then(Value::as_str) {
                    Some("user") => Message::user(content),
                    _ => Message::assistant(content),
                }
            }
            other => Message::user(display(other)),
        })
        .collect()
}

impl Runtime {
    /// Runs `name` on `input` after `history`; the result is its final answer,
    /// parsed as JSON when it is JSON (validated when the instruction prompt
    /// expects a schema).
    pub(crate) async fn run_agent(
        &self,
        th: &mut Thread,
        name: &str,
        input: String,
        history: Vec<Message>,
    ) -> Result<Value, RunError> {
        let text = self.agent_turns(th, name, input, history).await?;
        self.agent_result(th, name, text).await
    }

    /// The loop; returns the final text.
    fn agent_turns<'a>(
        &'a self,
        th: &'a mut Thread,
        name: &'a str,
        input: String,
        history: Vec<Message>,
    ) -> futures::future::BoxFuture<'a, Result<String, RunError>> {
        Box::pin(async move {
            if !self.program.agents.contains_key(name) {
                return Err(RunError::failed(format!("agent '{name}' does not exist"), None));
            }
            if th.frames.iter().filter(|f| f.kind == FrameKind::Agent).count() >= MAX_DEPTH {
                return Err(RunError::failed(
                    format!("agents call each other more than {MAX_DEPTH} levels deep (at '{name}')"),
                    None,
                ));
            }
            let model = self.agent_model(th, name)?;
            let system = self.instruction(th, name)?;
            let (callables, specs) = self.agent_tools(th, name).await;
            let outer = th.enter(format!("agent:{name}"));
            th.frames.push(Frame {
                kind: FrameKind::Agent,
                name: name.to_string(),
                body: None,
                stmt: None,
                location: None,
                last_exchange: None,
            });
            th.emitter.emit(Payload::AgentStarted {
                agent: name.to_string(),
                model: model.clone(),
                input: input.clone(),
            });
            th.agent_usage.push(Usage::default());
            // If this future is dropped half-way (a failed parallel branch, a
            // timeout around it), the agent still gets its `agent_finished`.
            let mut cancelled = CancelledGuard { emitter: Some(th.emitter.clone()), agent: name };
            let input = self.guard_input(th, name, input).await;
            let executor =
                self.program.agents[name].data.executor.as_ref().and_then(|e| self.program.executors.get(&e.name));
            let outcome = match (input, executor) {
                (Ok(input), Some(executor)) => {
                    let outcome = self.code_turns(th, name, executor, &model, system, input, &callables, specs).await;
                    // A code agent's exchange is its sandbox's; none to repair with.
                    th.last_conversation = None;
                    outcome
                }
                (Ok(input), None) => {
                    let mut messages = history;
                    messages.push(Message::user(input));
                    self.bounded_turns(th, name, &model, system, messages, &callables, specs).await
                }
                (Err(e), _) => Err(e),
            };
            let usage = th.agent_usage.pop().unwrap_or_default();
            let (output, error) = match &outcome {
                Ok(text) => (Value::String(text.clone()), None),
                Err(e) => (Value::Null, Some(e.to_string())),
            };
            cancelled.emitter = None;
            th.emitter.emit(Payload::AgentFinished { agent: name.to_string(), output, usage, error });
            th.frames.pop();
            th.leave(outer);
            outcome
        })
    }

    /// The loop under the agent's timeout policy: a run that times out is
    /// unwound and, while the retry policy allows, started again.
    #[allow(clippy::too_many_arguments)]
    async fn bounded_turns(
        &self,
        th: &mut Thread,
        name: &str,
        model: &str,
        system: Option<String>,
        messages: Vec<Message>,
        callables: &[(String, Callable)],
        tools: Vec<ToolSpec>,
    ) -> Result<String, RunError> {
        let policy = self.agent_policy(name);
        let Some(limit) = policy.timeout else {
            return self.turns(th, name, model, system, messages, callables, tools).await;
        };
        let mut attempt = 0;
        loop {
            let mark = th.mark();
            let run = self.turns(th, name, model, system.clone(), messages.clone(), callables, tools.clone());
            if let Ok(outcome) = tokio::time::timeout(limit, run).await {
                return outcome;
            }
            th.unwind(mark);
            let error = format!("agent '{name}' did not finish within {}s, its timeout", limit.as_secs());
            if attempt >= policy.retries() {
                return Err(RunError::failed(error, None));
            }
            attempt += 1;
            let what = format!("agent '{name}'");
            self.before_retry(th, &what, "timed out", (attempt, policy.retries()), policy.delay(attempt, None)).await;
        }
    }

    #[allow(clippy::too_many_arguments)]
    async fn turns(
        &self,
        th: &mut Thread,
        name: &str,
        model: &str,
        system: Option<String>,
        mut messages: Vec<Message>,
        callables: &[(String, Callable)],
        tools: Vec<ToolSpec>,
    ) -> Result<String, RunError> {
        let spec = &self.program.agents[name];
        let settings = self.program.models.values().find(|m| m.id == model);
        let response_schema =
            self.instruction_expecting(name).and_then(|e| structured::native_schema(&self.program, &e));
        for _ in 0..self.env.options.max_turns {
            messages = self.compact(th, name, model, system.as_deref(), messages).await?;
            let request = ChatRequest {
                model: model.to_string(),
                system: system.clone(),
                messages: messages.clone(),
                tools: tools.clone(),
                response_schema: response_schema.clone(),
                temperature: settings.and_then(|s| s.temperature),
                max_tokens: settings.and_then(|s| s.max_tokens),
            };
            let response = self.guarded_model_call(th, name, request).await?;
            if response.tool_calls.is_empty() {
                th.last_conversation = Some(messages);
                return Ok(response.text);
            }
            messages.push(Message {
                role: Role::Assistant,
                content: std::iter::once(Part::text(response.text.clone()))
                    .filter(|p| !matches!(p, Part::Text { text } if text.is_empty()))
                    .chain(response.tool_calls.iter().cloned().map(Part::ToolCall))
                    .collect(),
            });
            let mut results = Vec::new();
            for call in &response.tool_calls {
                if let Some(Callable::Transfer(targets)) =
                    callables.iter().find(|(n, _)| n == &call.name).map(|(_, c)| c)
                {
                    let target =
                        call.arguments.get("agent_name").and_then(Value::as_str).unwrap_or_default().to_string();
                    if targets.contains(&target) {
                        th.emitter.emit(Payload::Transfer { from: name.to_string(), to: target.clone() });
                        // The other agent takes over the conversation: it answers
                        // the user's last message with what came before as history.
                        let mut history = messages.clone();
                        history.pop();
                        let last_user = history
                            .iter()
                            .rposition(|m| m.role == Role::User)
                            .map(|i| history.remove(i).text())
                            .unwrap_or_default();
                        return self.agent_turns(th, &target, last_user, history).await;
                    }
                    results.push(ToolResult {
                        call_id: call.id.clone(),
                        name: call.name.clone(),
                        content: json!(format!("unknown agent '{target}'; choose one of: {}", targets.join(", "))),
                        is_error: true,
                    });
                    continue;
                }
                results.push(self.tool_call(th, spec.name.as_str(), call, callables).await?);
            }
            messages.push(Message::tool_results(results));
        }
        Err(RunError::failed(
            format!("agent '{name}' did not finish within {} model turns", self.env.options.max_turns),
            None,
        ))
    }

    /// One model call: hook, request event, live text deltas, response event.
    pub(crate) async fn model_call(
        &self,
        th: &mut Thread,
        agent: &str,
        request: ChatRequest,
    ) -> Result<ChatResponse, RunError> {
        let step = th.step(&self.program, StepPoint::ModelCall { agent, request: &request });
        let control = self.env.hook.on_step(step).await;
        let (request, given) = match self.obey(th, control)? {
            Control::Replace(edited) => (*edited, None),
            Control::Reply(given) => (request, Some(*given)),
            _ => (request, None),
        };
        th.emitter.emit(Payload::ModelRequest {
            model: request.model.clone(),
            messages: request.messages.len(),
            tools: request.tools.iter().map(|t| t.name.clone()).collect(),
        });
        let request_json = serde_json::to_value(&request).unwrap_or(Value::Null);
        let policy = self.call_policy(th);
        let mut attempt = 0;
        let (at, response) = if let Some(given) = given {
            self.given_reply(th, &request, given)
        } else {
            loop {
                let at = th.next_effect();
                match self.stream_reply(th, agent, &at, &request).await? {
                    Ok(response) => break (at, response),
                    Err(e) if e.is_retryable() && attempt < policy.retries() => {
                        attempt += 1;
                        let delay = policy.delay(attempt, e.retry_after());
                        let what = format!("model {}", request.model);
                        self.before_retry(th, &what, &e.to_string(), (attempt, policy.retries()), delay).await;
                    }
                    Err(e) => {
                        let error = RunError::failed(format!("model {}: {e}", request.model), None);
                        self.report_failure(th, StepPoint::ModelCall { agent, request: &request }, &error).await?;
                        return Err(error);
                    }
                }
            }
        };
        let step = th.step(&self.program, StepPoint::ModelReply { agent, request: &request, response: &response });
        let control = self.env.hook.on_step(step).await;
        let response = match self.obey(th, control)? {
            Control::Reply(edited) => {
                // The thread's journal goes on from the reply it was given,
                // so that going back and forth keeps it.
                if let Err(message) = self.env.journal.replace_reply(&at, &request, &edited) {
                    th.emitter.emit(Payload::Warning { message: message.to_string() });
                }
                *edited
            }
            _ => response,
        };
        let usage = self.charge(th, &request.model, &response.usage);
        th.emitter.emit(Payload::ModelResponse {
            model: request.model.clone(),
            text: response.text.clone(),
            tool_calls: response.tool_calls.iter().map(|c| c.name.clone()).collect(),
            finish_reason: response.finish_reason.as_str().to_string(),
            usage,
        });
        if let Some(frame) = th.frames.iter_mut().rev().find(|f| f.kind == FrameKind::Agent) {
            frame.last_exchange = Some(
                json!({"request": request_json, "response": {"text": response.text, "tool_calls": response.tool_calls}}),
            );
        }
        Ok(response)
    }

    /// The reply the hook gave at a call's [`StepPoint::ModelCall`]: the
    /// call is neither sent nor served from the journal, the reply streams
    /// as its text (so a fork never shows the reply it replaced), and the
    /// thread's journal goes on from it.
    fn given_reply(&self, th: &mut Thread, request: &ChatRequest, given: ChatResponse) -> (EffectAt, ChatResponse) {
        let at = th.next_effect();
        if let Err(message) = self.env.journal.replace_reply(&at, request, &given) {
            th.emitter.emit(Payload::Warning { message: message.to_string() });
        }
        if !given.text.is_empty() {
            th.emitter.emit(Payload::TextDelta { text: given.text.clone() });
        }
        (at, given)
    }

    /// Sends `request`, streaming the reply's text as events. When the hook
    /// interrupts the call (a debugger's pause), the thread stops at once,
    /// before the first byte or between two deltas, with the reply so far;
    /// the same call goes on when the hook returns. `Err` when the hook ends the run.
    async fn stream_reply(
        &self,
        th: &mut Thread,
        agent: &str,
        at: &EffectAt,
        request: &ChatRequest,
    ) -> Result<Result<ChatResponse, sr_llm::LlmError>, RunError> {
        let mut stream = self.env.journal.chat(at, request, &self.env.provider).map_err(|d| self.diverged(th, d))?;
        let mut events = Vec::new();
        let mut partial = String::new();
        loop {
            let item = match futures::future::select(stream.next(), self.env.hook.interrupt(th.id)).await {
                futures::future::Either::Left((item, _)) => item,
                futures::future::Either::Right(((), _)) => {
                    let step = th.step(&self.program, StepPoint::ModelStreaming { agent, request, partial: &partial });
                    let control = self.env.hook.on_step(step).await;
                    self.obey(th, control)?;
                    continue;
                }
            };
            let Some(item) = item else { break };
            let item = match item {
                Ok(item) => item,
                Err(e) => return Ok(Err(e)),
            };
            match item {
                ChatEvent::TextDelta(text) => {
                    th.emitter.emit(Payload::TextDelta { text: text.clone() });
                    partial.push_str(&text);
                    ChatEvent::TextDelta(text).append_to(&mut events);
                }
                ChatEvent::Retrying { attempt, error, delay_ms } => th.emitter.emit(Payload::Warning {
                    message: format!(
                        "model {}: attempt {attempt} failed ({error}); retrying in {:.1}s",
                        request.model,
                        delay_ms as f64 / 1000.0
                    ),
                }),
                other => events.push(other),
            }
        }
        Ok(ChatResponse::from_events(events))
    }

    /// One tool call: hook, events, and the result the model sees. A tool's
    /// failure is the model's business (an error result), not the run's.
    pub(crate) async fn tool_call(
        &self,
        th: &mut Thread,
        agent: &str,
        call: &ToolCall,
        callables: &[(String, Callable)],
    ) -> Result<ToolResult, RunError> {
        let step = th.step(&self.program, StepPoint::ToolCall { tool: &call.name, args: &call.arguments });
        let control = self.env.hook.on_step(step).await;
        self.obey(th, control)?;
        th.emitter.emit(Payload::ToolCall {
            call_id: call.id.clone(),
            tool: call.name.clone(),
            args: call.arguments.clone(),
        });
        let args = self.guard_tool_call(th, agent, call).await?;
        let (content, is_error) = if let Some(error) = &call.arguments_error {
            (json!(error), true)
        } else {
            match (args, callables.iter().find(|(n, _)| n == &call.name).map(|(_, c)| c)) {
                (Err(blocked), _) => (json!(blocked), true),
                (Ok(_), None) => (json!(format!("there is no tool named '{}'", call.name)), true),
                (Ok(args), Some(Callable::Tool(tool))) => {
                    let at = th.next_effect();
                    let journal = &self.env.journal;
                    let report: crate::tools::Report = {
                        let (emitter, call_id, name) = (th.emitter.clone(), call.id.clone(), call.name.clone());
                        Arc::new(move |update: crate::tools::Update| {
                            emitter.emit(Payload::RemoteUpdate {
                                call_id: call_id.clone(),
                                tool: name.clone(),
                                task_id: update.task_id,
                                state: update.state,
                                text: update.text,
                            })
                        })
                    };
                    let called = match journal.tool(&at, tool.as_ref(), args, &report).await {
                        Err(ToolStop::InDoubt(question)) => {
                            th.emitter.emit(Payload::ToolInDoubt {
                                tool: question.tool.clone(),
                                args: question.args.clone(),
                                idempotency_key: question.idempotency_key.clone(),
                            });
                            journal.resolve(&at, tool.as_ref(), question, &report).await
                        }
                        other => other,
                    };
                    for message in journal.take_warnings(&at) {
                        th.emitter.emit(Payload::Warning { message: format!("journal: {message}") });
                    }
                    match called.map_err(|stop| self.stopped(th, stop))? {
                        Ok(value) => (value, false),
                        Err(e) => (json!(e.0), true),
                    }
                }
                (Ok(args), Some(Callable::Agent(sub))) => {
                    let request = args.get("request").map(display).unwrap_or_else(|| display(&args));
                    let answer = self.agent_turns(th, sub, request, Vec::new()).await?;
                    (Value::String(answer), false)
                }
                (Ok(args), Some(Callable::State)) => self.state_call(th, &call.name, &args),
                // The model's transfers are handled by the turn loop; code cannot transfer.
                (Ok(_), Some(Callable::Transfer(_))) => {
                    (json!(format!("'{}' hands the conversation over; only the model can call it", call.name)), true)
                }
            }
        };
        let mut content = self.guard_tool_result(th, agent, &call.name, content).await?;
        // A tool that echoes a secret (an MCP server quoting its auth header)
        // does not hand it to the model.
        th.emitter.redactor().redact_value(&mut content);
        th.emitter.emit(Payload::ToolResult {
            call_id: call.id.clone(),
            tool: call.name.clone(),
            result: content.clone(),
            is_error,
        });
        // An error result, or a builtin tool's `{"result": "failure"}`: the
        // model handles it, the hook hears of it at the call.
        if is_error || content.get("result").and_then(Value::as_str) == Some("failure") {
            let message = display(content.get("error").unwrap_or(&content));
            let step = th.step(&self.program, StepPoint::ToolCall { tool: &call.name, args: &call.arguments });
            let control = self.env.hook.on_failure(step, Failure { message: &message, caught: true }).await;
            self.obey(th, control)?;
        }
        Ok(ToolResult { call_id: call.id.clone(), name: call.name.clone(), content, is_error })
    }

    /// The tools of MCP server `name`, with its warning the first time; a
    /// replay waits at a server its recorded run never listed, to be
    /// cancelled as the recorded run was.
    pub(crate) async fn mcp_tools(&self, th: &Thread, name: &str) -> (Vec<Arc<dyn Tool>>, Option<String>) {
        if self.env.mcp.never_listed(name) {
            return self.env.journal.parked(&th.key).await;
        }
        self.env.mcp.use_tools(name).await
    }

    /// The tools of an agent: builtin, MCP and remote A2A agents' tools, `use`
    /// agents, and the transfer tool for `delegate`.
    async fn agent_tools(&self, th: &Thread, name: &str) -> (Vec<(String, Callable)>, Vec<ToolSpec>) {
        let spec = &self.program.agents[name];
        let mut callables: Vec<(String, Callable)> = Vec::new();
        let mut seen = HashSet::new();
        for tool_ref in &spec.data.tools {
            let data = self.program.tools.get(&tool_ref.name);
            let kind = ToolKind::of(&tool_ref.name, data);
            if kind == ToolKind::State {
                for function in STATE {
                    if seen.insert(function.name.to_string()) {
                        callables.push((function.name.to_string(), Callable::State));
                    }
                }
                continue;
            }
            let mut tools = match kind {
                ToolKind::A2a => {
                    data.and_then(|data| self.env.mcp.a2a_tool(&tool_ref.name, data)).into_iter().collect()
                }
                ToolKind::Mcp => {
                    let (tools, warning) = self.mcp_tools(th, &tool_ref.name).await;
                    if let Some(message) = warning {
                        th.emitter.emit(Payload::Warning { message });
                    }
                    tools
                }
                ToolKind::Fs | ToolKind::FsReadonly | ToolKind::Cli | ToolKind::State | ToolKind::None => {
                    builtin_tools(&tool_ref.name, data, &self.env.jail, &self.env.options)
                }
            };
            // A tool named like one function of its module (YAML agents'
            // `{module, function}`) gives that function only.
            if tools.iter().any(|t| t.spec().name == tool_ref.name.as_str()) {
                tools.retain(|t| t.spec().name == tool_ref.name.as_str());
            }
            for tool in tools {
                let tool_name = tool.spec().name;
                if seen.insert(tool_name.clone()) {
                    callables.push((tool_name, Callable::Tool(tool)));
                }
            }
        }
        for used in &spec.data.use_ {
            if self.program.agents.contains_key(&used.name) && seen.insert(used.name.to_string()) {
                callables.push((used.name.to_string(), Callable::Agent(used.name.to_string())));
            }
        }
        // A remote A2A agent in `use` or `delegate` is a tool: its answer
        // comes back to this agent (a remote cannot take the conversation over).
        for remote in spec.data.use_.iter().chain(&spec.data.delegate) {
            if !self.program.agents.contains_key(&remote.name)
                && let Some(data) = self.program.tools.get(&remote.name)
                && let Some(tool) = self.env.mcp.a2a_tool(&remote.name, data)
                && seen.insert(remote.name.to_string())
            {
                callables.push((remote.name.to_string(), Callable::Tool(tool)));
            }
        }
        let delegates: Vec<String> = spec
            .data
            .delegate
            .iter()
            .filter(|d| self.program.agents.contains_key(&d.name))
            .map(|d| d.name.to_string())
            .collect();
        if !delegates.is_empty() {
            callables.push((TRANSFER.to_string(), Callable::Transfer(delegates)));
        }
        let specs = callables
            .iter()
            .filter_map(|(tool_name, callable)| match callable {
                Callable::State => self.state_spec(th, tool_name),
                Callable::Tool(tool) => Some(tool.spec()),
                Callable::Agent(agent) => Some(ToolSpec {
                    name: tool_name.clone(),
                    description: self.program.agents[agent.as_str()]
                        .data
                        .description
                        .clone()
                        .unwrap_or_else(|| format!("Agent: {agent}")),
                    parameters: json!({
                        "type": "object",
                        "properties": {"request": {"type": "string", "description": "What to ask the agent."}},
                        "required": ["request"],
                    }),
                }),
                Callable::Transfer(targets) => Some(ToolSpec {
                    name: TRANSFER.to_string(),
                    description: format!(
                        "Hand the conversation over to another agent who answers the user: {}",
                        targets
                            .iter()
                            .map(|t| format!(
                                "'{t}' ({})",
                                self.program.agents[t.as_str()]
                                    .data
                                    .description
                                    .clone()
                                    .unwrap_or_else(|| format!("Agent: {t}"))
                            ))
                            .collect::<Vec<_>>()
                            .join("; ")
                    ),
                    parameters: json!({
                        "type": "object",
                        "properties": {"agent_name": {"type": "string", "enum": targets}},
                        "required": ["agent_name"],
                    }),
                }),
            })
            .collect();
        (callables, specs)
    }

    /// The agent's instruction, rendered with the run's variables (prompt
    /// composition included), plus the output schema when it expects one.
    fn instruction(&self, th: &Thread, name: &str) -> Result<Option<String>, RunError> {
        let spec = &self.program.agents[name];
        let Some(instruction) = &spec.data.instruction else { return Ok(None) };
        let mut text = crate::eval::render_prompt(&instruction.name, &self.program.prompts, &th.vars, 0)
            .map_err(|e| RunError::failed(format!("instruction of agent '{name}': {}", e.0), None))?;
        if let Some(expecting) = self.program.prompts.get(&instruction.name).and_then(|p| p.expecting.clone()) {
            text.push_str(&structured::instruction_suffix(&self.program, &expecting));
        }
        Ok(Some(text))
    }

    /// Parses an agent's final text: validated against the instruction
    /// prompt's schema (asking the agent to repair it when it does not fit),
    /// else JSON when it is JSON, else the text.
    /// What the agent's instruction prompt expects its answers to be.
    fn instruction_expecting(&self, name: &str) -> Option<sr_hir::Expecting> {
        let instruction = self.program.agents[name].data.instruction.as_ref()?;
        self.program.prompts.get(&instruction.name)?.expecting.clone()
    }

    async fn agent_result(&self, th: &mut Thread, name: &str, text: String) -> Result<Value, RunError> {
        let Some(expecting) = self.instruction_expecting(name) else { return Ok(from_model_text(&text)) };
        let mut text = text;
        for attempt in 0..=structured::MAX_REPAIRS {
            match structured::parse(&self.program, &expecting, &text) {
                Ok(value) => return Ok(value),
                Err(problem) if attempt < structured::MAX_REPAIRS => {
                    th.emitter.emit(Payload::Warning {
                        message: format!(
                            "agent '{name}': the reply does not fit schema '{}': {problem}",
                            expecting.schema.name
                        ),
                    });
                    // The whole exchange goes back: the task, the tool calls and
                    // results, the reply that does not fit, and what is wrong.
                    let repair = structured::repair_message(&problem);
                    let mut history = th.last_conversation.take().unwrap_or_default();
                    history.push(Message::assistant(text.clone()));
                    text = self.agent_turns(th, name, repair, history).await?;
                }
                Err(problem) => {
                    return Err(RunError::failed(
                        format!(
                            "agent '{name}' did not produce a valid '{}' after {} repairs: {problem}",
                            expecting.schema.name,
                            structured::MAX_REPAIRS
                        ),
                        None,
                    ));
                }
            }
        }
        unreachable!()
    }
}

impl Runtime {
    /// A served run asked for something other than its journal recorded:
    /// the run stops where it is (no `on failure:` handles it).
    /// The run's error for a tool call the journal did not let through.
    fn stopped(&self, th: &Thread, stop: ToolStop) -> RunError {
        let location = th.frames.iter().rev().find_map(|f| f.location.clone());
        match stop {
            ToolStop::Diverged(divergence) => self.diverged(th, divergence),
            // No `on failure:` handles it: the files would not be the recorded ones.
            ToolStop::Unrestorable(why) => RunError::new(ErrorKind::Diverged, why, location),
            // Not asked (the caller asks): kept for completeness of the match.
            ToolStop::InDoubt(question) | ToolStop::Undecided(question) => {
                self.pause(th);
                RunError::new(ErrorKind::Paused, format!("in doubt: {}", question.describe()), location)
            }
            // No `on failure:` handles it: the decision was to fail the run.
            ToolStop::Failed(question) => RunError::new(
                ErrorKind::Aborted,
                format!(
                    "the call of tool '{}' (idempotency key {}) was cut off when the run was interrupted, \
                     and the decision was to fail the run",
                    question.tool, question.idempotency_key
                ),
                location,
            ),
        }
    }

    pub(crate) fn diverged(&self, th: &Thread, divergence: Divergence) -> RunError {
        let location = th.frames.iter().rev().find_map(|f| f.location.clone());
        RunError::new(ErrorKind::Diverged, format!("the run diverged from its journal: {divergence}"), location)
    }
}
