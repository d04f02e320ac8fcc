//! A session: one persistent driver per agent run. Globals survive from step to step
//! without re-running earlier steps; after a crash or a kill the sandbox is recreated
//! and the completed steps are replayed with their recorded tool results. A
//! stateless session starts a new sandbox for every step instead.

mod step;

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::backend::{Backend, Launch, Limits, RawOutput, Sandbox};
use crate::bridge::{Bridge, Connection};
use crate::policy::{ImportPolicy, ModulePattern, Rejection};
use crate::protocol::{DriverConfig, DriverOutcome, HostMessage};
use crate::tools::Toolbox;
use crate::{Event, Outcome, SandboxError, StepReport, ToolCall, ToolHost, ToolSpec};
use step::{Context, Ending, Executed, Mode};

#[derive(Debug, Clone)]
pub struct SessionConfig {
    pub policy: ImportPolicy,
    pub limits: Limits,
    /// Wall-clock time of one step, not counting its tool calls.
    pub step_timeout: Duration,
    /// How long an interrupted step may take to stop before the sandbox is killed.
    pub kill_grace: Duration,
    /// How long a new sandbox may take to connect.
    pub startup_timeout: Duration,
    pub tool_timeout: Duration,
    /// Bytes of stdout, and of stderr, kept per step.
    pub max_output_bytes: usize,
    /// Largest tool call (or final answer) the code may send.
    pub max_request_bytes: usize,
    /// Largest tool result passed back to the code.
    pub max_result_bytes: usize,
    /// A fresh interpreter for every step: nothing carries over.
    pub stateless: bool,
}

impl Default for SessionConfig {
    fn default() -> SessionConfig {
        SessionConfig {
            policy: ImportPolicy::default(),
            limits: Limits::default(),
            step_timeout: Duration::from_secs(30),
            kill_grace: Duration::from_secs(2),
            startup_timeout: Duration::from_secs(30),
            tool_timeout: Duration::from_secs(120),
            max_output_bytes: 64 << 10,
            max_request_bytes: 1 << 20,
            max_result_bytes: 1 << 20,
            stateless: false,
        }
    }
}

/// Room for the envelope around a tool result.
const REPLY_OVERHEAD: usize = 64 << 10;

pub struct Session {
    backend: Arc<dyn Backend>,
    host: Arc<dyn ToolHost>,
    toolbox: Toolbox,
    config: SessionConfig,
    driver: DriverConfig,
    bridge: Bridge,
    live: Option<Live>,
    history: Vec<Recorded>,
    steps: u32,
}

struct Live {
    sandbox: Box<dyn Sandbox>,
    connection: Connection,
    raw: RawOutput,
}

/// A completed step, kept for replay.
struct Recorded {
    step: u32,
    code: String,
    calls: Vec<ToolCall>,
}

impl Session {
    /// Starts the sandbox; fails if the tools are unusable or it cannot start.
    pub async fn start(
        backend: Arc<dyn Backend>,
        tools: Vec<ToolSpec>,
        host: Arc<dyn ToolHost>,
        config: SessionConfig,
    ) -> Result<Session, SandboxError> {
        let toolbox = Toolbox::new(tools)?;
        let bridge = Bridge::open(backend.socket_access(), config.max_request_bytes + REPLY_OVERHEAD)
            .map_err(|error| SandboxError::Start(format!("cannot create the tool bridge: {error}")))?;
        let driver = driver_config(&config, &toolbox);
        let mut session =
            Session { backend, host, toolbox, config, driver, bridge, live: None, history: Vec::new(), steps: 0 };
        session.live = Some(session.launch().await?);
        Ok(session)
    }

    /// The tool functions' signatures and docstrings, for the system prompt.
    pub fn tool_signatures(&self) -> String {
        self.toolbox.signatures()
    }

    pub fn config(&self) -> &SessionConfig {
        &self.config
    }

    pub fn backend(&self) -> &str {
        self.backend.name()
    }

