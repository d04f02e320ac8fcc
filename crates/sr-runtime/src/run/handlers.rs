//! Event handlers and guardrail actions around agent runs.
//!
//! | handler | runs | `$message` |
//! |---|---|---|
//! | `on input` (and unknown events) | when an agent receives its input | the input |
//! | `after input` | before each model call | the last user message |
//! | `on output`, `after output` | after each model reply | the reply text |
//! | `on tool-call`, `after tool-call` | before a tool call | the arguments |
//! | `on tool-result`, `after tool-result` | after a tool call | the result |
//!
//! Top-level handlers apply to every agent, handlers inside an agent to that
//! agent. In tool handlers `$event` is `{tool, args, agent[, result]}`.
//! `mask G` rewrites `$message`, `block if …` replaces it with a refusal,
//! `warn …` reports, `retry with M if C` asks the model again with `M`.

use serde_json::{Value, json};
use sr_hir::{Event, Expr, GuardrailAction, StmtId, Timing, VarOrigin};
use sr_llm::{ChatRequest, ChatResponse, Message, Role};

use super::flow::Signal;
use crate::compile::{BodySpec, HandlerSpec};
use crate::eval::{Evaluator, ToolTape};
use crate::event::Payload;
use crate::guardrail;
use crate::run::{ErrorKind, RunError, Runtime, Thread};
use crate::value::{display, truthy};

pub const BLOCKED_INPUT: &str = "Request blocked by guardrail policy.";
pub const BLOCKED_OUTPUT: &str = "Response blocked by guardrail policy.";
/// How often `retry with` may send a reply back.
const MAX_GUARD_RETRIES: u32 = 3;

/// The text a running handler guards, and what its actions decided.
#[derive(Debug, Clone, Default)]
pub struct Guard {
    pub message: String,
    pub blocked: bool,
    pub retry: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Point {
    Input,
    BeforeModel,
    Output,
    ToolCall,
    ToolResult,
}

fn applies(handler: &HandlerSpec, point: Point) -> bool {
    let timing = handler.data.timing;
    match (&handler.data.event, point) {
        (Event::Input | Event::Other(_), Point::Input) => timing == Timing::On,
        (Event::Input, Point::BeforeModel) => timing == Timing::After,
        (Event::Output, Point::Output)
        | (Event::ToolCall, Point::ToolCall)
        | (Event::ToolResult, Point::ToolResult) => true,
        _ => false,
    }
}

impl Runtime {
    fn handlers_for(&self, agent: &str, point: Point) -> Vec<HandlerSpec> {
        self.applicable(agent, point).cloned().collect()
    }

    fn applicable(&self, agent: &str, point: Point) -> impl Iterator<Item = &HandlerSpec> {
        let scoped = self.program.agents.get(agent).map(|a| a.handlers.as_slice()).unwrap_or_default();
        self.program.handlers.iter().chain(scoped).filter(move |h| applies(h, point))
    }

    /// Runs the handlers for `point` on `message`; returns what they left.
    async fn guard(
        &self,
        th: &mut Thread,
        agent: &str,
        point: Point,
        message: String,
        event: Option<Value>,
    ) -> Result<Guard, RunError> {
        let handlers = self.handlers_for(agent, point);
        let mut guard = Guard { message, ..Guard::default() };
        if handlers.is_empty() {
            return Ok(guard);
        }
        let saved = (th.vars.get("message").cloned(), th.vars.get("event").cloned(), th.guard.take());
        for handler in handlers {
            th.vars.insert("message".to_string(), Value::String(guard.message.clone()));
            if let Some(event) = &event {
                th.vars.insert("event".to_string(), event.clone());
            }
            th.guard = Some(guard.clone());
            let outcome = self.run_handler_body(th, &handler.body).await;
            guard = th.guard.take().unwrap_or_default();
            match outcome {
                Ok(_) => {}
                Err(e) => {
                    restore(th, saved);
                    return Err(e);
                }
            }
            if guard.blocked {
                break;
            }
        }
        restore(th, saved);
        Ok(guard)
    }

