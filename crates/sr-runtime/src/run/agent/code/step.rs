//! A coding agent's step as an effect in the journal (`journal::CODE_STEP`):
//! a live step runs in the agent's session and is journaled with what it
//! did; a served one (a replay, a resumed run, the debugger going back in
//! time) does not run: its events are emitted from the journal, the tool
//! calls its code made are made again through the journal (served: the
//! hooks, handlers and events see them, no tool runs), and the files are put
//! as the step left them. A step a crash cut off is a call in doubt like any
//! tool's that is not idempotent: run again (`retry`, its calls that were
//! made are served), or not (`skip`: the model reads that it was cut off).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use futures::FutureExt;
use futures::future::BoxFuture;
use serde_json::{Value, json};
use sr_llm::ToolSpec as LlmToolSpec;
use sr_sandbox::{Outcome, SandboxError, Session, StepReport};

use super::{CodeTurns, Request, forward};
use crate::event::{Emitter, Payload};
use crate::journal::{CODE_STEP, Divergence, ToolStop};
use crate::run::executor::describe;
use crate::run::{ErrorKind, RunError, Runtime, Thread};
use crate::tools::{Report, Tool, ToolError};

/// The agent's session, as the tool the journal calls for a live step.
pub(super) struct CodeStep {
    session: Mutex<Option<Session>>,
    emitter: Emitter,
    /// The tool calls that reached the thread during the live step, in order.
    reached: Mutex<Vec<(String, Value)>>,
    /// The journal called it: the step ran here.
    ran: AtomicBool,
}

impl CodeStep {
    pub(super) fn new(session: Session, emitter: Emitter) -> CodeStep {
        CodeStep { session: Mutex::new(Some(session)), emitter, reached: Mutex::default(), ran: AtomicBool::new(false) }
    }

    fn take(&self) -> Option<Session> {
        self.session.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).take()
    }

    fn put(&self, session: Session) {
        *self.session.lock().unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(session);
    }

    /// The session counts a step served from the journal.
    async fn served(&self, report: &StepReport, code: &str) {
        if let Some(mut session) = self.take() {
            session.served(report, code).await;
            self.put(session);
        }
    }

    pub(super) async fn close(&self) {
        if let Some(session) = self.take() {
            session.close().await;
        }
    }
}

impl Tool for CodeStep {
    fn spec(&self) -> LlmToolSpec {
        LlmToolSpec {
            name: CODE_STEP.to_string(),
            description: "A coding agent's step: its code, run in its sandbox.".to_string(),
            parameters: json!({"type": "object"}),
        }
    }

    /// `{report, reached}`: the step's report and which of its tool calls
    /// reached the thread (those a replay makes again), or `{sandbox_error}`.
    fn call(&self, args: Value) -> BoxFuture<'_, Result<Value, ToolError>> {
        async move {
            self.ran.store(true, Ordering::Relaxed);
            let code = args["code"].as_str().unwrap_or_default().to_string();
            let Some(mut session) = self.take() else {
                return Ok(json!({"sandbox_error": "the sandbox was stopped"}));
            };
            let emitter = self.emitter.clone();
            let report = session.run(&code, &mut |event| forward(&emitter, event)).await;
            self.put(session);
            let report = match report {
                Ok(report) => report,
                Err(e) => return Ok(json!({"sandbox_error": e.to_string()})),
            };
            let reached = std::mem::take(&mut *self.reached.lock().unwrap_or_else(|poisoned| poisoned.into_inner()));
            let mut next = reached.iter().peekable();
            let mut indices = Vec::new();
            for (index, call) in report.tool_calls.iter().enumerate() {
                if next.next_if(|(tool, args)| *tool == call.tool && *args == call.args).is_some() {
                    indices.push(index);
                }
            }
            Ok(json!({"report": report, "reached": indices}))
        }
        .boxed()
    }
}

