//! A run: the program, its environment (provider, tools, hook, options), the
//! threads that execute it, and how runs fail.

mod agent;
mod compaction;
mod conversation;
mod executor;
mod flow;
mod flow_tools;
mod handlers;
pub mod human;
mod llm;
mod policy;
mod state_tool;
mod usage;
mod values;

use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::Value;
use sr_hir::start::EntryKind;

use crate::compile::{Compiled, Entry};
use crate::eval::Vars;
use crate::event::{Emitter, Location, Payload, RunStatus};
use crate::hook::{Frame, Step, StepHook, StepPoint};
use crate::journal::EffectAt;
use crate::tools::Jail;

/// Knobs of a run.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// Used when an agent's prompt names no model and there is no model `main`
    /// (upstream's `--model`).
    pub default_model: Option<String>,
    /// Forces every model call to this model (local models, tests).
    pub override_model: Option<String>,
    /// Model turns an agent may take before the run fails.
    pub max_turns: u32,
    /// Prices for the cost of model calls; none by default.
    pub prices: Option<Arc<sr_llm::PriceTable>>,
    /// Start at this flow, agent or prompt (in that order of precedence;
    /// `flow:NAME`, `agent:NAME`, `prompt:NAME` name one kind, see
    /// `sr_hir::start::EntryName`) instead of the workload's entry point. A
    /// prompt is one `call llm` of it, with `vars`: what `sr try` runs.
    pub entry: Option<String>,
    /// Variables the run starts with, before any flow or agent assigns one
    /// (`sr try`'s inputs, an eval case's `vars`).
    pub vars: Vars,
    /// Let cli tools declared `streetrace.cli.host` run on the host (`sr run
    /// --allow-host-tools`); without it they fail.
    pub allow_host_tools: bool,
    /// Let coding agents use `backend: unsandboxed` (`sr run --allow-unsandboxed`);
    /// without it they fail.
    pub allow_unsandboxed: bool,
    /// How long one cli tool command may run before it is killed.
    pub command_timeout: std::time::Duration,
    /// Paths in the work directory (relative to it) that the run's tools may
    /// read but not change: what the server put there for the workload to
    /// read as given (A2A's context file), which a model must not forge.
    pub protected: Vec<std::path::PathBuf>,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            default_model: None,
            override_model: None,
            max_turns: 25,
            prices: None,
            entry: None,
            vars: Vars::new(),
            allow_host_tools: false,
            allow_unsandboxed: false,
            command_timeout: std::time::Duration::from_secs(120),
            protected: Vec::new(),
        }
    }
}

/// What a run needs from the outside world. Every value the run observes
/// from outside its program goes through the journal, which serves it from
/// a recording or gets it live (from the provider, a tool, the clock) and
/// records it.
pub struct Env {
    /// Answers model requests the journal does not serve.
    pub provider: Arc<dyn sr_llm::Provider>,
    pub hook: Arc<dyn StepHook>,
    pub jail: Jail,
    /// The program's MCP servers, connected on first use (or their recorded listings).
    pub mcp: Arc<crate::mcp::McpHub>,
    pub journal: Arc<crate::journal::Journal>,
    pub human: Arc<dyn human::Human>,
    pub options: RunOptions,
}

/// Executes one program.
pub struct Runtime {
    pub program: Arc<Compiled>,
    pub env: Env,
    next_thread: AtomicU32,
    pub(crate) accounts: usage::Accounts,
    /// The tool functions flows called, by `tool.function` (`run::flow_tools`).
    pub(crate) flow_functions: Mutex<HashMap<String, FlowFunction>>,
}

/// A tool function as a flow calls it: how it is declared, and what runs.
pub(crate) type FlowFunction = (Arc<sr_llm::ToolSpec>, Arc<dyn crate::tools::Tool>);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// Something went wrong (an undefined variable, a provider error, …).
    Failed,
    /// `abort`, or `on escalate abort`.
    Aborted,
    /// The hook stopped the run (a debugger's terminate).
    Terminated,
    /// `escalate to human` without an interactive answer: the run can resume.
    Paused,
    /// A served run asked for something other than its journal recorded
    /// (`journal::Divergence`): no `on failure:` handles it.
    Diverged,
}