    /// `on input`: the text an agent receives.
    pub(crate) async fn guard_input(&self, th: &mut Thread, agent: &str, input: String) -> Result<String, RunError> {
        let guard = self.guard(th, agent, Point::Input, input, None).await?;
        if guard.blocked {
            th.emitter.emit(Payload::Warning { message: format!("agent '{agent}': input blocked by a guardrail") });
            return Ok(BLOCKED_INPUT.to_string());
        }
        Ok(guard.message)
    }

    /// `after input` before the call, `on`/`after output` after it (with
    /// `retry with` sending the reply back).
    pub(crate) async fn guarded_model_call(
        &self,
        th: &mut Thread,
        agent: &str,
        mut request: ChatRequest,
    ) -> Result<ChatResponse, RunError> {
        if let Some(last) = request.messages.iter().rposition(|m| m.role == Role::User && !m.text().is_empty()) {
            let guard = self.guard(th, agent, Point::BeforeModel, request.messages[last].text(), None).await?;
            if guard.blocked {
                return Ok(canned(BLOCKED_INPUT));
            }
            if guard.message != request.messages[last].text() {
                request.messages[last] = Message::user(guard.message);
            }
        }
        for _ in 0..=MAX_GUARD_RETRIES {
            let mut response = self.model_call(th, agent, request.clone()).await?;
            let guard = self.guard(th, agent, Point::Output, response.text.clone(), None).await?;
            if guard.blocked {
                th.emitter.emit(Payload::Warning { message: format!("agent '{agent}': reply blocked by a guardrail") });
                return Ok(canned(BLOCKED_OUTPUT));
            }
            match guard.retry {
                Some(feedback) => {
                    request.messages.push(Message::assistant(response.text.clone()));
                    request.messages.push(Message::user(feedback));
                }
                None => {
                    response.text = guard.message;
                    return Ok(response);
                }
            }
        }
        Err(RunError::failed(format!("agent '{agent}': `retry with` kept rejecting the reply"), None))
    }

    /// `on`/`after tool-call`: the arguments a tool gets, or why it was blocked.
    pub(crate) async fn guard_tool_call(
        &self,
        th: &mut Thread,
        agent: &str,
        call: &sr_llm::ToolCall,
    ) -> Result<Result<Value, String>, RunError> {
        // Most programs have no tool handlers: a flow's loop of tool calls
        // does not pay for the handlers' `$event`.
        if self.applicable(agent, Point::ToolCall).next().is_none() {
            return Ok(Ok(call.arguments.clone()));
        }
        let event = json!({"tool": call.name, "args": call.arguments, "agent": agent});
        let text = display(&call.arguments);
        let guard = self.guard(th, agent, Point::ToolCall, text.clone(), Some(event)).await?;
        if guard.blocked {
            return Ok(Err(BLOCKED_INPUT.to_string()));
        }
        if guard.message == text {
            return Ok(Ok(call.arguments.clone()));
        }
        Ok(Ok(serde_json::from_str(&guard.message).unwrap_or(Value::String(guard.message))))
    }

    /// `on`/`after tool-result`: the result the model sees.
    pub(crate) async fn guard_tool_result(
        &self,
        th: &mut Thread,
        agent: &str,
        tool: &str,
        result: Value,
    ) -> Result<Value, RunError> {
        if self.applicable(agent, Point::ToolResult).next().is_none() {
            return Ok(result);
        }
        let event = json!({"tool": tool, "agent": agent, "result": result});
        let text = display(&result);
        let guard = self.guard(th, agent, Point::ToolResult, text.clone(), Some(event)).await?;
        if guard.blocked {
            return Ok(json!({"error": BLOCKED_OUTPUT}));
        }
        if guard.message == text {
            return Ok(result);
        }
        Ok(serde_json::from_str(&guard.message).unwrap_or(Value::String(guard.message)))
    }

