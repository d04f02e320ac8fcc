//! Coding agents (`executor NAME` on an agent): the model answers with Python
//! that calls the agent's tools as functions; the code runs in the executor's
//! sandbox and the model sees what happened, until the code calls
//! `final_answer`. The sandbox's loop asks for model replies, tool results and
//! the running of its steps over channels, and this module serves them on the
//! agent's thread, so model calls and tool calls get the same hooks,
//! guardrails, events, recording and policies as everywhere else, and each
//! step is an effect in the journal (`step`). What stops the run (a
//! divergence from the journal, a terminate) stops the code too: the code
//! never sees it, so no `try`/`except` in it can catch it.

mod step;

use std::sync::Arc;

use futures::FutureExt;
use serde_json::Value;
use sr_hir::ExecutorData;
use sr_llm::{ChatRequest, Message, ToolCall, ToolSpec as LlmToolSpec};
use sr_sandbox::{
    AgentError, BoxFuture, CodeAgent, CodeModel, Event as SandboxEvent, ModelError, Role, SandboxError, Session,
    SessionConfig, StepReport, Steps, ToolError, ToolHost, ToolSpec,
};
use tokio::sync::{mpsc, oneshot};

use super::Callable;
use crate::event::{Emitter, Payload};
use crate::run::executor::{backend, describe, session_config};
use crate::run::{ErrorKind, RunError, Runtime, Thread};
use step::CodeStep;

/// What the sandbox's loop needs from the agent's thread.
pub(super) enum Request {
    Reply(Vec<sr_sandbox::Message>, oneshot::Sender<Result<String, ModelError>>),
    Tool(String, Value, oneshot::Sender<Result<Value, ToolError>>),
    Step(String, oneshot::Sender<Result<StepReport, SandboxError>>),
}

/// The seams of the sandbox's loop (its model, its tools, where its steps
/// run), as messages to the agent's thread.
struct Channel(mpsc::UnboundedSender<Request>);

impl CodeModel for Channel {
    fn next<'a>(&'a self, transcript: &'a [sr_sandbox::Message]) -> BoxFuture<'a, Result<String, ModelError>> {
        let (reply, answer) = oneshot::channel();
        let sent = self.0.send(Request::Reply(transcript.to_vec(), reply));
        async move {
            sent.map_err(|_| ModelError("the agent stopped".to_string()))?;
            answer.await.unwrap_or_else(|_| Err(ModelError("the agent stopped".to_string())))
        }
        .boxed()
    }
}

impl ToolHost for Channel {
    fn call<'a>(&'a self, name: &'a str, args: Value) -> BoxFuture<'a, Result<Value, ToolError>> {
        let (reply, answer) = oneshot::channel();
        let sent = self.0.send(Request::Tool(name.to_string(), args, reply));
        async move {
            sent.map_err(|_| ToolError("the agent stopped".to_string()))?;
            answer.await.unwrap_or_else(|_| Err(ToolError("the agent stopped".to_string())))
        }
        .boxed()
    }
}

/// The loop's steps go to the agent's thread, which journals them
/// (`step`): the session they run in is the thread's.
struct StepsOnThread {
    channel: Arc<Channel>,
    config: SessionConfig,
    signatures: String,
}

impl Steps for StepsOnThread {
    fn config(&self) -> &SessionConfig {
        &self.config
    }

    fn tool_signatures(&self) -> String {
        self.signatures.clone()
    }

    fn run<'a>(
        &'a mut self,
        code: &'a str,
        _events: &'a mut (dyn FnMut(SandboxEvent) + Send),
    ) -> BoxFuture<'a, Result<StepReport, SandboxError>> {
        let (reply, answer) = oneshot::channel();
        let sent = self.channel.0.send(Request::Step(code.to_string(), reply));
        let stopped = || SandboxError::Start("the agent stopped".to_string());
        async move {
            sent.map_err(|_| stopped())?;
            answer.await.unwrap_or_else(|_| Err(stopped()))
        }
        .boxed()
    }
}

