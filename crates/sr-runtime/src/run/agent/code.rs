//! Coding agents (`executor NAME` on an agent): the model answers with Python
//! that calls the agent's tools as functions; the code runs in the executor's
//! sandbox and the model sees what happened, until the code calls
//! `final_answer`. The sandbox's loop asks for model replies and tool results
//! over channels, and this module serves them on the agent's thread, so model
//! calls and tool calls get the same hooks, guardrails, events, recording and
//! policies as everywhere else.

use std::sync::Arc;

use futures::FutureExt;
use serde_json::Value;
use sr_hir::ExecutorData;
use sr_llm::{ChatRequest, Message, ToolCall, ToolSpec as LlmToolSpec};
use sr_sandbox::{
    AgentError, BoxFuture, CodeAgent, CodeModel, Event as SandboxEvent, ModelError, Role, Session, ToolError, ToolHost,
    ToolSpec,
};
use tokio::sync::{mpsc, oneshot};

use super::Callable;
use crate::event::{Emitter, Payload};
use crate::run::executor::{backend, describe, session_config};
use crate::run::{RunError, Runtime, Thread};

/// What the sandbox's loop needs from the agent's thread.
enum Request {
    Reply(Vec<sr_sandbox::Message>, oneshot::Sender<Result<String, ModelError>>),
    Tool(String, Value, oneshot::Sender<Result<Value, ToolError>>),
}

/// Both seams of the sandbox's loop, as messages to the agent's thread.
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
        let (sender, mut requests) = mpsc::unbounded_channel();
        let channel = Arc::new(Channel(sender));
        let config = session_config(executor).map_err(&failed)?;
        let mut session =
            Session::start(backend, tools, channel.clone(), config).await.map_err(|e| failed(e.to_string()))?;
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
        let emitter = th.emitter.clone();
        let mut on_event = move |event: SandboxEvent| forward(&emitter, event);
        let mut calls = 0;
        let outcome = {
            let run = agent.run(&mut session, channel.as_ref(), &input, &mut on_event);
            tokio::pin!(run);
            loop {
                tokio::select! {
                    outcome = &mut run => break outcome,
                    Some(request) = requests.recv() => match request {
                        Request::Reply(transcript, reply) => {
                            let answer = self.code_reply(th, name, model, transcript).await;
                            let _ = reply.send(answer);
                        }
                        Request::Tool(tool, args, reply) => {
                            calls += 1;
                            let call = ToolCall::new(format!("code_call_{calls}"), tool, args);
                            let result = self.tool_call(th, name, &call, callables).await;
                            let _ = reply.send(match result {
                                Ok(r) if r.is_error => Err(ToolError(crate::value::display(&r.content))),
                                Ok(r) => Ok(r.content),
                                Err(e) => Err(ToolError(e.to_string())),
                            });
                        }
                    },
                }
            }
        };
        session.close().await;
        match outcome {
            Ok(answer) => Ok(match answer.value {
                Value::String(text) => text,
                other => other.to_string(),
            }),
            Err(AgentError::Model(e)) => Err(RunError::failed(e.0, None)),
            Err(e) => Err(failed(e.to_string())),
        }
    }

    /// One model reply for the sandbox's loop.
    async fn code_reply(
        &self,
        th: &mut Thread,
        name: &str,
        model: &str,
        transcript: Vec<sr_sandbox::Message>,
    ) -> Result<String, ModelError> {
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
        match self.guarded_model_call(th, name, request).await {
            Ok(response) => Ok(response.text),
            Err(e) => Err(ModelError(e.to_string())),
        }
    }
}

/// Sandbox events as run events. Replies and tool calls are not forwarded:
/// the model and tool calls made for them emit their own events.
fn forward(emitter: &Emitter, event: SandboxEvent) {
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