impl Runtime {
    /// Step `code` of the coding agent: run, or served from the journal.
    /// The error is one that stops the run.
    pub(super) async fn code_step(
        &self,
        th: &mut Thread,
        cx: &mut CodeTurns<'_>,
        step: &CodeStep,
        code: String,
    ) -> Result<Result<StepReport, SandboxError>, RunError> {
        cx.steps += 1;
        let at = th.next_effect();
        let args = json!({"agent": cx.name, "step": cx.steps, "code": code});
        let silent: Report = Arc::new(|_| {});
        let journal = &self.env.journal;
        step.ran.store(false, Ordering::Relaxed);
        let called = self.serving(th, cx, step, journal.tool(&at, step, args.clone(), &silent)).await;
        let called = match called {
            Ok(Err(ToolStop::InDoubt(question))) => {
                th.emitter.emit(Payload::ToolInDoubt {
                    tool: question.tool.clone(),
                    args: question.args.clone(),
                    idempotency_key: question.idempotency_key.clone(),
                });
                self.serving(th, cx, step, journal.resolve(&at, step, question, &silent)).await
            }
            other => other,
        };
        let called = match called {
            Ok(called) => called,
            Err(stop) => {
                if stop.kind == ErrorKind::Diverged && step.ran.load(Ordering::Relaxed) {
                    // The run's error matters more than a failed write of it.
                    let _ = journal.stopped_step(&at, &args, &stop.message);
                }
                return Err(stop);
            }
        };
        let (name, number) = (cx.name, cx.steps);
        let value = called.map_err(|stop| {
            let stop = match stop {
                ToolStop::Diverged(d) => {
                    ToolStop::Diverged(Divergence(format!("coding agent '{name}', step {number}: {d}")))
                }
                other => other,
            };
            self.stopped(th, stop)
        })?;
        let ran = step.ran.load(Ordering::Relaxed);
        let value = match value {
            Ok(value) => value,
            // Cut off by a crash and not run again (its calls made are
            // passed over), or not journaled.
            Err(ToolError(message)) => {
                if !ran {
                    th.effects.fetch_max(journal.past_cut_off_step(&at), Ordering::Relaxed);
                }
                let report = StepReport {
                    step: number,
                    outcome: Outcome::Crashed { reason: message },
                    stdout: String::new(),
                    stderr: String::new(),
                    truncated: 0,
                    tool_calls: Vec::new(),
                    duration: std::time::Duration::ZERO,
                };
                if !ran {
                    emit_served(&th.emitter, &code, &report);
                    step.served(&report, &code).await;
                }
                return Ok(Ok(report));
            }
        };
        if let Some(error) = value.get("sandbox_error").and_then(Value::as_str) {
            return Ok(Err(SandboxError::Start(error.to_string())));
        }
        let unreadable = |e: serde_json::Error| {
            self.diverged(
                th,
                Divergence(format!("coding agent '{name}', step {number}: the journal's step cannot be read: {e}")),
            )
        };
        let report: StepReport = serde_json::from_value(value["report"].clone()).map_err(unreadable)?;
        if ran {
            return Ok(Ok(report));
        }
        // Served: what the step did, again, without running it.
        th.emitter.emit(Payload::CodeStarted { step: report.step, code: code.clone() });
        let reached: Vec<usize> = serde_json::from_value(value["reached"].clone()).unwrap_or_default();
        for index in reached {
            let Some(call) = report.tool_calls.get(index) else { continue };
            // Served: the result is the one the report holds.
            let _served = self.code_tool_call(th, cx, call.tool.clone(), call.args.clone()).await?;
        }
        emit_finished(&th.emitter, &report);
        journal
            .settle_code(&at, th.effects.load(Ordering::Relaxed))
            .map_err(|e| RunError::failed(format!("coding agent '{name}': {e}"), None))?;
        step.served(&report, &code).await;
        Ok(Ok(report))
    }

    /// Awaits `work` (the journal running or serving a step) while answering
    /// the requests of the step's code.
    async fn serving<T>(
        &self,
        th: &mut Thread,
        cx: &mut CodeTurns<'_>,
        step: &CodeStep,
        work: impl Future<Output = T>,
    ) -> Result<T, RunError> {
        tokio::pin!(work);
        loop {
            tokio::select! {
                done = &mut work => return Ok(done),
                Some(request) = cx.requests.recv() => {
                    if let Request::Tool(tool, args, _) = &request {
                        step.reached.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).push((tool.clone(), args.clone()));
                    }
                    self.serve_code(th, cx, request).await?;
                }
            }
        }
    }
}

/// The events of a step that was not run: its start and its end.
fn emit_served(emitter: &Emitter, code: &str, report: &StepReport) {
    emitter.emit(Payload::CodeStarted { step: report.step, code: code.to_string() });
    emit_finished(emitter, report);
}

/// A served step's output and outcome, as the live step emitted them.
fn emit_finished(emitter: &Emitter, report: &StepReport) {
    for (stream, text) in [("stdout", &report.stdout), ("stderr", &report.stderr)] {
        if !text.is_empty() {
            emitter.emit(Payload::CodeOutput { step: report.step, stream: stream.to_string(), text: text.clone() });
        }
    }
    emitter.emit(Payload::CodeFinished {
        step: report.step,
        outcome: report.outcome.kind().to_string(),
        is_error: report.outcome.is_error(),
        message: describe(&report.outcome),
    });
}
