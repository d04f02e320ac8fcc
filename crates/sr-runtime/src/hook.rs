//! The step hook: called before every flow statement, model call and tool call.
//! The debugger, breakpoints and tracing are implementations of it; the runtime
//! has no debugger-specific branches.

use futures::future::BoxFuture;
use serde_json::Value;
use sr_hir::StmtId;

use crate::compile::{BodySpec, Compiled};
use crate::eval::Vars;
use crate::event::Location;

/// What is about to happen.
#[derive(Debug, Clone, Copy)]
pub enum StepPoint<'a> {
    Statement {
        body: &'a BodySpec,
        stmt: StmtId,
    },
    /// `agent` is about to send `request` (what a debugger shows before it goes).
    ModelCall {
        agent: &'a str,
        request: &'a sr_llm::ChatRequest,
    },
    /// `agent`'s call got `response`, which the agent has not seen yet.
    ModelReply {
        agent: &'a str,
        request: &'a sr_llm::ChatRequest,
        response: &'a sr_llm::ChatResponse,
    },
    /// `agent`'s call is streaming its reply, `partial` so far (nothing yet
    /// before the first byte): the hook interrupted it (see [`StepHook::interrupt`]).
    ModelStreaming {
        agent: &'a str,
        request: &'a sr_llm::ChatRequest,
        partial: &'a str,
    },
    ToolCall {
        tool: &'a str,
        args: &'a Value,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameKind {
    Flow,
    Agent,
    Handler,
}

/// One level of the call stack: a flow, a handler or an agent run.
#[derive(Debug, Clone)]
pub struct Frame {
    pub kind: FrameKind,
    pub name: String,
    /// The body being executed (flows and handlers).
    pub body: Option<BodySpec>,
    /// The statement being executed, or that started the frame below.
    pub stmt: Option<StmtId>,
    pub location: Option<Location>,
    /// The last model request and response of an agent frame, for inspection.
    pub last_exchange: Option<Value>,
}

/// Everything a hook may look at, and the run's variables, which it may change
/// (a debugger's setVariable).
pub struct Step<'a> {
    pub program: &'a Compiled,
    /// 0 for the main thread; each `parallel` branch has its own.
    pub thread: u32,
    /// The thread's name in the journal (`main`, `main/3.1`): the same in
    /// every run served the same values, where `thread` counts branches in
    /// the order they started.
    pub thread_key: &'a str,
    /// Outermost first; the last is where the step happens.
    pub frames: &'a [Frame],
    pub vars: &'a mut Vars,
    pub point: StepPoint<'a>,
    pub location: Option<Location>,
}

/// A failure, reported where it happened: at the failing statement (its
/// innermost one), at the model call that failed for good, or at a tool call
/// whose result is an error.
#[derive(Debug, Clone, Copy)]
pub struct Failure<'a> {
    pub message: &'a str,
    /// Something handles it: an `on failure:` block around the statement, or
    /// (for a tool's error) the model, which gets it as the tool's result.
    pub caught: bool,
}

/// What the run does after the hook returns.
#[derive(Debug, Clone, PartialEq)]
pub enum Control {
    Continue,
    /// Stop the run (the debugger's terminate).
    Terminate,
    /// At a [`StepPoint::ModelCall`], send this request instead (a debugger's
    /// edit of the call); elsewhere the same as `Continue`.
    Replace(Box<sr_llm::ChatRequest>),
    /// At a [`StepPoint::ModelReply`], the agent gets this reply instead; at
    /// a [`StepPoint::ModelCall`], the call is neither sent nor served and
    /// this reply streams as its text (the call's `ModelReply` step follows);
    /// elsewhere the same as `Continue`.
    Reply(Box<sr_llm::ChatResponse>),
    /// Continue, and from this step on the thread's effects are live: the
    /// hook changed what the run knows (a debugger's edit of a variable), so
    /// its journal no longer tells what comes next. `Replace` and `Reply`
    /// fork too.
    Fork,
}

pub trait StepHook: Send + Sync {
    /// Called before the step; the run waits for the returned future (a
    /// debugger stopped at a breakpoint simply does not complete it yet).
    fn on_step<'a>(&'a self, step: Step<'a>) -> BoxFuture<'a, Control>;

    /// Completes when the hook wants `thread` to stop in the middle of a
    /// model call (a debugger's pause); the runtime then calls `on_step` with
    /// [`StepPoint::ModelStreaming`] and keeps the call open until it returns.
    /// Made anew for each wait; the default never completes.
    fn interrupt(&self, _thread: u32) -> BoxFuture<'static, ()> {
        Box::pin(std::future::pending())
    }

    /// A new thread (a `parallel do` branch of `parent`) started or ended.
    fn on_thread(&self, _thread: u32, _parent: u32, _started: bool) {}

    /// Thread `thread_key` reached a served call that the recorded run was
    /// cancelled in (a failed sibling branch, a timeout): it waits there to
    /// be cancelled again and takes no step until then.
    fn on_parked(&self, _thread_key: &str) {}

    /// A failure on the thread, reported once, where it happened (see
    /// [`Failure`]); `step` has the thread's frames and variables as they were.
    fn on_failure<'a>(&'a self, _step: Step<'a>, _failure: Failure<'a>) -> BoxFuture<'a, Control> {
        Box::pin(std::future::ready(Control::Continue))
    }

    /// `escalate to human` at the statement of `step`: the hook's answer, or
    /// `None` to leave the question to the run's [`crate::human::Human`].
    fn on_human<'a>(&'a self, _step: Step<'a>, _message: &'a str) -> BoxFuture<'a, Option<String>> {
        Box::pin(std::future::ready(None))
    }
}

/// The hook of an ordinary run.
pub struct NoHook;

impl StepHook for NoHook {
    fn on_step<'a>(&'a self, _step: Step<'a>) -> BoxFuture<'a, Control> {
        Box::pin(std::future::ready(Control::Continue))
    }
}