/// A coding agent's run on its thread: what serving the loop's requests needs.
pub(super) struct CodeTurns<'a> {
    pub name: &'a str,
    pub model: &'a str,
    pub callables: &'a [(String, Callable)],
    pub requests: mpsc::UnboundedReceiver<Request>,
    /// Tool calls the code made (`code_call_N`).
    pub calls: u32,
    /// The steps run, served or not.
    pub steps: u32,
}

impl Runtime {
    /// Runs coding agent `name` on `input`; the result is its final answer as text
    /// (JSON for structured values).
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn code_turns(
        &self,
        th: &mut Thread,
        name: &str,
        executor: &ExecutorData,
        model: &str,
        system: Option<String>,
        input: String,
        callables: &[(String, Callable)],
        specs: Vec<LlmToolSpec>,
    ) -> Result<String, RunError> {
        let failed = |what: String| RunError::failed(format!("coding agent '{name}': {what}"), None);
        let backend = backend(executor, self.env.options.allow_unsandboxed).await.map_err(&failed)?;
        let tools: Vec<ToolSpec> = specs
            .into_iter()
            .filter(|s| callables.iter().any(|(n, c)| *n == s.name && !matches!(c, Callable::Transfer(_))))
            .map(|s| ToolSpec { name: s.name, description: s.description, parameters: s.parameters })
            .collect();
        let (sender, requests) = mpsc::unbounded_channel();
        let channel = Arc::new(Channel(sender));
        let config = session_config(executor).map_err(&failed)?;
        let session =
            Session::start(backend, tools, channel.clone(), config).await.map_err(|e| failed(e.to_string()))?;
        let mut steps = StepsOnThread {
            channel: channel.clone(),
            config: session.config().clone(),
            signatures: session.tool_signatures(),
        };
        let session = CodeStep::new(session, th.emitter.clone());
        let examples = match &executor.examples {
            Some(prompt) => crate::eval::render_prompt(&prompt.name, &self.program.prompts, &th.vars, 0)
                .map_err(|e| failed(format!("its examples: {}", e.0)))?,
            None => String::new(),
        };
        let agent = CodeAgent {
            instructions: system.unwrap_or_default(),
            examples,
            max_iterations: executor.max_steps.map_or(20, |n| n.min(u32::MAX as u64) as u32),
            max_consecutive_errors: executor.max_errors.map_or(3, |n| n.min(u32::MAX as u64) as u32),
        };
        let mut cx = CodeTurns { name, model, callables, requests, calls: 0, steps: 0 };
        let outcome = {
            // The loop's own events (replies) are the model calls' events already.
            let mut unforwarded = |_| {};
            let run = agent.run(&mut steps, channel.as_ref(), &input, &mut unforwarded);
            tokio::pin!(run);
            loop {
                tokio::select! {
                    outcome = &mut run => break Ok(outcome),
                    Some(request) = cx.requests.recv() => {
                        let served = match request {
                            Request::Step(code, reply) => self.code_step(th, &mut cx, &session, code).await.map(|report| {
                                let _ = reply.send(report);
                            }),
                            other => self.serve_code(th, &mut cx, other).await,
                        };
                        // What stops the run stops the code at once: the sandbox's
                        // loop, and a step in progress with its sandbox, are dropped.
                        if let Err(stop) = served {
                            break Err(stop);
                        }
                    },
                }
            }
        };
        session.close().await;
        match outcome? {
            Ok(answer) => Ok(match answer.value {
                Value::String(text) => text,
                other => other.to_string(),
            }),
            Err(AgentError::Model(e)) => Err(RunError::failed(e.0, None)),
            Err(e) => Err(failed(e.to_string())),
        }
    }