#[derive(Debug, Clone, PartialEq)]
pub struct RunError {
    pub kind: ErrorKind,
    pub message: String,
    pub location: Option<Location>,
}

impl RunError {
    pub fn new(kind: ErrorKind, message: impl Into<String>, location: Option<Location>) -> RunError {
        RunError { kind, message: message.into(), location }
    }

    pub fn failed(message: impl Into<String>, location: Option<Location>) -> RunError {
        RunError::new(ErrorKind::Failed, message, location)
    }

    /// Adds a location if the error has none yet.
    pub fn at(mut self, location: Option<Location>) -> RunError {
        if self.location.is_none() {
            self.location = location;
        }
        self
    }
}

impl std::fmt::Display for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.location {
            Some(at) => write!(f, "{} ({}:{}:{})", self.message, at.file, at.line, at.column),
            None => f.write_str(&self.message),
        }
    }
}

/// A line of execution: the main one, or a `parallel` branch. It owns its
/// call stack and (a copy of) the run's variables.
pub struct Thread {
    pub id: u32,
    /// The thread's name in the journal: `main`, or `PARENT/N.I` for branch
    /// `I` of the `parallel` block that was effect `N` of thread `PARENT`.
    pub(crate) key: Arc<str>,
    /// How many effects the thread has had (its next effect's number).
    pub(crate) effects: std::sync::atomic::AtomicU32,
    pub vars: Vars,
    pub frames: Vec<Frame>,
    pub emitter: Emitter,
    /// What a running event handler guards (`mask`, `block` act on it).
    pub guard: Option<handlers::Guard>,
    /// Usage of the agent runs in progress on this thread, outermost first.
    pub(crate) agent_usage: Vec<crate::event::Usage>,
    /// The messages before the final reply of the agent run that just ended
    /// (task, tool calls and results), for a structured-output repair.
    pub(crate) last_conversation: Option<Vec<sr_llm::Message>>,
    /// The value of the running flow's last `run agent`, `call llm` or tool function step: the
    /// flow's result when it ends without `return`.
    pub(crate) last_result: Option<Value>,
    /// `exit_loop()` was called: the innermost loop ends after the statement.
    pub(crate) exit_loop: bool,
    /// How many `on failure:` blocks guard what the thread runs now.
    pub(crate) guarded: u32,
    /// The failure being unwound was reported to the hook already.
    pub(crate) failure_reported: bool,
    next_thread: Arc<AtomicU32>,
}