    /// Checks and runs one step, streaming its events. Errors are only for a sandbox
    /// that cannot be (re)started; everything the code does is in the report.
    pub async fn run(
        &mut self,
        code: &str,
        events: &mut (dyn FnMut(Event) + Send),
    ) -> Result<StepReport, SandboxError> {
        self.steps += 1;
        let step = self.steps;
        let started = Instant::now();
        events(Event::Code { step, code: code.to_string() });
        if let Err(rejection) = self.config.policy.check(code) {
            let outcome = rejected(rejection);
            events(Event::Outcome { step, outcome: outcome.clone() });
            let (stdout, stderr, tool_calls) = (String::new(), String::new(), Vec::new());
            return Ok(StepReport {
                step,
                outcome,
                stdout,
                stderr,
                truncated: 0,
                tool_calls,
                duration: started.elapsed(),
            });
        }

        let mut live = match self.live.take() {
            Some(live) => live,
            None if self.config.stateless => self.launch().await?,
            None => self.revive(events).await?,
        };
        let cx = Context { toolbox: &self.toolbox, host: self.host.as_ref(), config: &self.config };
        let mut run = step::execute(&mut live, &cx, step, code, Mode::Live, events).await;
        let outcome = self.settle(live, &mut run, step, code).await;
        if self.config.stateless {
            // The next step starts a new sandbox with nothing to replay.
            self.history.clear();
            if let Some(mut live) = self.live.take() {
                live.sandbox.kill().await;
            }
        }
        events(Event::Outcome { step, outcome: outcome.clone() });
        Ok(StepReport {
            step,
            outcome,
            truncated: run.stdout.dropped + run.stderr.dropped,
            stdout: run.stdout.text,
            stderr: run.stderr.text,
            tool_calls: run.calls,
            duration: run.duration,
        })
    }

    /// Counts a step that was not run here but served from a recording (a
    /// replay, a resumed run): a later step that does run finds its state, as
    /// after a crash, by a new sandbox replaying the steps with their recorded
    /// tool results. A step that left nothing to replay (refused, timed out,
    /// crashed) is only counted.
    pub async fn served(&mut self, report: &StepReport, code: &str) {
        self.steps += 1;
        let kept = !matches!(
            report.outcome,
            Outcome::SyntaxError { .. }
                | Outcome::PolicyViolation { .. }
                | Outcome::Timeout { .. }
                | Outcome::Crashed { .. }
        );
        if self.config.stateless || !kept {
            return;
        }
        self.history.push(Recorded { step: self.steps, code: code.to_string(), calls: report.tool_calls.clone() });
        if let Some(mut live) = self.live.take() {
            live.sandbox.kill().await;
        }
    }

    /// Stops the sandbox.
    pub async fn close(mut self) {
        if let Some(mut live) = self.live.take() {
            live.sandbox.kill().await;
        }
    }

    /// Keeps a driver that finished the step (recording the step for replay) and
    /// kills one that did not; says what happened.
    async fn settle(&mut self, mut live: Live, run: &mut Executed, step: u32, code: &str) -> Outcome {
        let status = match run.ending {
            // Its last words reach the pipes around the time it exits.
            Ending::Died => tokio::time::timeout(Duration::from_secs(5), live.sandbox.wait())
                .await
                .unwrap_or_else(|_| "it stopped responding".to_string()),
            _ => String::new(),
        };
        let (raw_stdout, raw_stderr) = live.raw.take();
        run.stdout.push(&raw_stdout);
        run.stderr.push(&raw_stderr);
        let final_value = run.final_value.take();
        let ending = std::mem::replace(&mut run.ending, Ending::Died);
        if let Ending::Done(outcome) = ending {
            if !matches!(outcome, DriverOutcome::Timeout) {
                self.history.push(Recorded { step, code: code.to_string(), calls: run.calls.clone() });
            }
            self.live = Some(live);
            return match final_value {
                Some(value) => Outcome::FinalAnswer { value },
                None => translate(outcome, self.config.step_timeout),
            };
        }
        live.sandbox.kill().await;
        match (final_value, ending) {
            (Some(value), _) => Outcome::FinalAnswer { value },
            (None, Ending::Violation(reason)) => Outcome::Crashed { reason },
            (None, Ending::HardTimeout) => Outcome::Timeout { limit: self.config.step_timeout, restarted: true },
            (None, _) => {
                let reason = match raw_stderr.trim() {
                    "" => format!("the interpreter died ({status})"),
                    stderr => format!("the interpreter died ({status}): {}", last_lines(stderr, 5)),
                };
                Outcome::Crashed { reason }
            }
        }
    }