    /// Answers a model or tool request of the sandbox's loop. An error is one
    /// that stops the run (a divergence from the journal, a terminate, a call
    /// in doubt): the code does not see it, so it cannot catch it.
    pub(super) async fn serve_code(
        &self,
        th: &mut Thread,
        cx: &mut CodeTurns<'_>,
        request: Request,
    ) -> Result<(), RunError> {
        match request {
            Request::Reply(transcript, reply) => {
                let answer = self.code_reply(th, cx.name, cx.model, transcript).await?;
                let _ = reply.send(Ok(answer));
            }
            Request::Tool(tool, args, reply) => {
                let result = self.code_tool_call(th, cx, tool, args).await?;
                let _ = reply.send(result.map_err(ToolError));
            }
            // Steps come one at a time, from the loop the thread is serving.
            Request::Step(_, reply) => {
                let _ = reply.send(Err(SandboxError::Start("a step is already running".to_string())));
            }
        }
        Ok(())
    }

    /// A tool call made by the agent's code: its result, or its failure as
    /// the code sees it (`ToolError`); an error stops the run.
    pub(super) async fn code_tool_call(
        &self,
        th: &mut Thread,
        cx: &mut CodeTurns<'_>,
        tool: String,
        args: Value,
    ) -> Result<Result<Value, String>, RunError> {
        cx.calls += 1;
        let call = ToolCall::new(format!("code_call_{}", cx.calls), tool, args);
        match self.tool_call(th, cx.name, &call, cx.callables).await {
            Ok(r) if r.is_error => Ok(Err(crate::value::display(&r.content))),
            Ok(r) => Ok(Ok(r.content)),
            // A `use` agent that failed is the code's to handle, as a tool's failure.
            Err(e) if e.kind == ErrorKind::Failed => Ok(Err(e.to_string())),
            Err(mut e) => {
                if e.kind == ErrorKind::Diverged {
                    e.message = format!(
                        "{} (the call of tool '{}' made by the code of coding agent '{}', step {})",
                        e.message, call.name, cx.name, cx.steps
                    );
                }
                Err(e)
            }
        }
    }

    /// One model reply for the sandbox's loop.
    async fn code_reply(
        &self,
        th: &mut Thread,
        name: &str,
        model: &str,
        transcript: Vec<sr_sandbox::Message>,
    ) -> Result<String, RunError> {
        let mut system = None;
        let mut messages = Vec::new();
        for message in transcript {
            match message.role {
                Role::System => system = Some(message.content),
                Role::User => messages.push(Message::user(message.content)),
                Role::Assistant => messages.push(Message::assistant(message.content)),
            }
        }
        let settings = self.program.models.values().find(|m| m.id == model);
        let request = ChatRequest {
            model: model.to_string(),
            system,
            messages,
            tools: Vec::new(),
            response_schema: None,
            temperature: settings.and_then(|s| s.temperature),
            max_tokens: settings.and_then(|s| s.max_tokens),
        };
        Ok(self.guarded_model_call(th, name, request).await?.text)
    }
}

/// Sandbox events as run events. Replies and tool calls are not forwarded:
/// the model and tool calls made for them emit their own events.
pub(super) fn forward(emitter: &Emitter, event: SandboxEvent) {
    let payload = match event {
        SandboxEvent::Code { step, code } => Payload::CodeStarted { step, code },
        SandboxEvent::Output { step, stream, text } => {
            let stream = match stream {
                sr_sandbox::Stream::Stdout => "stdout",
                sr_sandbox::Stream::Stderr => "stderr",
            };
            Payload::CodeOutput { step, stream: stream.to_string(), text }
        }
        SandboxEvent::Outcome { step, outcome } => Payload::CodeFinished {
            step,
            outcome: outcome.kind().to_string(),
            is_error: outcome.is_error(),
            message: describe(&outcome),
        },
        SandboxEvent::Restarted { replayed, diverged } => Payload::Warning {
            message: format!(
                "the sandbox was restarted and {replayed} earlier steps replayed ({diverged} did not repeat exactly)"
            ),
        },
        SandboxEvent::Reply { .. } | SandboxEvent::ToolCall { .. } | SandboxEvent::ToolResult { .. } => return,
    };
    emitter.emit(payload);
}