impl Thread {
    /// The hook's view of this thread at `point`, placed at the innermost
    /// frame that has a location.
    pub(crate) fn step<'a>(&'a mut self, program: &'a Compiled, point: StepPoint<'a>) -> Step<'a> {
        let location = self.frames.iter().rev().find_map(|f| f.location.clone());
        self.step_at(program, point, location)
    }

    /// The hook's view of this thread at `point`, placed at `location`.
    pub(crate) fn step_at<'a>(
        &'a mut self,
        program: &'a Compiled,
        point: StepPoint<'a>,
        location: Option<Location>,
    ) -> Step<'a> {
        Step {
            program,
            thread: self.id,
            thread_key: &self.key,
            frames: &self.frames,
            vars: &mut self.vars,
            point,
            location,
        }
    }

    pub fn new(vars: Vars, emitter: Emitter) -> Thread {
        Thread {
            id: 0,
            key: "main".into(),
            effects: Default::default(),
            vars,
            frames: Vec::new(),
            emitter,
            guard: None,
            agent_usage: Vec::new(),
            last_conversation: None,
            last_result: None,
            exit_loop: false,
            guarded: 0,
            failure_reported: false,
            next_thread: Arc::new(AtomicU32::new(1)),
        }
    }

    /// Branch `index` of the parallel block at `block` (an effect of this
    /// thread): a new thread id (or the `recorded` one it had), the same
    /// stack, a copy of the variables, its events passing through the
    /// block's `gate`.
    pub(crate) fn branch(
        &self,
        block: &EffectAt,
        index: u32,
        gate: &Arc<crate::event::Gate>,
        recorded: Option<u32>,
    ) -> Thread {
        let id = recorded.unwrap_or_else(|| self.next_thread.fetch_add(1, Ordering::Relaxed));
        Thread {
            id,
            key: format!("{}/{}.{index}", block.thread, block.n).into(),
            effects: Default::default(),
            vars: self.vars.clone(),
            frames: self.frames.clone(),
            emitter: self.emitter.child(crate::event::thread_name(id)).gated(gate.clone(), index),
            guard: None,
            agent_usage: Vec::new(),
            last_conversation: None,
            last_result: None,
            exit_loop: false,
            guarded: self.guarded,
            failure_reported: false,
            next_thread: self.next_thread.clone(),
        }
    }

    /// New thread ids are above `last` (the highest a journal serves).
    pub(crate) fn reserve_threads(&self, last: u32) {
        self.next_thread.fetch_max(last.saturating_add(1), Ordering::Relaxed);
    }

    /// The place of the thread's next effect in the journal.
    pub(crate) fn next_effect(&self) -> EffectAt {
        EffectAt { thread: self.key.clone(), n: self.effects.fetch_add(1, Ordering::Relaxed) }
    }

    /// Where the thread is, so that work cancelled half-way (a timeout) can be
    /// unwound: the frames, agent runs and event path it had opened.
    pub(crate) fn mark(&self) -> ThreadMark {
        ThreadMark {
            frames: self.frames.len(),
            agent_usage: self.agent_usage.len(),
            emitter: self.emitter.clone(),
            guard: self.guard.clone(),
        }
    }

    pub(crate) fn unwind(&mut self, mark: ThreadMark) {
        self.frames.truncate(mark.frames);
        self.agent_usage.truncate(mark.agent_usage);
        self.emitter = mark.emitter;
        self.guard = mark.guard;
    }

    /// Extends the event path; returns the previous emitter for `leave`.
    pub fn enter(&mut self, segment: String) -> Emitter {
        let child = self.emitter.child(segment);
        std::mem::replace(&mut self.emitter, child)
    }

    pub fn leave(&mut self, outer: Emitter) {
        self.emitter = outer;
    }
}

pub(crate) struct ThreadMark {
    frames: usize,
    agent_usage: usize,
    emitter: Emitter,
    guard: Option<handlers::Guard>,
}