    /// Starts a sandbox and waits for its driver to connect. The future holds
    /// only the parts it needs, not the session, whose live sandbox is not `Sync`.
    fn launch(&self) -> impl Future<Output = Result<Live, SandboxError>> + Send + '_ {
        let Session { backend, bridge, config, driver, .. } = self;
        launch(backend.as_ref(), bridge, config, driver)
    }

    /// A new sandbox with the completed steps replayed from their recordings.
    async fn revive(&mut self, events: &mut (dyn FnMut(Event) + Send)) -> Result<Live, SandboxError> {
        let mut live = self.launch().await?;
        let cx = Context { toolbox: &self.toolbox, host: self.host.as_ref(), config: &self.config };
        let mut diverged = 0;
        for (index, record) in self.history.iter().enumerate() {
            let run =
                step::execute(&mut live, &cx, record.step, &record.code, Mode::Replay(&record.calls), &mut |_| {})
                    .await;
            live.raw.take();
            if !matches!(run.ending, Ending::Done(_)) {
                // The replay itself failed: start clean rather than from a broken state.
                live.sandbox.kill().await;
                live = self.launch().await?;
                events(Event::Restarted { replayed: index, diverged: self.history.len() - index });
                return Ok(live);
            }
            diverged += usize::from(run.diverged);
        }
        events(Event::Restarted { replayed: self.history.len(), diverged });
        Ok(live)
    }
}

fn rejected(rejection: Rejection) -> Outcome {
    match rejection {
        Rejection::Syntax(error) => {
            Outcome::SyntaxError { message: error.message, line: Some(error.line), column: Some(error.column) }
        }
        Rejection::Policy(violations) => {
            let message = violations.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n");
            Outcome::PolicyViolation { message, violations }
        }
    }
}

/// The driver's account of a finished step.
fn translate(outcome: DriverOutcome, limit: Duration) -> Outcome {
    match outcome {
        DriverOutcome::Ok { result } => Outcome::Success { result },
        DriverOutcome::Final => Outcome::FinalAnswer { value: serde_json::Value::Null },
        DriverOutcome::Syntax { message, line, column } => Outcome::SyntaxError { message, line, column },
        DriverOutcome::Policy { message, traceback } => {
            Outcome::PolicyViolation { message: format!("{message}\n{traceback}"), violations: Vec::new() }
        }
        DriverOutcome::ToolError { tool, message } => Outcome::ToolError { tool, message },
        DriverOutcome::Error { kind, message, traceback, line } => {
            Outcome::RuntimeError { exception: kind, message, traceback, line }
        }
        DriverOutcome::Timeout => Outcome::Timeout { limit, restarted: false },
    }
}

fn driver_config(config: &SessionConfig, toolbox: &Toolbox) -> DriverConfig {
    let mut allow = Vec::new();
    let mut allow_subtrees = Vec::new();
    let mut allow_all = false;
    for pattern in config.policy.patterns() {
        match pattern {
            ModulePattern::Exact(name) => allow.push(name.clone()),
            ModulePattern::Subtree(root) => allow_subtrees.push(root.clone()),
            ModulePattern::Any => allow_all = true,
        }
    }
    DriverConfig {
        allow,
        allow_subtrees,
        allow_all,
        allow_open: config.policy.allows_open(),
        stubs: toolbox.module(),
        functions: toolbox.functions(),
        max_output: config.max_output_bytes,
        max_request: config.max_request_bytes,
        max_reply: config.max_result_bytes + REPLY_OVERHEAD,
    }
}

fn last_lines(text: &str, count: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(count)..].join("\n")
}

/// Starts a sandbox and waits for its driver to connect.
async fn launch(
    backend: &dyn Backend,
    bridge: &Bridge,
    config: &SessionConfig,
    driver: &DriverConfig,
) -> Result<Live, SandboxError> {
    let raw = RawOutput::default();
    let waiting = bridge.expect_driver();
    let launch = Launch {
        dir: bridge.dir().to_path_buf(),
        token: bridge.token().to_string(),
        limits: config.limits.clone(),
        output: raw.clone(),
    };
    let mut sandbox = backend.launch(&launch).await?;
    let failed = |what: String, raw: &RawOutput| {
        let (_, stderr) = raw.take();
        let detail = last_lines(stderr.trim(), 10);
        SandboxError::Start(if detail.is_empty() { what } else { format!("{what}: {detail}") })
    };
    let connected = tokio::select! {
        connection = waiting => connection.ok(),
        status = sandbox.wait() => {
            return Err(failed(format!("the {} sandbox stopped at start ({status})", backend.name()), &raw));
        }
        _ = tokio::time::sleep(config.startup_timeout) => None,
    };
    let Some(mut connection) = connected else {
        sandbox.kill().await;
        return Err(failed(format!("the {} sandbox did not connect in time", backend.name()), &raw));
    };
    if connection.send(&HostMessage::Welcome { config: driver }).await.is_err() {
        sandbox.kill().await;
        return Err(failed("the driver hung up during setup".to_string(), &raw));
    }
    Ok(Live { sandbox, connection, raw })
}