    /// `mask`, `block`, `warn` and `retry with` in a handler body. Refuses to
    /// run without a guard, so below it `th.guard` is set ([`GUARDED`]).
    pub(crate) fn exec_guardrail(&self, th: &mut Thread, spec: &BodySpec, id: StmtId) -> Result<Signal, RunError> {
        let location = Some(self.program.stmt_location(&spec.source, id));
        if th.guard.is_none() {
            return Err(RunError::failed(
                "guardrail actions work only in `on`/`after` handlers of agent events",
                location,
            ));
        }
        let eval = |th: &Thread, e| {
            let values = super::values::StatementValues::new(self, th, Vec::new());
            let tape = ToolTape::values_only(&values);
            let value = Evaluator { body: &spec.body, vars: &th.vars, item: None, tools: Some(&tape) }.eval(e);
            values.into_values().map_err(|d| {
                RunError::new(ErrorKind::Diverged, format!("the run diverged from its journal: {d}"), location.clone())
            })?;
            value.map_err(|e| RunError::failed(e.0, location.clone()))
        };
        // `block if jailbreak`: a bare name is a guardrail check on the message.
        let condition = |th: &mut Thread, e: sr_hir::ExprId| -> Result<bool, RunError> {
            if let Expr::Var { name, origin: VarOrigin::Bare } = &spec.body.exprs[e]
                && !th.vars.contains_key(name.as_str())
            {
                let message = th.guard.as_ref().expect(GUARDED).message.clone();
                return Ok(match guardrail::check(name, &message) {
                    Some(flagged) => flagged,
                    None => {
                        th.emitter.emit(Payload::Warning {
                            message: format!("guardrail '{name}' is not enforced by this runtime: it never triggers"),
                        });
                        false
                    }
                });
            }
            Ok(truthy(&eval(th, e)?))
        };
        // Every other kind of statement is the flow interpreter's (`exec_stmt_here`).
        let Some(action) = spec.body.stmts[id].guardrail_action() else { return Ok(Signal::Next) };
        match action {
            GuardrailAction::Mask(name) => {
                let message = th.guard.as_ref().expect(GUARDED).message.clone();
                match guardrail::mask(&name.name, &message) {
                    Some(masked) => {
                        th.vars.insert("message".to_string(), Value::String(masked.clone()));
                        th.guard.as_mut().expect(GUARDED).message = masked;
                    }
                    None => {
                        th.emitter.emit(Payload::Warning { message: format!("guardrail '{}' cannot mask", name.name) })
                    }
                }
            }
            GuardrailAction::Block { condition: c } => {
                if condition(th, c)? {
                    th.guard.as_mut().expect(GUARDED).blocked = true;
                    return Ok(Signal::Return(Value::Null));
                }
            }
            GuardrailAction::Warn { condition: c, message } => {
                let triggered = match c {
                    Some(c) => condition(th, c)?,
                    None => true,
                };
                if triggered {
                    let message = message.unwrap_or("Warning condition triggered").to_string();
                    th.emitter.emit(Payload::Warning { message });
                }
            }
            GuardrailAction::RetryWith { message, condition: c } => {
                if condition(th, c)? {
                    let feedback = display(&eval(th, message)?);
                    th.guard.as_mut().expect(GUARDED).retry = Some(feedback);
                }
            }
        }
        Ok(Signal::Next)
    }
}

fn restore(th: &mut Thread, (message, event, guard): (Option<Value>, Option<Value>, Option<Guard>)) {
    for (name, value) in [("message", message), ("event", event)] {
        match value {
            Some(v) => th.vars.insert(name.to_string(), v),
            None => th.vars.shift_remove(name),
        };
    }
    th.guard = guard;
}

/// A reply made up by a guardrail instead of a model.
fn canned(text: &str) -> ChatResponse {
    ChatResponse {
        text: text.to_string(),
        tool_calls: Vec::new(),
        usage: sr_llm::Usage::default(),
        finish_reason: sr_llm::FinishReason::Stop,
    }
}

/// Why `th.guard` is set in `exec_guardrail` after its first check.
const GUARDED: &str = "exec_guardrail returned early without a guard";