/// What a run starts at: the program's entry point or `RunOptions::entry`.
enum Start<'a> {
    Flow(&'a str),
    Agent(&'a str),
    Prompt(&'a str),
}

/// How a whole run ended.
#[derive(Debug, Clone, PartialEq)]
pub struct RunOutcome {
    pub status: RunStatus,
    pub result: Option<Value>,
    pub error: Option<RunError>,
}

impl Runtime {
    pub fn new(program: Arc<Compiled>, env: Env) -> Runtime {
        Runtime {
            program,
            env,
            next_thread: AtomicU32::new(1),
            accounts: Default::default(),
            flow_functions: Default::default(),
        }
    }

    /// Runs the workload's entry point with the user's message. `history` is
    /// the conversation so far (for an agent entry in a continued session).
    pub async fn run(&self, emitter: Emitter, input: String, history: Vec<sr_llm::Message>) -> RunOutcome {
        let entry = match self.env.options.entry.as_deref().map(|e| (e, self.program.resolve_entry(e))) {
            Some((_, Some((EntryKind::Flow, name)))) => Some(Start::Flow(name)),
            Some((_, Some((EntryKind::Agent, name)))) => Some(Start::Agent(name)),
            Some((_, Some((EntryKind::Prompt, name)))) => Some(Start::Prompt(name)),
            Some((name, None)) => {
                return self.refuse(&emitter, format!("there is no flow, agent or prompt named '{name}' to start"));
            }
            None => match &self.program.entry {
                Some(Entry::Flow(name)) => Some(Start::Flow(name)),
                Some(Entry::Agent(name)) => Some(Start::Agent(name)),
                None => None,
            },
        };
        let entry_name = match &entry {
            Some(Start::Flow(name)) => format!("flow {name}"),
            Some(Start::Agent(name)) => format!("agent {name}"),
            Some(Start::Prompt(name)) => format!("prompt {name}"),
            None => "none".to_string(),
        };
        emitter.emit(Payload::RunStarted {
            workload: crate::compile::display_path(&self.program.root),
            entry: entry_name,
            input: input.clone(),
        });
        for (path, warning) in &self.program.warnings {
            let file = crate::compile::display_path(path);
            emitter.emit(Payload::Warning { message: format!("{file}: {} [{}]", warning.message(), warning.code()) });
        }
        for message in self.env.mcp.notices() {
            emitter.emit(Payload::Warning { message });
        }
        let mut vars = self.env.options.vars.clone();
        vars.insert("input_prompt".to_string(), Value::String(input.clone()));
        conversation::start(&mut vars, &history, &input);
        let mut th = Thread::new(vars, emitter.clone());
        th.next_thread = Arc::new(AtomicU32::new(self.next_thread.load(Ordering::Relaxed)));

        let outcome = async {
            self.run_start_handlers(&mut th).await?;
            match entry {
                Some(Start::Flow(name)) => {
                    let result = self.run_flow(&mut th, name).await?;
                    if !result.is_null() {
                        th.emitter.emit(Payload::FlowResult { result: result.clone() });
                    }
                    Ok(result)
                }
                Some(Start::Agent(name)) => self.run_agent(&mut th, name, input.clone(), history).await,
                Some(Start::Prompt(name)) => self.call_llm(&mut th, name, None, None).await,
                None => Err(RunError::failed("No entry point found in workflow: define `flow main` or an agent", None)),
            }
        }
        .await;
        let outcome = match outcome {
            Ok(result) => RunOutcome { status: RunStatus::Completed, result: Some(result), error: None },
            Err(error) if error.kind == ErrorKind::Paused => {
                RunOutcome { status: RunStatus::Paused, result: None, error: Some(error) }
            }
            Err(error) => {
                emitter.emit(Payload::Error { message: error.message.clone(), location: error.location.clone() });
                RunOutcome { status: RunStatus::Failed, result: None, error: Some(error) }
            }
        };
        if let Err(e) = self.env.journal.finish(outcome.status) {
            emitter.emit(Payload::Warning { message: e.to_string() });
        }
        emitter.emit(Payload::RunFinished {
            status: outcome.status,
            result: outcome.result.clone(),
            error: outcome.error.as_ref().map(|e| e.to_string()),
            usage: self.accounts.total(),
        });
        outcome
    }

    /// A run that cannot start.
    /// A run that cannot start: an error and `run_finished`.
    pub(crate) fn refuse(&self, emitter: &Emitter, message: String) -> RunOutcome {
        let error = RunError::failed(message, None);
        emitter.emit(Payload::Error { message: error.message.clone(), location: None });
        emitter.emit(Payload::RunFinished {
            status: RunStatus::Failed,
            result: None,
            error: Some(error.to_string()),
            usage: Default::default(),
        });
        RunOutcome { status: RunStatus::Failed, result: None, error: Some(error) }
    }

    /// `on start` handlers run before the entry point (upstream never calls them).
    async fn run_start_handlers(&self, th: &mut Thread) -> Result<(), RunError> {
        let program = self.program.clone();
        for handler in program.handlers.iter().filter(|h| {
            h.data.timing == sr_hir::Timing::On && h.data.event == sr_hir::Event::Start && h.owner.is_none()
        }) {
            self.run_handler_body(th, &handler.body).await?;
        }
        Ok(())
    }
}
